import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ParserWorkerFailure, ParserWorkerPool } from '../../../../src/core/ingest/parsers/parserWorkerPool';
import { tempDir } from '../../../helpers/studio';

// A stand-in parser: answers with the text of the bytes and the thread that read them; "hang" never
// answers, "crash" ends the thread, "busy N" keeps the thread busy for N ms first.
const WORKER = `
import { parentPort, threadId } from 'node:worker_threads';
parentPort.on('message', ({ id, data, suffix }) => {
  const text = new TextDecoder().decode(data);
  if (text === 'hang') return;
  if (text === 'crash') process.exit(3);
  if (text.startsWith('busy ')) {
    const end = Date.now() + Number(text.slice(5));
    while (Date.now() < end);
  }
  parentPort.postMessage({ id, ok: true, text: text + suffix, threadId });
});
`;

interface Echo {
  text: string;
  threadId: number;
}

let dir: ReturnType<typeof tempDir>;
let script: URL;
beforeAll(() => {
  dir = tempDir();
  const path = join(dir.path, 'echoWorker.mjs');
  writeFileSync(path, WORKER);
  script = pathToFileURL(path);
});
afterAll(() => dir.remove());

const bytes = (text: string) => new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>;

async function read(pool: ParserWorkerPool, text: string, timeoutMs = 10_000): Promise<Echo> {
  const reply = await pool.read<Echo>(bytes(text), { suffix: '!' }, timeoutMs);
  if (!reply.ok) throw new Error(reply.message);
  return reply;
}

describe('ParserWorkerPool', () => {
  it('answers each file with its own result, on at most `size` reused workers', async () => {
    const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 2 });
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => read(pool, `file ${i}`)));
    expect(replies.map((r) => r.text)).toEqual(Array.from({ length: 6 }, (_, i) => `file ${i}!`));
    expect(new Set(replies.map((r) => r.threadId)).size).toBeLessThanOrEqual(2);
    const again = await read(pool, 'later');
    expect(replies.map((r) => r.threadId)).toContain(again.threadId);
  });

  it('replaces a worker after maxFilesPerWorker files and after a large file', async () => {
    const pool = new ParserWorkerPool(script, {
      maxMemoryMb: 64,
      size: 1,
      maxFilesPerWorker: 2,
      retireAfterBytes: 100,
    });
    const first = await read(pool, 'a');
    const second = await read(pool, 'b');
    const third = await read(pool, 'c');
    expect(second.threadId).toBe(first.threadId);
    expect(third.threadId).not.toBe(first.threadId);
    const large = await read(pool, 'x'.repeat(200));
    const after = await read(pool, 'd');
    expect(large.threadId).toBe(third.threadId);
    expect(after.threadId).not.toBe(large.threadId);
  });

  it('refuses a file that runs out of time and reads the next one on a fresh worker', async () => {
    const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 1 });
    const before = await read(pool, 'a');
    const failure = await pool.read(bytes('hang'), {}, 200).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ParserWorkerFailure);
    expect((failure as ParserWorkerFailure).reason).toBe('timeout');
    const after = await read(pool, 'b');
    expect(after.text).toBe('b!');
    expect(after.threadId).not.toBe(before.threadId);
  });

  it('refuses the file of a worker that stops, and carries on', async () => {
    const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 1 });
    const failure = await pool.read(bytes('crash'), {}, 10_000).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ParserWorkerFailure);
    expect((failure as ParserWorkerFailure).message).toMatch(/stopped unexpectedly \(exit code 3\)/);
    expect((await read(pool, 'next')).text).toBe('next!');
  });

  it('sends lower ranks first and asks for the time limit when a worker takes the file', async () => {
    const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 1 });
    const order: string[] = [];
    const track = (text: string, options: { rank?: number } = {}, limit: () => number = () => 10_000) =>
      pool.read<Echo>(bytes(text), { suffix: '' }, limit, options).then((reply) => {
        order.push(reply.ok ? reply.text : reply.message);
      });
    const busyDone = track('busy 300');
    const documentRank = pool.newRank();
    let askedAt = 0;
    const later = track('later');
    // Asked at dispatch: had the 300 ms of waiting counted, a 100 ms limit would have run out.
    const piece = track('piece', { rank: documentRank }, () => {
      askedAt = performance.now();
      return 100;
    });
    const queuedAt = performance.now();
    await Promise.all([busyDone, later, piece]);
    expect(order).toEqual(['busy 300', 'piece', 'later']);
    expect(askedAt - queuedAt).toBeGreaterThan(200);
  });

  it('on abort, drops a queued file, stops a running one and carries on with the rest', async () => {
    const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 1 });
    const before = await read(pool, 'first');
    const controller = new AbortController();
    const running = pool
      .read(bytes('hang'), {}, 10_000, { signal: controller.signal })
      .catch((e: unknown) => e);
    const queued = pool
      .read(bytes('queued'), {}, 10_000, { signal: controller.signal })
      .catch((e: unknown) => e);
    const other = read(pool, 'other');
    const reason = new Error('cancelled by the user');
    controller.abort(reason);
    expect(await running).toBe(reason);
    expect(await queued).toBe(reason);
    const after = await other;
    expect(after.text).toBe('other!');
    expect(after.threadId).not.toBe(before.threadId);
    const late = await pool
      .read(bytes('late'), {}, 10_000, { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(late).toBe(reason);
  });
});
