import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router } from 'express';

export const STUDIO_TOKEN_META = 'kbstudio-token';

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
 * Serves the built studio. index.html gets this launch's studio token as a meta tag: only a page
 * loaded from this origin can read it (the browser keeps other origins from reading the response).
 */
export function rendererRouter(rendererDir: string | undefined, studioToken: string): Router {
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
  const html = readFileSync(indexFile, 'utf8').replace(
    '</head>',
    `<meta name="${STUDIO_TOKEN_META}" content="${studioToken}"></head>`,
  );
  const sendIndex: express.RequestHandler = (_req, res) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type('html').send(html);
  };
  router.get('/', sendIndex);
  router.use(express.static(rendererDir, { index: false, immutable: true, maxAge: '1y' }));
  // Client-side routes of the single-page app.
  router.get(/^\/(?!v1\/|studio\/|assets\/).*/, sendIndex);
  return router;
}
