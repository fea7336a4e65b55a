import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { get, request, type IncomingMessage } from 'node:http';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface UploadResponse {
  status: number;
  body: unknown;
}

/**
 * POST /v1/upload with a multipart body streamed from disk: the `config` part, then the archive as a
 * `files` part read in chunks, so neither side of the benchmark holds the archive in memory.
 */
export async function postUpload(
  url: string,
  apiKey: string,
  archive: string,
  config: object,
): Promise<UploadResponse> {
  const boundary = `----kbs-bench-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="config"\r\n\r\n${JSON.stringify(config)}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${basename(archive)}"\r\n` +
      'Content-Type: application/zip\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const { size } = await stat(archive);
  async function* body() {
    yield head;
    yield* createReadStream(archive, { highWaterMark: 1024 * 1024 });
    yield tail;
  }

  const req = request(`${url}/v1/upload`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${apiKey}`,
      'Content-Type': `multipart/form-data; boundary=${boundary}`,
      'Content-Length': head.length + size + tail.length,
    },
  });
  const response = new Promise<UploadResponse>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => resolve(readResponse(res)));
  });
  // A refusal (413, 415) may come before the whole body is sent; the answer matters, not the broken pipe.
  const sent = pipeline(Readable.from(body()), req).catch(() => undefined);
  const answer = await response;
  await sent;
  return answer;
}

/**
 * GET a JSON resource on a new connection each time. A kept-alive connection can be reset when the
 * server's event loop was busy past its keep-alive timeout, which is a finding, not a reason to stop.
 */
export async function getJson<T>(url: string, apiKey: string): Promise<T> {
  const res = await new Promise<IncomingMessage>((resolve, reject) =>
    get(url, { agent: false, headers: { Authorization: `Bearer ${apiKey}` } }, resolve).once('error', reject),
  );
  const { status, body } = await readResponse(res);
  if (status !== 200) throw new Error(`GET ${url} answered ${status}: ${JSON.stringify(body)}`);
  return body as T;
}

/** POST a JSON body on a new connection (as getJson), whatever the answer's status. */
export async function postJson(url: string, apiKey: string, body: unknown): Promise<UploadResponse> {
  const payload = Buffer.from(JSON.stringify(body));
  const req = request(url, {
    method: 'POST',
    agent: false,
    headers: {
      Authorization: `Bearer ${apiKey}`,
      'Content-Type': 'application/json',
      'Content-Length': payload.length,
    },
  });
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    req.once('error', reject).once('response', resolve);
    req.end(payload);
  });
  return readResponse(res);
}

async function readResponse(res: IncomingMessage): Promise<UploadResponse> {
  const parts: Buffer[] = [];
  for await (const part of res) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  try {
    return { status: res.statusCode ?? 0, body: JSON.parse(text) as unknown };
  } catch {
    return { status: res.statusCode ?? 0, body: text };
  }
}
