import type { Request, Response } from 'express';
import { z } from 'zod';
import type { defineRoutes } from './route';

/** What a studio job queue (ingestion, push) offers a progress stream. */
export interface StreamableJobs<Job extends { state: string }> {
  get(id: string): Job;
  cancel(id: string): Job;
  /** Forgets the report of a job a stop interrupted; throws for a job of this launch. */
  dismiss(id: string): Job;
  /** `job` may be the live snapshot: read during the call, or serialised at once (as streamJobEvents does). */
  subscribe(id: string, listener: (event: { type: 'progress' | 'done'; job: Job }) => void): () => void;
}

/** Progress events go out at most this often, the newest snapshot winning (a page draws one a frame). */
const PROGRESS_EVERY_MS = 100;

/**
 * A job's progress as server-sent events: `progress` events carry the job snapshot and the last one,
 * `done`, the finished job. A job already finished gets its `done` at once; a client that goes away
 * stops listening. Throws (before anything is written) when there is no such job.
 *
 * Progress is sent at most every PROGRESS_EVERY_MS, except that a snapshot showing a label not seen
 * yet in this stream (`labelsOf`: a stage, a part's state) goes out at once, so every stage a job passes
 * through is seen. Each event is serialised when it is sent (the jobs hand over their live snapshot,
 * not a copy per change).
 *
 * With `rows` (an array of flat entries: an ingestion's `files`), a `progress` event carries that array
 * as a change since the stream's previous event: `delta: { files: { length, changed: [[index, entry]] } }`
 * in place of `files` (the first event holds every entry; `done` is the whole snapshot again). Whole
 * snapshots of a 7,085-file ingestion were about 400 KB an event, written by the server's thread and
 * parsed by the page's; the job of one file changes one or two entries.
 */
export function streamJobEvents<Job extends { state: string }>(
  jobs: StreamableJobs<Job>,
  id: string,
  req: Request,
  res: Response,
  labelsOf: (job: Job) => readonly string[] = () => [],
  rows?: keyof Job & string,
): void {
  const first = jobs.get(id);
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  const sent: Record<string, unknown>[] = [];
  /** The job with its `rows` as the change since the last event sent (see above). */
  const withDelta = (job: Job) => {
    const entries = job[rows!] as Record<string, unknown>[] | undefined;
    if (!Array.isArray(entries)) return job;
    const changed: [number, Record<string, unknown>][] = [];
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const before = sent[i];
      if (before && sameEntry(entry, before)) continue;
      changed.push([i, entry]);
      sent[i] = { ...entry };
    }
    sent.length = entries.length;
    return { ...job, [rows!]: undefined, delta: { [rows!]: { length: entries.length, changed } } };
  };
  const send = (type: 'progress' | 'done', job: Job) =>
    res.write(
      `event: ${type}\ndata: ${JSON.stringify(type === 'progress' && rows ? withDelta(job) : job)}\n\n`,
    );
  if (first.state !== 'running') {
    send('done', first);
    res.end();
    return;
  }
  const seen = new Set<string>();
  const showsNew = (job: Job) => {
    let fresh = false;
    for (const label of labelsOf(job)) {
      if (seen.has(label)) continue;
      seen.add(label);
      fresh = true;
    }
    return fresh;
  };
  showsNew(first);
  send('progress', first);
  let pending: Job | undefined;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (pending) send('progress', pending);
    pending = undefined;
  };
  const off = jobs.subscribe(id, (event) => {
    if (event.type === 'done') {
      pending = undefined;
      flush();
      send('done', event.job);
      res.end();
      return;
    }
    pending = event.job;
    if (showsNew(event.job)) flush();
    else timer ??= setTimeout(flush, PROGRESS_EVERY_MS);
  });
  req.on('close', () => {
    off();
    clearTimeout(timer);
  });
}

/** Two flat entries with the same values (an entry's values are strings, numbers, booleans or null). */
function sameEntry(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

export interface JobRoutesOptions<Job> {
  /** Where the job lives: `<path>/:id`, `<path>/:id/events`, `<path>/:id/cancel`, `<path>/:id/dismiss`. */
  path: string;
  /** "An ingestion job", "A push job". */
  noun: string;
  /** What the snapshot holds, for the documentation. */
  snapshot: string;
  /** What the last event carries, for the documentation. */
  outcome: string;
  cancelSummary: string;
  dismissSummary: string;
  tags: string[];
  /** What a snapshot shows that its page must see at least once (streamJobEvents). */
  labelsOf?: (job: Job) => readonly string[];
  /** An array of flat entries that progress events carry as changes (streamJobEvents). */
  rows?: keyof Job & string;
}

const IdParams = z.object({ id: z.string().min(1).max(100) });

/**
 * The routes every studio job kind offers: its snapshot, its event stream, cancel, and dismissing the
 * report of one a stop interrupted.
 */
export function jobRoutes<Job extends { state: string }>(
  route: ReturnType<typeof defineRoutes>,
  jobs: StreamableJobs<Job>,
  o: JobRoutesOptions<Job>,
): void {
  route({
    method: 'get',
    path: `${o.path}/:id`,
    summary: `${o.noun}: ${o.snapshot}`,
    tags: o.tags,
    params: IdParams,
    response: { status: 200, description: 'OK' },
    errors: [404],
    handler: ({ params }) => ({ data: jobs.get(params.id) }),
  });
  route({
    method: 'get',
    path: `${o.path}/:id/events`,
    summary: `${o.noun}'s progress as server-sent events`,
    description:
      `\`progress\` events carry the job snapshot; the last event is \`done\`, with ${o.outcome}.` +
      (o.rows
        ? ` A \`progress\` event carries \`${o.rows}\` as what changed since the stream's previous event: \`delta: { ${o.rows}: { length, changed: [[index, entry], ...] } }\` in place of \`${o.rows}\` (the first event lists every entry; \`done\` carries the whole snapshot).`
        : ''),
    tags: o.tags,
    params: IdParams,
    response: { status: 200, description: 'An event stream', contentType: 'text/event-stream' },
    errors: [404],
    handler: ({ req, res, params }) => {
      streamJobEvents(jobs, params.id, req, res, o.labelsOf, o.rows);
      return undefined;
    },
  });
  route({
    method: 'post',
    path: `${o.path}/:id/cancel`,
    summary: o.cancelSummary,
    tags: o.tags,
    params: IdParams,
    response: { status: 200, description: 'OK' },
    errors: [404],
    handler: ({ params }) => ({ data: jobs.cancel(params.id) }),
  });
  route({
    method: 'post',
    path: `${o.path}/:id/dismiss`,
    summary: o.dismissSummary,
    description: 'Answers the report it forgot; 409 for a job of this launch (it is not kept on disk).',
    tags: o.tags,
    params: IdParams,
    response: { status: 200, description: 'OK' },
    errors: [404, 409],
    handler: ({ params }) => ({ data: jobs.dismiss(params.id) }),
  });
}
