import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionError, KnowledgeClient, TimeoutError } from '../../../src/client';
import { failure, localServer, sendJson, type LocalServer } from '../localServer';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const file = () => new File(['# Notes\n\nSomething to ingest.\n'], 'notes.md');

describe('an upload whose outcome is unknown', () => {
  it('is not sent again without listingId: a second attempt would create a second draft listing and job', async () => {
    // The body arrives, then the connection is cut: the server may well have accepted it.
    server = await localServer((req) => {
      req.socket.destroy();
    });
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    const cut = await failure(client.upload(file()));
    expect(cut).toBeInstanceOf(ConnectionError);
    expect(server.hits).toHaveLength(1);

    await server.close();
    server = await localServer(() => {});
    const silent = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test', timeoutMs: 200 });
    expect(await failure(silent.upload(file()))).toBeInstanceOf(TimeoutError);
    expect(server.hits).toHaveLength(1);
  });

  it('is sent again into a listing, which reports the files it holds unchanged', async () => {
    server = await localServer((req, res, n) => {
      if (n < 2) req.socket.destroy();
      else sendJson(res, { data: { uploadId: 'upl_1', status: 'queued' } }, 202);
    });
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    expect(await client.upload(file(), { listingId: 'lst_1' })).toEqual({
      uploadId: 'upl_1',
      status: 'queued',
    });
    expect(server.hits).toHaveLength(3);
    expect(server.hits[2]!.body.equals(server.hits[0]!.body)).toBe(true);
  });
});
