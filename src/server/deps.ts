import type { StudioServices } from '../db/services';
import type { RateLimitOptions } from './middleware/rateLimit';

export interface ServerDeps {
  services: StudioServices;
  /**
   * Per-launch secret for /studio. The page this server serves carries it for a browser that opened
   * the studio's link (`/?token=<studioToken>`), see studioSession.ts.
   */
  studioToken: string;
  /** Key of the studio page's browser sessions; default: the data directory's (db/studioSessionKey.ts). */
  studioSessionKey?: Buffer;
  version: string;
  /** Folder of the built renderer (index.html + assets); omitted = API only. */
  rendererDir?: string;
  rateLimits?: Partial<RateLimitOptions>;
  log?: (message: string) => void;
}
