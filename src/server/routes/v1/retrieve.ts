import type { Request, Response } from 'express';
import { z } from 'zod';
import { DomainError } from '../../../core/errors';
import type { RetrievalTimings } from '../../../core/retrieve/service';
import type { RetrievalViewer } from '../../../core/retrieve/viewer';
import { ERROR_STATUS, type ErrorBody } from '../../../shared/errors';
import { RetrievalResultSchema, RetrieveRequestSchema, type RetrievalDone } from '../../../shared/retrieval';
import type { ServerDeps } from '../../deps';
import type { defineRoutes } from '../../route';

export interface RetrieveRouteOptions {
  /** A `: ping` comment is sent this often while the stream waits for results (DESIGN §2: 15 s). */
  pingIntervalMs?: number;
}

const SSE_DESCRIPTION = [
  'Server-Sent Events, `Content-Type: text/event-stream`. One event per chunk, best first:',
  '`event: chunk` / `id: <rank, from 1>` / `data: <Chunk JSON>`; then `event: done` with',
  '`data: {"listingId","queryId","latencyMs","count"}`. A failure after the stream started is',
  '`event: error` with the error body as data; failures before it are ordinary JSON errors.',
  'A comment line `: ping` is sent every 15 s while the stream is idle.',
].join(' ');

const REQUEST_NOTES =
  "Body fields may also be sent in snake_case (`listing_id`, `top_k`, `min_score`). The listing's creator may always query it; anyone else needs an active credential (403 `credential_not_found`, `credential_expired` or `insufficient_balance`; per-query credentials are debited one query price per successful retrieval), and the listing's per-credential retrieval rate limit applies (docs/marketplace.md). Another wallet's draft is 404. Scores are in [0, 1] and mean the same for every query (docs/retrieval.md).";

const viewerOf = (req: Request): RetrievalViewer => ({
  wallet: req.principal!.wallet,
  keyId: req.principal!.keyId,
});

/** The two retrieval routes: the per-credential retrieval limit counts these and nothing else. */
export const RETRIEVAL_PATHS = ['/retrieve', '/retrieve/stream'] as const;

export function retrieveRoutes(
  route: ReturnType<typeof defineRoutes>,
  { services, log = console.error }: ServerDeps,
  options: RetrieveRouteOptions = {},
): void {
  const pingIntervalMs = options.pingIntervalMs ?? 15_000;

  route({
    method: 'post',
    path: RETRIEVAL_PATHS[0],
    writes: false,
    summary: 'Retrieve context chunks from a knowledge base',
    description: `The best \`topK\` chunks of the listing for \`query\`, at the top level (no \`data\` envelope). ${REQUEST_NOTES}`,
    tags: ['Retrieval'],
    body: RetrieveRequestSchema,
    response: { status: 200, description: 'The retrieval result.', schema: RetrievalResultSchema },
    errors: [403, 404, 503],
    handler: async ({ req, res, body }) => {
      const timings: RetrievalTimings = { embedMs: 0, searchMs: 0 };
      // A caller that hangs up (its timeout, a closed tab) before the answer is neither logged nor charged
      // (docs/marketplace.md): the retrieval stops at its next step, as the stream's does.
      const gone = abortWhenClientGoes(res);
      try {
        const result = await services.retrieval.retrieve(body, viewerOf(req), gone, timings);
        res.setHeader('Server-Timing', serverTiming(timings));
        return result;
      } catch (err) {
        if (gone.aborted) return undefined;
        throw err;
      }
    },
  });

  route({
    method: 'post',
    path: RETRIEVAL_PATHS[1],
    writes: false,
    summary: 'Stream retrieval results over SSE',
    description: `Same parameters, validation and access rules as POST /v1/retrieve. ${SSE_DESCRIPTION} ${REQUEST_NOTES}`,
    tags: ['Retrieval'],
    body: RetrieveRequestSchema,
    response: {
      status: 200,
      description: 'An SSE stream of `chunk` events, then `done` (or `error`).',
      contentType: 'text/event-stream',
      schema: z.string().meta({ description: SSE_DESCRIPTION }),
    },
    errors: [403, 404, 503],
    handler: async ({ req, res, body }) => {
      // Validation, the listing lookup and the access check happen before the stream: plain JSON errors.
      const prepared = services.retrieval.prepare(body, viewerOf(req));
      const stream = openEventStream(res, pingIntervalMs);
      const gone = abortWhenClientGoes(res);
      try {
        const result = await prepared.run(gone);
        result.chunks.forEach((chunk, i) => stream.send('chunk', chunk, i + 1));
        const done: RetrievalDone = {
          listingId: result.listingId,
          queryId: result.queryId,
          latencyMs: result.latencyMs,
          count: result.chunks.length,
        };
        stream.send('done', done);
      } catch (err) {
        if (!gone.aborted) stream.send('error', errorBody(err, req.id, log, req));
      } finally {
        stream.end();
      }
      return undefined;
    },
  });
}

/**
 * A signal aborted when the connection closes before the response was written. `res`, not `req`: a
 * request's 'close' also fires once its body has been read.
 */
function abortWhenClientGoes(res: Response): AbortSignal {
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableEnded) gone.abort(new Error('the client disconnected'));
  });
  return gone.signal;
}

/**
 * W3C Server-Timing: where the server spent a retrieval's time (browsers' developer tools show it; the
 * benchmark subtracts the embedding, which the latency targets exclude).
 */
function serverTiming({ embedMs, searchMs }: RetrievalTimings): string {
  const dur = (ms: number) => ms.toFixed(2);
  return `embed;dur=${dur(embedMs)};desc="query embedding", search;dur=${dur(searchMs)};desc="ranking"`;
}

/** Starts an SSE response: headers out at once, nothing buffered or compressed on the way. */
function openEventStream(res: Response, pingIntervalMs: number) {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  const ping = setInterval(() => {
    if (!res.writableEnded) res.write(': ping\n\n');
  }, pingIntervalMs);
  return {
    send(event: string, data: unknown, id?: number) {
      if (res.writableEnded || res.destroyed) return;
      // JSON.stringify escapes every line break, so the data is always one `data:` line.
      res.write(`event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`);
    },
    end() {
      clearInterval(ping);
      if (!res.writableEnded) res.end();
    },
  };
}

/** The §2 error body for a failure after the stream started (the error handler can no longer answer). */
function errorBody(err: unknown, requestId: string, log: (message: string) => void, req: Request): ErrorBody {
  if (err instanceof DomainError) {
    return { error: { code: err.code, message: err.message, status: ERROR_STATUS[err.code], requestId } };
  }
  log(
    `[${requestId}] ${req.method} ${req.originalUrl} failed mid-stream: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
  );
  return {
    error: {
      code: 'internal_error',
      message: `An internal error occurred. Quote request id ${requestId} when reporting it.`,
      status: 500,
      requestId,
    },
  };
}
