import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, KnowledgeClient } from '../../src/client';
import { localServer, sendJson, type LocalServer } from './localServer';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const listing = (i: number) => ({ id: `lst_${i}`, title: `Listing ${i}` });
const offsetOf = (url: string) => Number(new URL(url, 'http://x').searchParams.get('offset') ?? 0);

/** Every id the iteration yields, stopping at `limit` items so that an endless one fails instead of hanging. */
async function idsOf(
  items: AsyncIterable<{ id: string }>,
  limit = 50,
): Promise<{ ids: string[]; error: any }> {
  const ids: string[] = [];
  try {
    for await (const item of items) {
      ids.push(item.id);
      if (ids.length >= limit) break;
    }
  } catch (error) {
    return { ids, error };
  }
  return { ids, error: undefined };
}

describe('auto-pagination', () => {
  it('refuses a server that ignores offset and keeps answering the first page, instead of looping forever', async () => {
    server = await localServer((_req, res) =>
      sendJson(res, {
        data: [listing(0), listing(1)],
        pagination: { total: 1000, limit: 2, offset: 0, hasMore: true },
      }),
    );
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    const { ids, error } = await idsOf(client.listings.list({ limit: 2 }));
    expect(ids).toEqual(['lst_0', 'lst_1']);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'invalid_response', status: 200 });
    expect(error.message).toMatch(/offset 2.*offset 0/);
    expect(server.hits.map((h) => offsetOf(h.url))).toEqual([0, 2]);
  });

  it('goes on from the offset it asked for, not from the offset echoed, and stops at total', async () => {
    // Echoes the offset asked for, but gives a shorter page than its limit (as a server may).
    server = await localServer((req, res) => {
      const offset = offsetOf(req.url!);
      const data = [offset, offset + 1, offset + 2].filter((i) => i < 7).map(listing);
      sendJson(res, { data, pagination: { total: 7, limit: 5, offset, hasMore: true } });
    });
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    const { ids, error } = await idsOf(client.listings.list({ limit: 5, offset: 1 }));
    expect(error).toBeUndefined();
    expect(ids).toEqual(['lst_1', 'lst_2', 'lst_3', 'lst_4', 'lst_5', 'lst_6']);
    expect(server.hits.map((h) => offsetOf(h.url))).toEqual([1, 4]);
  });

  it('refuses a first page at another offset than asked', async () => {
    server = await localServer((_req, res) =>
      sendJson(res, { data: [listing(0)], pagination: { total: 1, limit: 20, offset: 0, hasMore: false } }),
    );
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    await expect(client.credentials.list({ offset: 40 })).rejects.toMatchObject({ code: 'invalid_response' });
  });
});
