import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Hit {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** ms since the server started, when the request arrived. */
  at: number;
}

export interface LocalServer {
  /** The origin plus `/v1`, as a client's baseUrl. */
  baseUrl: string;
  hits: Hit[];
  /** Resolves when the client closed request `n` (0-based) before the response ended. */
  clientGone(n: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A small HTTP server on loopback that answers as `handle` says: wrong statuses, silence, cut
 * connections. It records every request and notices when the client hangs up early.
 */
export async function localServer(
  handle: (req: IncomingMessage, res: ServerResponse, n: number) => void | Promise<void>,
): Promise<LocalServer> {
  const started = performance.now();
  const hits: Hit[] = [];
  const gone = new Map<number, { promise: Promise<void>; resolve: () => void }>();
  const goneOf = (n: number) => {
    if (!gone.has(n)) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      gone.set(n, { promise, resolve });
    }
    return gone.get(n)!;
  };
  const server = createServer(async (req, res) => {
    const n = hits.length;
    const hit: Hit = {
      method: req.method!,
      url: req.url!,
      headers: req.headers,
      body: Buffer.alloc(0),
      at: performance.now() - started,
    };
    hits.push(hit);
    res.on('close', () => {
      if (!res.writableEnded) goneOf(n).resolve();
    });
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    hit.body = Buffer.concat(parts);
    await handle(req, res, n);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    hits,
    clientGone: (n) => goneOf(n).promise,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with the §2 error body for `status`. */
export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${status}`, ...headers });
  res.end(
    JSON.stringify({ error: { code, message: `${code} happened`, status, requestId: `req_${status}` } }),
  );
}

export function sendJson(res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** What `promise` rejects with; fails the test when it resolves. */
export async function failure(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}
