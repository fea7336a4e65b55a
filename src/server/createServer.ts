import type { AddressInfo, Socket } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { answerClientError } from './clientError';
import type { ServerDeps } from './deps';
import { errorHandler, notFoundRoute } from './middleware/errors';
import { requestId } from './middleware/requestId';
import { hostGuard } from './middleware/studioGuard';
import { studioSessionKey } from '../db/studioSessionKey';
import { rendererRouter } from './renderer';
import { studioRouter } from './routes/studio';
import { v1KeyRateLimit, v1Router } from './routes/v1';
import { StudioSession } from './studioSession';

export interface RunningServer {
  url: string;
  port: number;
  host: string;
}

export interface KbServer {
  app: express.Express;
  listen(port?: number, host?: string): Promise<RunningServer>;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export function createServer(deps: ServerDeps): KbServer {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  let server: Server | undefined;
  let allowedHosts: ReadonlySet<string> | undefined;

  app.use(requestId);
  const keyLimit = v1KeyRateLimit(deps);
  app.use('/v1', v1Router(deps, keyLimit));
  // The studio API and its page only answer on the address they were bound to (DNS rebinding).
  const guardHost = hostGuard(() => allowedHosts ?? new Set());
  app.use(
    '/studio',
    (req, res, next) => (allowedHosts ? guardHost(req, res, next) : next()),
    studioRouter(deps),
  );
  app.use(
    (req, res, next) => (allowedHosts ? guardHost(req, res, next) : next()),
    rendererRouter(
      deps.rendererDir,
      deps.studioToken,
      new StudioSession(deps.studioSessionKey ?? studioSessionKey(deps.services.dataDir), deps.studioToken),
    ),
  );
  // Whatever nothing above serves (another API version, a POST outside /v1): the JSON 404 of the API.
  app.use(notFoundRoute);
  app.use(errorHandler(deps.log, deps.services.dataDir));

  return {
    app,
    listen(port = 0, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        const s = app.listen(port, host);
        s.on('clientError', (err: Error, socket: Socket) => {
          answerClientError(err, socket, keyLimit, s).catch(() => socket.destroy());
        });
        s.once('error', reject);
        s.once('listening', () => {
          server = s;
          const actual = (s.address() as AddressInfo).port;
          const urlHost = host.includes(':') ? `[${host}]` : host;
          allowedHosts = LOOPBACK.has(host)
            ? new Set([`127.0.0.1:${actual}`, `localhost:${actual}`, `[::1]:${actual}`])
            : undefined; // bound to a non-loopback address on purpose: any Host may reach it.
          resolve({ url: `http://${urlHost}:${actual}`, port: actual, host });
        });
      });
    },
    close() {
      return new Promise((resolve, reject) => {
        if (!server) return resolve();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
