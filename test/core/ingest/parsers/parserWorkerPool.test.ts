import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ParserWorkerFailure, ParserWorkerPool } from '../../../../src/core/ingest/parsers/parserWorkerPool';
import { tempDir } from '../../../helpers/studio';

// A stand-in parser: answers with the text of the bytes, the thread that read them and when it began;
// "hang" never answers (its thread spins), "sleep" never answers (its thread waits, using no CPU time),
// "silent" answers nothing and goes on, "crash" ends the thread, "busy N" keeps the thread busy for N ms
// first.
const WORKER = `
import { parentPort, threadId } from 'node:worker_threads';
parentPort.on('message', ({ id, data, suffix }) => {
  const startedAt = Date.now();
  const text = new TextDecoder().decode(data);
  if (text === 'hang') for (;;);
  if (text === 'sleep') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  if (text === 'silent') return;
  if (text === 'crash') process.exit(3);
  if (text.startsWith('busy ')) {
    const end = Date.now() + Number(text.slice(5));
    while (Date.now() < end);
  }
  parentPort.postMessage({ id, ok: true, text: text + suffix, threadId, startedAt });
});
`;

interface Echo {
  text: string;
  threadId: number;
  startedAt: number;
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

async function read(
  pool: ParserWorkerPool,
  text: string,
  timeoutMs = 10_000,
  signal?: AbortSignal,
): Promise<Echo> {
  const reply = await pool.read<Echo>(bytes(text), { suffix: '!' }, timeoutMs, { signal });
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

  // Where a worker's CPU time can be read (Linux), the limit counts it: a worker starved of CPU time gets
  // up to four times the limit, and one that waits without working is stopped then.
  it.skipIf(!existsSync('/proc/thread-self'))(
    'gives a worker that has had little CPU time more of the clock, up to four times its limit',
    async () => {
      const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 1 });
      await read(pool, 'warm');
      const started = performance.now();
      const failure = await pool.read(bytes('sleep'), {}, 200).catch((error: unknown) => error);
      expect((failure as ParserWorkerFailure).reason).toBe('timeout');
      // 800 ms, less the timers' rounding.
      expect(performance.now() - started).toBeGreaterThanOrEqual(750);
      expect((await read(pool, 'next')).text).toBe('next!');
    },
  );

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

  describe('with depth', () => {
    /** Keeps this thread busy, as the ingestion's chunking and embedding do between two answers. */
    const hold = (ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end);
    };

    it('sends a worker its next file before it has answered the last, so it does not wait for this thread', async () => {
      const gapOf = async (depth: number) => {
        const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 1, depth });
        await read(pool, 'warm');
        const first = read(pool, 'busy 50');
        const second = read(pool, 'second');
        hold(1_000);
        const [a, b] = await Promise.all([first, second]);
        return b.startedAt - a.startedAt;
      };
      // Without depth the second file waits until this thread handles the first answer, after the hold.
      expect(await gapOf(1)).toBeGreaterThanOrEqual(900);
      expect(await gapOf(2)).toBeLessThan(700);
    });

    it('sends again, to a fresh worker, the files behind one that ran out of time or stopped the worker', async () => {
      const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 1, depth: 3 });
      const before = await read(pool, 'first');
      const results = await Promise.allSettled([
        read(pool, 'hang', 300),
        read(pool, 'x'),
        read(pool, 'crash'),
        read(pool, 'y'),
      ]);
      const [hang, x, crash, y] = results;
      expect(hang.status === 'rejected' && (hang.reason as ParserWorkerFailure).reason).toBe('timeout');
      expect(crash.status === 'rejected' && (crash.reason as ParserWorkerFailure).reason).toBe('exit');
      expect(x.status === 'fulfilled' && x.value.text).toBe('x!');
      expect(y.status === 'fulfilled' && y.value.text).toBe('y!');
      const threads = [x, y].map((r) => (r.status === 'fulfilled' ? r.value.threadId : 0));
      expect(new Set([before.threadId, ...threads]).size).toBe(3);
    });

    it('refuses a file dropped without an answer once the worker answers the next', async () => {
      const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 1, depth: 2 });
      const [silent, next] = await Promise.allSettled([read(pool, 'silent'), read(pool, 'next')]);
      expect(silent.status === 'rejected' && (silent.reason as ParserWorkerFailure).message).toMatch(
        /gave no answer/,
      );
      expect(next.status === 'fulfilled' && next.value.text).toBe('next!');
    });

    it('on abort, drops the answer of a file not begun and keeps the worker; stops the file being read and sends the rest again', async () => {
      const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 1, depth: 3 });
      const first = new AbortController();
      const reason = new Error('cancelled by the user');
      const busy = read(pool, 'busy 200');
      const dropped = read(pool, 'dropped', 10_000, first.signal).catch((e: unknown) => e);
      const kept = read(pool, 'kept');
      first.abort(reason);
      expect(await dropped).toBe(reason);
      const [a, b] = await Promise.all([busy, kept]);
      expect(b.text).toBe('kept!');
      expect(b.threadId).toBe(a.threadId);

      const second = new AbortController();
      const hang = read(pool, 'hang', 10_000, second.signal).catch((e: unknown) => e);
      // Sent to the worker behind the file being read.
      const behind = read(pool, 'behind');
      second.abort(reason);
      expect(await hang).toBe(reason);
      const after = await behind;
      expect(after.text).toBe('behind!');
      expect(after.threadId).not.toBe(a.threadId);
    });

    it('sends a file over a megabyte only to an idle worker', async () => {
      const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 1, depth: 2 });
      await read(pool, 'warm');
      const large = `busy 0${' '.repeat(1024 * 1024)}`;
      const first = read(pool, 'busy 50');
      const second = read(pool, large);
      hold(1_000);
      const [a, b] = await Promise.all([first, second]);
      expect(b.startedAt - a.startedAt).toBeGreaterThanOrEqual(900);
    });

    it('sends a worker no more files than it may read before it is replaced', async () => {
      const pool = new ParserWorkerPool(script, { maxMemoryMb: 64, size: 1, depth: 3, maxFilesPerWorker: 2 });
      const [a, b, c] = await Promise.all([read(pool, 'a'), read(pool, 'b'), read(pool, 'c')]);
      expect(b.threadId).toBe(a.threadId);
      expect(c.threadId).not.toBe(a.threadId);
    });
  });
});
