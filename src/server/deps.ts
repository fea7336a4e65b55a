import type { StudioServices } from '../db/services';
import type { RateLimitOptions } from './middleware/rateLimit';

export interface ServerDeps {
  services: StudioServices;
  /** Per-launch secret for /studio; the page this server serves receives it. */
  studioToken: string;
  version: string;
  /** Folder of the built renderer (index.html + assets); omitted = API only. */
  rendererDir?: string;
  rateLimits?: Partial<RateLimitOptions>;
  log?: (message: string) => void;
}
