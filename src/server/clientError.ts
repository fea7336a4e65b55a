import type { Socket } from 'node:net';
import { randomBase62 } from '../core/ids';
import type { ErrorBody, ErrorCode } from '../shared/errors';
import type { KeyRateLimit } from './middleware/rateLimit';

/** How long Node's HTTP server waits for a request (its `headersTimeout` and `requestTimeout`), in ms. */
export interface RequestTimeouts {
  headersTimeout: number;
  requestTimeout: number;
}

/**
 * Requests Node's HTTP parser refuses before Express sees them (a request line or headers over
 * 16 KB, malformed syntax, a request that did not arrive in time) still get the §2 error body and an
 * X-Request-Id, not Node's bare reply, and with `limit`, are counted against their client address
 * and carry its X-RateLimit-* headers. As in Node's own handler, nothing is written once a response
 * to the connection has begun: the bytes would be read as part of that response.
 */
export async function answerClientError(
  err: Error & { code?: string },
  socket: Socket,
  limit?: KeyRateLimit,
  timeouts?: RequestTimeouts,
): Promise<void> {
  const limitHeaders = answerable(socket) && limit ? await limit.countUnread(socket.remoteAddress ?? '') : {};
  if (!answerable(socket)) {
    socket.destroy();
    return;
  }
  const { status, code, reason, message } = refusal(err.code, timeouts);
  const requestId = `req_${randomBase62(20)}`;
  const body: ErrorBody = { error: { code, message, status, requestId } };
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\nX-Request-Id: ${requestId}\r\n` +
      Object.entries(limitHeaders)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      `Connection: close\r\n\r\n${json}`,
  );
}

/** Writable, and no response to it under way (Node sets `_httpMessage` to the response it is sending). */
function answerable(socket: Socket): boolean {
  const sending = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return socket.writable && !sending?.headersSent;
}

function refusal(
  code: string | undefined,
  timeouts: RequestTimeouts | undefined,
): { status: number; code: ErrorCode; reason: string; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: 'headers_too_large',
        reason: 'Request Header Fields Too Large',
        message: 'request: the request line and headers must stay under 16 KB; send long values in the body.',
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return {
        status: 413,
        code: 'payload_too_large',
        reason: 'Payload Too Large',
        message: "request: a chunk's extensions must stay under 16 KB.",
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT': {
      const limits = timeouts
        ? ` (its headers within ${seconds(timeouts.headersTimeout)}, all of it within ${seconds(timeouts.requestTimeout)})`
        : '';
      return {
        status: 408,
        code: 'request_timeout',
        reason: 'Request Timeout',
        message: `request: the request did not arrive in time${limits}; send it again.`,
      };
    }
    default:
      return {
        status: 400,
        code: 'invalid_request',
        reason: 'Bad Request',
        message: 'request: not a valid HTTP request.',
      };
  }
}

const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;
