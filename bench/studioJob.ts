import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { IngestJobs, type StartJobRequest } from '../src/core/ingest/jobs';
import type { IngestResult } from '../src/core/ingest/pipeline';
import type { IngestCommand } from '../src/core/ingest/service';
import { streamJobEvents } from '../src/server/jobEvents';

export interface FollowedJob {
  result: IngestResult;
  /** The server-sent events the page was written, and their size. */
  events: number;
  eventBytes: number;
}

/**
 * An ingestion as the studio runs a drop: a background job of its job queue (IngestJobs), followed by
 * the event stream a page opens (streamJobEvents, the route's own code), with the events written to a
 * counter instead of a socket. The ingestion's work on the server's thread is the studio's.
 */
export async function runFollowedJob(
  run: (command: IngestCommand) => Promise<IngestResult>,
  request: StartJobRequest,
): Promise<FollowedJob> {
  const jobs = new IngestJobs(run);
  const { id } = jobs.start(request);
  let events = 0;
  let eventBytes = 0;
  const page = new EventEmitter();
  const stream = {
    writeHead: () => stream,
    write: (chunk: string) => {
      events++;
      eventBytes += Buffer.byteLength(chunk);
      return true;
    },
    end: () => page.emit('close'),
  };
  // As the route streams an ingestion's events (routes/studio/ingest.ts): stage labels, files as changes.
  streamJobEvents(
    jobs,
    id,
    page as unknown as Request,
    stream as unknown as Response,
    (job) => (job.progress ? [job.progress.stage] : []),
    'files',
  );
  const done = await jobs.settled(id);
  if (done.state !== 'done' || !done.result) {
    throw new Error(`The ingestion job ended ${done.state}: ${done.error?.message ?? 'no result'}`);
  }
  return { result: done.result, events, eventBytes };
}
