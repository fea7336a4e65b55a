import express from 'express';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { JobRows } from '../../src/shared/jobRows';
import { streamJobEvents, type StreamableJobs } from '../../src/server/jobEvents';

interface FakeJob {
  state: string;
  stage: string;
  done: number;
  files?: { source: string; stage: string }[];
}

/** A job whose events the test fires itself, through the real SSE route over loopback. */
async function followFakeJob(
  fire: (emit: (type: 'progress' | 'done', job: FakeJob) => void) => Promise<void>,
  rows?: 'files',
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
  app.get('/events', (req, res) => streamJobEvents(jobs, 'job_1', req, res, (job) => [job.stage], rows));
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

  it('sends the files as what changed since the last event, which the page puts back together', async () => {
    const emitted = new Map<string, FakeJob>();
    const events = await followFakeJob(async (emit) => {
      const files: { source: string; stage: string }[] = [];
      const send = (type: 'progress' | 'done', job: FakeJob) => {
        emitted.set(`${type}:${job.done}`, structuredClone(job));
        emit(type, job);
      };
      for (let i = 1; i <= 2000; i++) {
        if (files.length > 0) files.at(-1)!.stage = 'processed';
        files.push({ source: `docs/${i}.md`, stage: 'reading' });
        send('progress', { state: 'running', stage: i % 2 ? 'reading' : 'parsing', done: i, files });
        if (i % 400 === 0) await new Promise((resolve) => setTimeout(resolve, 120));
      }
      send('done', { state: 'done', stage: 'done', done: 2000, files });
    }, 'files');
    const rows = new JobRows();
    const progress = events.filter((e) => e.event === 'progress');
    expect(progress.length).toBeGreaterThan(5);
    for (const [i, { event, job }] of events.entries()) {
      const sent = job as unknown as { files?: unknown; delta?: { files: { changed: unknown[] } } };
      if (event === 'progress') {
        expect(sent.files).toBeUndefined();
        // The first event lists the files there were; the others, few more than the files added since.
        if (i > 0) expect(sent.delta!.files.changed.length).toBeLessThanOrEqual(2 + 400 * 2);
      }
      const rebuilt = rows.apply(job as never) as unknown as FakeJob;
      // The snapshot sent is the one emitted last before it (the first is the job's own get()).
      const expected =
        i === 0 ? { state: 'running', stage: 'queued', done: 0 } : emitted.get(`${event}:${job.done}`);
      expect(rebuilt).toEqual(expected);
    }
    expect(events.at(-1)!.event).toBe('done');
    // In all, each file was sent about twice (added, then processed), not once per event.
    const entries = progress.reduce(
      (n, e) =>
        n + ((e.job as { delta?: { files: { changed: unknown[] } } }).delta?.files.changed.length ?? 0),
      0,
    );
    expect(entries).toBeLessThanOrEqual(2 * 2000 + progress.length);
  });
});
