import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { workerStart } from '../../../src/core/workers/workerScript';

describe('workerStart', () => {
  it('starts a plain JavaScript worker as it is', () => {
    const script = new URL('file:///app/out/main/htmlWorker.mjs');
    expect(workerStart(script)).toEqual({ file: script });
  });

  it('starts a TypeScript worker through the tsx bootstrap, which runs it with its TypeScript imports', async () => {
    const script = new URL('../../../src/core/ingest/parsers/htmlWorker.ts', import.meta.url);
    const start = workerStart(script);
    expect(start.file.pathname).toMatch(/\/src\/core\/workers\/tsWorkerBootstrap\.mjs$/);
    expect(start.workerData).toEqual({ tsWorkerEntry: script.href });
    // As the parser pools start it: without the test runner's loaders.
    const worker = new Worker(start.file, { workerData: start.workerData, execArgv: [] });
    try {
      const reply = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage({ id: 1, data: new TextEncoder().encode('<title>T</title><h2>B</h2><p>x</p>') });
      });
      expect(reply).toEqual({
        id: 1,
        ok: true,
        sections: [{ text: 'B\n\nx', metadata: { headings: ['B'] } }],
        metadata: { title: 'T' },
      });
    } finally {
      await worker.terminate();
    }
  });
});
