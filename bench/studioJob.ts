import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { IngestJobs, type StartJobRequest } from '../src/core/ingest/jobs';
import type { IngestResult } from '../src/core/ingest/pipeline';
import type { IngestCommand } from '../src/core/ingest/service';
import { streamJobEvents } from '../src/server/jobEvents';
import { INGEST_JOB_EVENTS } from '../src/server/routes/studio/ingest';

/**
 * An ingestion as the studio runs a drop: a background job of its job queue (IngestJobs), followed by
 * the event stream a page opens (streamJobEvents with the route's options), written nowhere instead of
 * to a socket. The ingestion's work on the server's thread is the studio's.
 */
export async function runFollowedJob(
  run: (command: IngestCommand) => Promise<IngestResult>,
  request: StartJobRequest,
): Promise<IngestResult> {
  const jobs = new IngestJobs(run);
  const { id } = jobs.start(request);
  const page = new EventEmitter();
  const stream = {
    writeHead: () => stream,
    write: () => true,
    end: () => page.emit('close'),
  };
  const { labelsOf, rows } = INGEST_JOB_EVENTS;
  streamJobEvents(jobs, id, page as unknown as Request, stream as unknown as Response, labelsOf, rows);
  const done = await jobs.settled(id);
  if (done.state !== 'done' || !done.result) {
    throw new Error(`The ingestion job ended ${done.state}: ${done.error?.message ?? 'no result'}`);
  }
  return done.result;
}
