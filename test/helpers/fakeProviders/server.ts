import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the fake provider received it, body parsed as JSON. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** JSON-encoded unless a string. */
  body?: unknown;
}

/** A scripted answer for the next request: a reply, or 'hang' to never answer (a timeout). */
export type Scripted = Reply | 'hang';

export interface FakeServer {
  /** http://127.0.0.1:<port> */
  url: string;
  requests: RecordedRequest[];
  /** Answers the next requests with these, in order, before falling back to the normal behaviour. */
  script(...replies: Scripted[]): void;
  /** The most requests it has held at once (received, not answered yet). */
  readonly mostAtOnce: number;
  close(): Promise<void>;
}

/** A local HTTP server on 127.0.0.1 (port 0) that records every request and answers with `answer`. */
export async function startFakeServer(
  answer: (req: RecordedRequest) => Reply,
  {
    delayMs = 0,
  }: {
    /** Answers this long after each request, as a remote API's round trip takes. */ delayMs?: number;
  } = {},
): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const queue: Scripted[] = [];
  let atOnce = 0;
  let mostAtOnce = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Kept as text; the fake provider answers 400 to it.
      }
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const reply = queue.shift() ?? answer(recorded);
      if (reply === 'hang') return;
      mostAtOnce = Math.max(mostAtOnce, ++atOnce);
      const payload = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
      setTimeout(() => {
        atOnce--;
        res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
        res.end(payload);
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...replies) => void queue.push(...replies),
    get mostAtOnce() {
      return mostAtOnce;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The vector a fake provider returns for a text: deterministic, different for every text, of unit
 * length. Tests compare an embedder's output with it to check each vector landed at its text.
 */
export function fakeVector(text: string, dimensions: number): Float32Array {
  const seed = createHash('sha256').update(text).digest();
  let state = seed.readUInt32LE(0) || 1;
  const v = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    v[i] = ((state >>> 0) / 0xffffffff) * 2 - 1;
  }
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}
