import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientError } from '../../src/server/clientError';

// A real Node HTTP server on loopback with short limits (Node's are 60 s for the headers and 300 s for
// the whole request), answering what its parser refuses with answerClientError, as createServer does.
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer(
    { headersTimeout: 600, requestTimeout: 1200, connectionsCheckingInterval: 100 },
    (req, res) => {
      if (req.url === '/started') {
        // A response under way when the request times out: its body must not be cut into.
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('begun;');
        return;
      }
      req.resume();
      req.on('end', () => res.end('ok'));
    },
  );
  server.on('clientError', (err: Error, socket: Socket) => {
    answerClientError(err, socket, undefined, server).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Sends `bytes` and never more, and reads what comes back until the server closes the connection. */
function sendAndRead(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (answer += c));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

function parse(answer: string): { status: number; headers: string; body: Record<string, any> } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head, body: JSON.parse(body) };
}

describe('answerClientError', () => {
  it('answers headers that stop arriving with 408 request_timeout and the error body', async () => {
    const { status, headers, body } = parse(await sendAndRead('GET /v1/listings HTTP/1.1\r\nHost: x\r\n'));
    expect(status).toBe(408);
    expect(headers).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(body.error).toMatchObject({
      code: 'request_timeout',
      status: 408,
      message:
        'request: the request did not arrive in time (its headers within 0.6 s, all of it within 1.2 s); send it again.',
    });
    expect(headers).toContain(`X-Request-Id: ${body.error.requestId}`);
  });

  it('answers a body that stops arriving with 408 too', async () => {
    const answer = await sendAndRead(
      'POST /v1/retrieve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"que',
    );
    expect(parse(answer)).toMatchObject({ status: 408, body: { error: { code: 'request_timeout' } } });
  });

  it('answers what is not HTTP with 400 invalid_request', async () => {
    const { status, body } = parse(await sendAndRead('HELLO THERE\r\n\r\n'));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      code: 'invalid_request',
      message: 'request: not a valid HTTP request.',
    });
  });

  it('writes nothing into a response already under way: the connection is closed', async () => {
    // The request's body never ends, so the request times out after its response has begun.
    const answer = await sendAndRead('POST /started HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{');
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toContain('begun;');
    expect(answer).not.toMatch(/HTTP\/1\.1 4\d\d|"error"/);
  });
});
