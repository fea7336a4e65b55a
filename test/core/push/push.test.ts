import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KnowledgeClient } from '../../../src/client';
import { pushListing, type PushRequest } from '../../../src/core/push/push';
import { pushTargetsOf } from '../../../src/core/push/wiring';
import { remoteOnlyNote, type PushReport } from '../../../src/shared/push';
import { SqliteDocumentRepository } from '../../../src/db/repositories/documents';
import { listingWithFixtures, remoteKey } from '../../helpers/pushRemote';
import { startStudio, type TestStudio } from '../../helpers/studio';

let local: TestStudio;
let remote: TestStudio;
let key: string;

beforeAll(async () => {
  [local, remote] = await Promise.all([startStudio(), startStudio({ rateLimits: { perKey: 10_000 } })]);
  key = remoteKey(remote);
});
afterAll(async () => {
  await Promise.all([local?.close(), remote?.close()]);
});

const fast = { pollIntervalMs: 50, backoffMs: () => 20 } satisfies Partial<PushRequest>;

function push(listingId: string, options: Partial<PushRequest> = {}): Promise<PushReport> {
  return pushListing(
    { listingId, baseUrl: remote.url, apiKey: key, ...fast, ...options },
    local.services,
    pushTargetsOf(local.services),
  );
}

const remoteClient = () => new KnowledgeClient({ baseUrl: remote.url, apiKey: key });
const sourcesOf = (report: PushReport) => report.parts.flatMap((p) => p.files.map((f) => f.source)).sort();

describe('pushListing', () => {
  it('carries the chunking and embedding model of the documents, and groups differing chunkings into parts', async () => {
    const listingId = await listingWithFixtures(local, ['codeblock.md', 'umlauts-utf8.md'], {
      strategy: 'fixed',
      chunkSize: 64,
      chunkOverlap: 8,
    });
    await listingWithFixtures(
      local,
      ['stanley-cups.csv'],
      { strategy: 'sentence', chunkSize: 128, chunkOverlap: 0 },
      listingId,
    );
    const report = await push(listingId);

    expect(report.state).toBe('completed');
    expect(report.parts.map((p) => [p.chunking.strategy, p.files.map((f) => f.source)])).toEqual([
      ['fixed', ['docs/codeblock.md', 'docs/umlauts-utf8.md']],
      ['sentence', ['docs/stanley-cups.csv']],
    ]);
    const client = remoteClient();
    const configs = await Promise.all(report.parts.map((p) => client.uploads.get(p.uploadId!)));
    const listing = local.services.listings.get(listingId, 'studio');
    expect(configs.map((u) => u.config)).toEqual([
      expect.objectContaining({
        chunking: 'fixed',
        chunk_size: 64,
        chunk_overlap: 8,
        embedding_model: listing.embeddingModel,
        listing_id: report.remoteListingId,
      }),
      expect.objectContaining({
        chunking: 'sentence',
        chunk_size: 128,
        chunk_overlap: 0,
        listing_id: report.remoteListingId,
      }),
    ]);
    // The same chunking on both sides gives the same chunks.
    expect(report.remoteChunkCount).toBe(listing.chunkCount);
    const remoteDocs = remote.services.knowledgeBase.documents(report.remoteListingId!);
    expect(remoteDocs.map((d) => [d.source, d.chunkCount])).toEqual(
      local.services.knowledgeBase.documents(listingId).map((d) => [d.source, d.chunkCount]),
    );
  });

  it('splits past the part limits, creates one remote draft and reuses it; a second push changes nothing', async () => {
    const listingId = await listingWithFixtures(local);
    const updates: PushReport[] = [];
    const first = await push(listingId, {
      partLimits: { maxBytes: 20_000, maxFiles: 3 },
      onUpdate: (r) => updates.push(structuredClone(r)),
    });
    expect(first.state).toBe('completed');
    expect(first.parts.length).toBeGreaterThanOrEqual(3);
    for (const p of first.parts) {
      expect(p.fileCount).toBeLessThanOrEqual(3);
      if (p.fileCount > 1) expect(p.bytes).toBeLessThanOrEqual(20_000);
    }
    expect(first.totals).toMatchObject({ files: 8, accepted: 8, unchanged: 0, rejected: 0, not_stored: 0 });
    expect(new Set(first.parts.map((p) => p.uploadId)).size).toBe(first.parts.length);
    const states = new Set(updates.flatMap((u) => u.parts.map((p) => p.state)));
    expect([...states]).toEqual(
      expect.arrayContaining(['waiting', 'packing', 'sending', 'processing', 'completed']),
    );
    expect(
      updates.some((u) => u.parts.some((p) => p.sending.total > 0 && p.sending.loaded === p.sending.total)),
    ).toBe(true);

    const local8 = local.services.listings.get(listingId, 'studio');
    const remoteListing = remote.services.listings.get(first.remoteListingId!, 'studio');
    // 8 files, of which a JSON array of 8 items: 15 documents on both sides (spec §2).
    expect(local8.documentCount).toBe(15);
    expect(remoteListing).toMatchObject({
      title: 'Pushed handbook',
      documentCount: local8.documentCount,
      chunkCount: local8.chunkCount,
    });
    expect(first.documentCount).toBe(15);
    expect(remoteOnlyNote(first)).toBeUndefined();

    const again = await push(listingId);
    expect(again.remoteListingId).toBe(first.remoteListingId);
    expect(again.parts).toHaveLength(1);
    expect(again.totals).toMatchObject({ files: 8, accepted: 0, unchanged: 8 });
    expect(remote.services.listings.get(first.remoteListingId!, 'studio').chunkCount).toBe(local8.chunkCount);
  });

  it('retries a part after a connection failure and a 503 with Retry-After, then completes', async () => {
    const listingId = await listingWithFixtures(local, ['codeblock.md', 'fake.docx', 'simple.json']);
    let uploads = 0;
    const fetch = async (url: string, init: RequestInit) => {
      if (init.method === 'POST' && url.endsWith('/upload')) {
        uploads++;
        if (uploads === 2) throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
        if (uploads === 3) {
          return new Response(JSON.stringify({ error: { code: 'internal_error', message: 'down' } }), {
            status: 503,
            headers: { 'retry-after': '0' },
          });
        }
      }
      return globalThis.fetch(url, init);
    };
    const report = await push(listingId, { partLimits: { maxBytes: 1e9, maxFiles: 2 }, fetch });
    expect(report.state).toBe('completed');
    expect(report.parts.map((p) => p.attempts)).toEqual([1, 3]);
    expect(report.totals).toMatchObject({ accepted: 3, not_stored: 0 });
    expect(remote.services.knowledgeBase.documents(report.remoteListingId!).map((d) => d.source)).toEqual(
      sourcesOf(report),
    );
  });

  it('resumes: a part that failed for good is sent on the next push, the others are unchanged', async () => {
    const listingId = await listingWithFixtures(local, ['codeblock.md', 'umlauts-utf8.md', 'fake-html.html']);
    let uploads = 0;
    const fetch = async (url: string, init: RequestInit) => {
      if (init.method === 'POST' && url.endsWith('/upload') && ++uploads >= 2) {
        return new Response('{"error":{"code":"internal_error","message":"still down"}}', { status: 500 });
      }
      return globalThis.fetch(url, init);
    };
    const limits = { maxBytes: 1e9, maxFiles: 2 };
    const first = await push(listingId, { partLimits: limits, fetch, maxAttempts: 2 });
    expect(first.state).toBe('failed');
    expect(first.parts.map((p) => [p.state, p.attempts])).toEqual([
      ['completed', 1],
      ['failed', 2],
    ]);
    expect(first.parts[1]!.files[0]).toMatchObject({
      source: 'docs/umlauts-utf8.md',
      status: 'not_stored',
      error: { code: 'internal_error', message: expect.stringContaining('still down') },
    });

    const second = await push(listingId, { partLimits: limits });
    expect(second.state).toBe('completed');
    expect(second.remoteListingId).toBe(first.remoteListingId);
    expect(second.parts.flatMap((p) => p.files.map((f) => [f.source, f.status]))).toEqual([
      ['docs/codeblock.md', 'unchanged'],
      ['docs/fake-html.html', 'unchanged'],
      ['docs/umlauts-utf8.md', 'accepted'],
    ]);
    expect(remote.services.knowledgeBase.documents(second.remoteListingId!)).toHaveLength(3);
  });

  it('stops at once with an authentication error naming the target when the key is refused', async () => {
    const listingId = await listingWithFixtures(local, ['codeblock.md', 'fake.docx']);
    const report = await push(listingId, {
      apiKey: 'kbs_wrongwrongwrongwrongwrongwrong0',
      partLimits: { maxBytes: 1e9, maxFiles: 1 },
    });
    expect(report.state).toBe('failed');
    expect(report.error).toEqual({
      code: 'unauthorized',
      message: expect.stringMatching(
        new RegExp(`^Authentication failed at ${remote.url}/v1: the API key was refused`),
      ),
    });
    // One full stop: the remote's message ends its own sentence (it read "…).)." before).
    expect(report.error!.message).toMatch(/[^.]\)\. Check the key, or create one on that service\.$/);
    // Found by the check before the first part: nothing was packed or sent.
    expect(report.parts.map((p) => p.attempts)).toEqual([0, 0]);
    expect(report.totals.not_stored).toBe(2);
  });

  it('says when the service holds documents this listing no longer has (a push never deletes)', async () => {
    const listingId = await listingWithFixtures(local, ['codeblock.md', 'umlauts-utf8.md']);
    const first = await push(listingId);
    expect(first.state).toBe('completed');
    expect(remoteOnlyNote(first)).toBeUndefined();
    const gone = local.services.knowledgeBase
      .documents(listingId)
      .find((d) => d.source === 'docs/umlauts-utf8.md')!;
    new SqliteDocumentRepository(local.services.db).delete(gone.id);
    const again = await push(listingId);
    expect(again).toMatchObject({
      state: 'completed',
      remoteDocumentCount: 2,
      totals: { files: 1, unchanged: 1 },
    });
    expect(remoteOnlyNote(again)).toBe(
      'The service holds 1 document more than this listing: a push never deletes, so documents deleted or renamed here stay there (and are found by its buyers) until deleted on the service.',
    );
  });

  it('stops before packing anything when the base URL is not the API (a 404 page)', async () => {
    const listingId = await listingWithFixtures(local, ['codeblock.md', 'fake.docx']);
    const uploadsBefore = remote.services.db.prepare('SELECT count(*) AS n FROM uploads').get() as {
      n: number;
    };
    const report = await push(listingId, {
      baseUrl: `${remote.url}/api/v1`,
      partLimits: { maxBytes: 1e9, maxFiles: 1 },
    });
    expect(report.state).toBe('failed');
    expect(report.error).toEqual({
      code: 'not_a_marketplace_api',
      message: `${remote.url}/api/v1 does not answer as a Knowledge Marketplace API (GET ${remote.url}/api/v1/listings: 404 not_found). Check the base URL: the API's paths start from it, e.g. https://api.example.com/v1.`,
    });
    expect(report.parts.map((p) => [p.attempts, p.archiveBytes])).toEqual([
      [0, null],
      [0, null],
    ]);
    expect(remote.services.db.prepare('SELECT count(*) AS n FROM uploads').get()).toEqual(uploadsBefore);
  });

  it("stops, keeping the remote listing, when another wallet's key cannot see it; --new-listing makes one", async () => {
    const listingId = await listingWithFixtures(local, ['codeblock.md']);
    const first = await push(listingId);
    expect(first.state).toBe('completed');
    const theirs = first.remoteListingId!;
    const other = remote.services.wallets.create('other-wallet').address;
    const otherKey = remote.services.apiKeys.create(other).key;
    const targets = pushTargetsOf(local.services);

    const refused = await push(listingId, { apiKey: otherKey });
    expect(refused.state).toBe('failed');
    expect(refused.error).toEqual({
      code: 'remote_listing_not_visible',
      message: expect.stringMatching(
        new RegExp(
          `^${remote.url}/v1 does not show listing ${theirs} to this API key, and it was pushed there with another key`,
        ),
      ),
    });
    // Not forgotten, and no second draft made for the other wallet.
    expect(targets.remoteListing(`${remote.url}/v1`, listingId)).toBe(theirs);
    const ownedBy = (wallet: string) =>
      remote.services.db
        .prepare('SELECT count(*) AS n FROM listings WHERE creator_wallet = ?')
        .get(wallet) as {
        n: number;
      };
    expect(ownedBy(other).n).toBe(0);

    // Asked for: a new draft for the other wallet, remembered from then on.
    const fresh = await push(listingId, { apiKey: otherKey, newRemoteListing: true });
    expect(fresh.state).toBe('completed');
    expect(fresh.remoteListingId).not.toBe(theirs);
    expect(targets.remoteListing(`${remote.url}/v1`, listingId)).toBe(fresh.remoteListingId);
    expect(ownedBy(other).n).toBe(1);
  });

  it('reports the studio API given as the base URL as not the API, naming it, not as a refused key', async () => {
    const listingId = await listingWithFixtures(local, ['codeblock.md']);
    const report = await push(listingId, { baseUrl: `${remote.url}/studio`, apiKey: 'kbs_x' });
    expect(report.state).toBe('failed');
    expect(report.error).toEqual({
      code: 'not_a_marketplace_api',
      message: expect.stringMatching(
        new RegExp(
          `^${remote.url}/studio does not answer as a Knowledge Marketplace API \\(GET ${remote.url}/studio/listings: 401 unauthorized: `,
        ),
      ),
    });
    expect(report.error!.message).toContain('Check the base URL');
    expect(report.parts[0]!.attempts).toBe(0);
  });

  it('says the key was accepted only once the remote accepted it, never for a push refused before that', async () => {
    const listingId = await listingWithFixtures(local, ['codeblock.md', 'fake.docx']);
    const accepted: string[] = [];
    const tell = (what: string) => () => void accepted.push(what);
    await push(listingId, {
      apiKey: 'kbs_wrongwrongwrongwrongwrongwrong0',
      onKeyAccepted: tell('wrong key'),
    });
    await push(listingId, { baseUrl: `${remote.url}/api/v1`, onKeyAccepted: tell('not the API') });
    await push(listingId, { baseUrl: `${remote.url}/studio`, onKeyAccepted: tell('studio API') });
    expect(accepted).toEqual([]);

    // Told once, after the check before packing and before any part was sent.
    let partsWhenTold: string[] = [];
    let last: PushReport | undefined;
    const report = await push(listingId, {
      partLimits: { maxBytes: 1e9, maxFiles: 1 },
      onUpdate: (r) => void (last = structuredClone(r)),
      onKeyAccepted: () => {
        accepted.push('good key');
        partsWhenTold = last!.parts.map((p) => p.state);
      },
    });
    expect(report.state).toBe('completed');
    expect(accepted).toEqual(['good key']);
    expect(partsWhenTold).toEqual(['waiting', 'waiting']);

    // The check could not tell (a 503): told once the remote took a part with the key, not before.
    const flakyCheck = (status: number) => async (url: string, init: RequestInit) =>
      init.method !== 'POST' && new URL(url).pathname.endsWith('/listings')
        ? new Response('{"error":{"code":"internal_error","message":"down"}}', { status })
        : globalThis.fetch(url, init);
    const uploads = () => remote.services.db.prepare('SELECT count(*) FROM uploads').pluck().get() as number;
    const before = uploads();
    const told: number[] = [];
    const afterPart = await push(listingId, {
      fetch: flakyCheck(503),
      onKeyAccepted: () => void told.push(uploads()),
    });
    expect(afterPart.state).toBe('completed');
    expect(told).toHaveLength(1);
    expect(told[0]).toBeGreaterThan(before);
    const refused = await push(listingId, {
      fetch: flakyCheck(503),
      apiKey: 'kbs_wrongwrongwrongwrongwrongwrong0',
      onKeyAccepted: () => void told.push(-1),
    });
    expect(refused.error?.code).toBe('unauthorized');
    expect(told).toHaveLength(1);
  });

  it('reports the files of a part the remote was still processing when cancelled as unconfirmed, not not stored', async () => {
    const listingId = await listingWithFixtures(local, [
      'codeblock.md',
      'umlauts-utf8.md',
      'fake-html.html',
      'simple-table.md',
    ]);
    const controller = new AbortController();
    const report = await push(listingId, {
      partLimits: { maxBytes: 1e9, maxFiles: 1 },
      signal: controller.signal,
      // Cancelled as soon as the remote has taken part 2 (202): it is processing it.
      onUpdate: (r) => {
        if (r.parts[1]!.state === 'processing') controller.abort();
      },
    });
    expect(report.state).toBe('cancelled');
    const [first, second, ...rest] = report.parts;
    expect(first!.state).toBe('completed');
    expect(second).toMatchObject({
      state: 'failed',
      uploadId: expect.stringMatching(/^upl_/),
      error: { code: 'unconfirmed', message: expect.stringContaining('Push again to check') },
    });
    expect(second!.files.map((f) => [f.status, f.error?.message])).toEqual([
      [
        'unconfirmed',
        'Sent; the service was still processing it when the push stopped — push again to check.',
      ],
    ]);
    // The parts never sent were not stored.
    expect(rest.flatMap((p) => p.files.map((f) => f.status))).toEqual(['not_stored', 'not_stored']);
    // Every file counted once.
    expect(report.totals).toMatchObject({ files: 4, accepted: 1, unconfirmed: 1, not_stored: 2 });

    expect(report.error!.message).toBe(
      'The push was cancelled; parts already accepted by the remote stay there. Part 2 was still being processed by the service, which may store it: push again to check.',
    );
    // The remote did store part 2: the next push finds it there.
    const client = remoteClient();
    await vi.waitFor(
      async () => expect((await client.uploads.get(second!.uploadId!)).status).toBe('completed'),
      {
        timeout: 10_000,
      },
    );
    expect(remote.services.knowledgeBase.documents(report.remoteListingId!)).toHaveLength(2);
    const again = await push(listingId, { partLimits: { maxBytes: 1e9, maxFiles: 1 } });
    expect(again.parts[1]!.files.map((f) => [f.source, f.status])).toEqual([
      [second!.files[0]!.source, 'unchanged'],
    ]);
  });

  it('says the host is unreachable after its retries', async () => {
    const listingId = await listingWithFixtures(local, ['codeblock.md']);
    const report = await push(listingId, { baseUrl: 'http://127.0.0.1:9/v1', maxAttempts: 2 });
    expect(report.error).toMatchObject({
      code: 'remote_unreachable',
      message: expect.stringContaining('Cannot reach http://127.0.0.1:9/v1'),
    });
    expect(report.parts[0]!.attempts).toBe(2);
  });

  it('reports files whose original bytes are not kept as missing, and refuses an empty listing', async () => {
    const listingId = await listingWithFixtures(local, ['codeblock.md', 'umlauts-utf8.md']);
    const gone = local.services.knowledgeBase
      .documents(listingId)
      .find((d) => d.source === 'docs/umlauts-utf8.md')!;
    const { rmSync } = await import('node:fs');
    rmSync(local.services.sources.pathOf(gone.contentHash));
    const report = await push(listingId);
    expect(report.missing).toEqual([
      expect.objectContaining({
        source: 'docs/umlauts-utf8.md',
        status: 'missing',
        error: expect.objectContaining({ code: 'source_missing' }),
      }),
    ]);
    expect(report.totals).toMatchObject({ accepted: 1, missing: 1 });

    const empty = local.services.listings.create(
      { title: 'Empty', accessModel: 'one_time', price: 1 },
      local.services.wallets.defaultWallet().address,
    );
    await expect(push(empty.id)).rejects.toThrow(/no documents to push/);
  });
});
