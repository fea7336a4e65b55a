import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { BACKGROUND_NICE, backgroundWorker } from '../../../src/core/workers/backgroundPriority';
import { openServices } from '../../../src/db/services';
import { FIXTURES, tempDir } from '../../helpers/studio';

/** A worker that answers with its own thread's nice value, read from /proc (field 19 of its stat). */
const REPORTS_ITS_NICE = `
  const { parentPort } = require('node:worker_threads');
  const { readFileSync } = require('node:fs');
  const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ');
  parentPort.postMessage(Number(fields[16]));
`;

async function niceOf(worker: Worker): Promise<number> {
  try {
    return await new Promise<number>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

const threadNice = (tid: number) =>
  Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);

describe.skipIf(!existsSync('/proc/thread-self'))('backgroundWorker (Linux)', () => {
  it("starts the worker's thread at background priority and leaves the creating thread's as it was", async () => {
    const before = threadNice(process.pid);
    const nice = await niceOf(backgroundWorker(() => new Worker(REPORTS_ITS_NICE, { eval: true })));
    expect(nice).toBe(Math.min(19, before + BACKGROUND_NICE));
    expect(nice).toBeGreaterThan(before);
    expect(threadNice(process.pid)).toBe(before);
  });

  it('leaves a worker started without it at the priority of the thread that created it', async () => {
    expect(await niceOf(new Worker(REPORTS_ITS_NICE, { eval: true }))).toBe(threadNice(process.pid));
  });

  it("runs an ingestion's parsers and commit below the server's thread", async () => {
    const dir = tempDir();
    const services = openServices(join(dir.path, 'data'));
    try {
      const server = threadNice(process.pid);
      const listingId = services.listings.create(
        { title: 'Nice', accessModel: 'one_time', price: 1 },
        services.wallets.defaultWallet().address,
      ).id;
      // The threads of this process below the server's priority, at their most during the ingestion.
      let most = 0;
      const sample = () => {
        const lower = readdirSync('/proc/self/task').filter((tid) => {
          try {
            return threadNice(Number(tid)) === Math.min(19, server + BACKGROUND_NICE);
          } catch {
            return false; // Ended meanwhile.
          }
        });
        most = Math.max(most, lower.length);
      };
      const sampling = setInterval(sample, 2);
      await services.ingestion.run({
        listingId,
        inputs: ['codeblock.md', 'fake-html.html', 'fake-memo.pdf', 'simple.docx', 'stanley-cups.csv'].map(
          (name) => ({ path: join(FIXTURES, name) }),
        ),
        atomic: true,
        limits: STUDIO_LIMITS,
        onProgress: sample,
      });
      clearInterval(sampling);
      sample();
      // The Markdown, HTML, PDF, DOCX and CSV workers (kept for their next files), and the commit's.
      expect(most).toBeGreaterThanOrEqual(5);
      expect(threadNice(process.pid)).toBe(server);
    } finally {
      services.close();
      dir.remove();
    }
  });
});
