import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import type { TestStudio } from './studio';
import { FIXTURES } from './studio';

/** Fixture documents every parser accepts, with distinct formats, for knowledge bases to push. */
export const PUSH_FIXTURES = [
  'codeblock.md',
  'umlauts-utf8.md',
  'simple-table.md',
  'stanley-cups.csv',
  'fake-memo.pdf',
  'fake.docx',
  'fake-html.html',
  'simple.json',
];

/** A draft listing on `studio` with the given fixtures ingested (offline model), as the studio would. */
export async function listingWithFixtures(
  studio: TestStudio,
  files: string[] = PUSH_FIXTURES,
  chunking: {
    strategy?: 'recursive' | 'fixed' | 'sentence' | 'markdown';
    chunkSize?: number;
    chunkOverlap?: number;
  } = {},
  listingId?: string,
): Promise<string> {
  const services = studio.services;
  const id =
    listingId ??
    services.listings.create(
      { title: 'Pushed handbook', accessModel: 'one_time', price: 1 },
      services.wallets.defaultWallet().address,
    ).id;
  const result = await services.ingestion.run({
    listingId: id,
    inputs: files.map((f) => ({ path: join(FIXTURES, f), name: `docs/${f}` })),
    chunking,
    atomic: false,
    limits: STUDIO_LIMITS,
  });
  const rejected = result.documents.filter((d) => d.status === 'rejected');
  if (rejected.length > 0) throw new Error(`Fixture ingestion rejected ${JSON.stringify(rejected)}`);
  return id;
}

/** An API key of the remote's default wallet: the remote plays the hosted service. */
export function remoteKey(remote: TestStudio): string {
  return remote.services.apiKeys.create(remote.services.wallets.defaultWallet().address).key;
}

/**
 * What the proxy does with one `POST /v1/upload` (numbered from 1): pass it on, answer 503 itself,
 * cut the connection while the body arrives, or pass it on and cut the connection before the answer
 * reaches the client (the remote did accept it: a retry must not duplicate anything).
 */
export type UploadFault = 'pass' | '503' | 'reset' | 'drop-response';

export interface FlakyProxy {
  /** The proxy's `/v1` base URL. */
  url: string;
  /** Uploads seen so far, with what was done to each. */
  uploads: UploadFault[];
  close(): Promise<void>;
}

/** A loopback HTTP proxy in front of `target` that injects faults into chosen uploads. */
export async function flakyProxy(target: string, fault: (n: number) => UploadFault): Promise<FlakyProxy> {
  const upstream = new URL(target);
  const uploads: UploadFault[] = [];
  const server: Server = createServer((req, res) => {
    const isUpload = req.method === 'POST' && req.url === '/v1/upload';
    const action = isUpload ? fault(uploads.length + 1) : 'pass';
    if (isUpload) uploads.push(action);
    if (action === 'reset') {
      let seen = 0;
      req.on('data', (piece: Buffer) => {
        seen += piece.length;
        if (seen > 1024) req.socket.destroy();
      });
      req.on('end', () => req.socket.destroy());
      return;
    }
    if (action === '503') {
      req.resume();
      req.on('end', () => {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' });
        res.end(
          JSON.stringify({
            error: { code: 'internal_error', message: 'Injected outage', status: 503, requestId: 'proxy' },
          }),
        );
      });
      return;
    }
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer: IncomingMessage) => {
        if (action === 'drop-response') {
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => req.socket.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    uploads,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
