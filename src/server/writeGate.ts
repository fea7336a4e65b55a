import type { Request } from 'express';
import type { StudioServices } from '../db/services';

/**
 * How long a request about to write waits for the commit this thread feeds (the last documents of an
 * ingestion, the lines of an import) to stop holding the write lock. Past it, the write fails at once
 * with the busy 500 and Retry-After, as it did before requests waited.
 */
export const WRITE_WAIT_MS = 60_000;

/** Waits until a write on the server's connection can get the lock as usual (see writable()). */
export type WriteGate = () => Promise<unknown>;

export function writeGate(services: StudioServices): WriteGate {
  return () => services.knowledgeBase.writable(WRITE_WAIT_MS);
}

/**
 * Whether the client hung up while its request waited: then nothing is written for it. (The request's
 * socket, not the response's: a pipelined request's response gets its socket only when it is its turn.)
 */
export function clientGone(req: Request): boolean {
  return req.socket.destroyed;
}
