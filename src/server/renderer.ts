import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router } from 'express';
import { StudioSession, withoutLinkToken } from './studioSession';

export const STUDIO_TOKEN_META = 'kbstudio-token';
/** Set on a page opened with a link whose token is not this launch's (a link an earlier launch printed). */
export const STUDIO_LINK_META = 'kbstudio-link';

// Mantine sets inline styles, hence 'unsafe-inline' for styles only; scripts come from this origin alone.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

/**
 * Serves the built studio. index.html carries this launch's studio token as a meta tag only for a
 * browser signed in with the studio's link (see StudioSession); anyone else gets the page without it,
 * and the page says how to open the studio. Only a page of this origin can read what it is served
 * (the browser keeps other origins from reading the response).
 */
export function rendererRouter(
  rendererDir: string | undefined,
  studioToken: string,
  session: StudioSession,
): Router {
  const router = Router();
  const indexFile = rendererDir && join(rendererDir, 'index.html');
  if (!indexFile || !existsSync(indexFile)) {
    router.get('/', (_req, res) => {
      res
        .status(503)
        .type('text/plain')
        .send('The studio UI is not built. Run `npm run build:web` (or `npm run serve`), then reload.');
    });
    return router;
  }
  const page = readFileSync(indexFile, 'utf8');
  const withMeta = (name: string, content: string) =>
    page.replace('</head>', `<meta name="${name}" content="${content}"></head>`);
  const signedInPage = withMeta(STUDIO_TOKEN_META, studioToken);
  const staleLinkPage = withMeta(STUDIO_LINK_META, 'stale');
  const sendIndex: express.RequestHandler = (req, res) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    const given = session.linkToken(req);
    const signedIn = session.signedIn(req);
    if (given !== undefined && (signedIn || session.tokenMatches(given))) {
      // The token leaves the address bar (and the history) at once; the cookie stands for it from now on.
      session.signIn(req, res);
      return res.redirect(303, withoutLinkToken(req.originalUrl));
    }
    if (signedIn) {
      session.signIn(req, res);
      return res.type('html').send(signedInPage);
    }
    res.type('html').send(given === undefined ? page : staleLinkPage);
  };
  router.get('/', sendIndex);
  router.use(express.static(rendererDir, { index: false, immutable: true, maxAge: '1y' }));
  // Client-side routes of the single-page app; never an API path (`/v2/…`, `/v1.1/…`), which gets a JSON 404.
  router.get(/^\/(?!v\d+(?:[./]|$)|studio\/|assets\/).*/, sendIndex);
  return router;
}
