import express from 'express';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { streamJobEvents, type StreamableJobs } from '../../src/server/jobEvents';

interface FakeJob {
  state: string;
  stage: string;
  done: number;
}

/** A job whose events the test fires itself, through the real SSE route over loopback. */
async function followFakeJob(
  fire: (emit: (type: 'progress' | 'done', job: FakeJob) => void) => Promise<void>,
) {
  let listener: ((event: { type: 'progress' | 'done'; job: FakeJob }) => void) | undefined;
  const jobs: StreamableJobs<FakeJob> = {
    get: () => ({ state: 'running', stage: 'queued', done: 0 }),
    cancel: () => {
      throw new Error('not used');
    },
    dismiss: () => {
      throw new Error('not used');
    },
    subscribe: (_id, l) => {
      listener = l;
      return () => (listener = undefined);
    },
  };
  const app = express();
  app.get('/events', (req, res) => streamJobEvents(jobs, 'job_1', req, res, (job) => [job.stage]));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/events`);
    const text = res.text();
    while (!listener) await new Promise((resolve) => setTimeout(resolve, 5));
    await fire((type, job) => listener!({ type, job }));
    return [...(await text).matchAll(/event: (\w+)\ndata: (.*)\n\n/g)].map(([, event, data]) => ({
      event: event!,
      job: JSON.parse(data!) as FakeJob,
    }));
  } finally {
    server.close();
  }
}

describe('job progress events', () => {
  it('sends a burst of progress as a few snapshots, each new stage at once, then done', async () => {
    const stages = ['reading', 'parsing', 'chunking', 'embedding'];
    const events = await followFakeJob(async (emit) => {
      for (let i = 1; i <= 6000; i++) {
        emit('progress', { state: 'running', stage: stages[i % 4]!, done: i });
        // A few pauses longer than the interval, as a real job has between files.
        if (i % 2000 === 0) await new Promise((resolve) => setTimeout(resolve, 150));
      }
      emit('progress', { state: 'running', stage: 'storing', done: 6000 });
      emit('done', { state: 'done', stage: 'done', done: 6000 });
    });
    const progress = events.filter((e) => e.event === 'progress');
    expect(events.at(-1)).toEqual({ event: 'done', job: { state: 'done', stage: 'done', done: 6000 } });
    expect(new Set(progress.map((e) => e.job.stage))).toEqual(new Set(['queued', ...stages, 'storing']));
    // The first snapshot, each stage once, and what the pauses let out: not 6,002.
    expect(progress.length).toBeLessThan(20);
    // Never an older snapshot after a newer one.
    const counts = progress.map((e) => e.job.done);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
  });

  it('sends the newest pending snapshot once the interval has passed', async () => {
    const events = await followFakeJob(async (emit) => {
      emit('progress', { state: 'running', stage: 'reading', done: 1 });
      emit('progress', { state: 'running', stage: 'reading', done: 2 });
      emit('progress', { state: 'running', stage: 'reading', done: 3 });
      await new Promise((resolve) => setTimeout(resolve, 250));
      emit('done', { state: 'done', stage: 'done', done: 3 });
    });
    expect(events.map((e) => [e.event, e.job.done])).toEqual([
      ['progress', 0],
      ['progress', 1],
      ['progress', 3],
      ['done', 3],
    ]);
  });
});
