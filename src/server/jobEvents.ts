import type { Request, Response } from 'express';

/** What a studio job queue (ingestion, push) offers a progress stream. */
export interface StreamableJobs<Job extends { state: string }> {
  get(id: string): Job;
  subscribe(id: string, listener: (event: { type: 'progress' | 'done'; job: Job }) => void): () => void;
}

/**
 * A job's progress as server-sent events: `progress` events carry the job snapshot and the last one,
 * `done`, the finished job. A job already finished gets its `done` at once; a client that goes away
 * stops listening. Throws (before anything is written) when there is no such job.
 */
export function streamJobEvents<Job extends { state: string }>(
  jobs: StreamableJobs<Job>,
  id: string,
  req: Request,
  res: Response,
): void {
  const first = jobs.get(id);
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  const send = (type: 'progress' | 'done', job: Job) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify(job)}\n\n`);
  if (first.state !== 'running') {
    send('done', first);
    res.end();
    return;
  }
  send('progress', first);
  const off = jobs.subscribe(id, (event) => {
    send(event.type, event.job);
    if (event.type === 'done') res.end();
  });
  req.on('close', off);
}
