import type { Request } from 'express';
import { WRITE_WAIT_MS } from '../db/repositories/knowledgeBase';
import type { StudioServices } from '../db/services';

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
