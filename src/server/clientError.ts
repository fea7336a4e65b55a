import type { Socket } from 'node:net';
import { randomBase62 } from '../core/ids';
import type { ErrorBody } from '../shared/errors';
import type { KeyRateLimit } from './middleware/rateLimit';

/**
 * Requests Node's HTTP parser refuses before Express sees them (a request line or headers over
 * 16 KB, malformed syntax) still get the §2 error body and an X-Request-Id, not Node's bare reply, and
 * with `limit`, are counted against their client address and carry its X-RateLimit-* headers.
 */
export async function answerClientError(
  err: Error & { code?: string },
  socket: Socket,
  limit?: KeyRateLimit,
): Promise<void> {
  const limitHeaders = socket.writable && limit ? await limit.countUnread(socket.remoteAddress ?? '') : {};
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const requestId = `req_${randomBase62(20)}`;
  const body: ErrorBody = {
    error: {
      code: tooLarge ? 'headers_too_large' : 'invalid_request',
      message: tooLarge
        ? 'request: the request line and headers must stay under 16 KB; send long values in the body.'
        : 'request: not a valid HTTP request.',
      status,
      requestId,
    },
  };
  const json = JSON.stringify(body);
  const reason = tooLarge ? 'Request Header Fields Too Large' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\nX-Request-Id: ${requestId}\r\n` +
      Object.entries(limitHeaders)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      `Connection: close\r\n\r\n${json}`,
  );
}
