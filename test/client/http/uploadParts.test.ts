import { afterEach, describe, expect, it } from 'vitest';
import { KnowledgeClient } from '../../../src/client';
import { localServer, sendJson, type LocalServer } from '../localServer';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the parts of an upload', () => {
  it('sends config before the files, so the server can refuse a bad one before the archives arrive', async () => {
    server = await localServer((_req, res) =>
      sendJson(res, { error: { code: 'forbidden', message: 'Only the creator may upload to it.' } }, 403),
    );
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    await expect(
      client.upload([new File(['# A\n'], 'a.md'), new File(['# B\n'], 'b.md')], {
        listingId: 'lst_someone_elses',
        chunking: 'markdown',
      }),
    ).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    const body = server.hits[0]!.body.toString('latin1');
    const names = [...body.matchAll(/Content-Disposition: form-data; name="(\w+)"/gi)].map((m) => m[1]);
    expect(names).toEqual(['config', 'files', 'files']);
    expect(body).toContain('{"listing_id":"lst_someone_elses","chunking":"markdown"}');
  });
});
