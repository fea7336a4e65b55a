import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushJobs } from '../../../src/core/push/jobs';
import { apiKeyFingerprint, pushListing, type PushRequest } from '../../../src/core/push/push';
import { pushTargetsOf } from '../../../src/core/push/wiring';
import type { PushReport } from '../../../src/shared/push';
import type { Upload } from '../../../src/shared/uploads';
import { listingWithFixtures } from '../../helpers/pushRemote';
import { startStudio, type TestStudio } from '../../helpers/studio';

/** The remote's answers are scripted here: refusals a real remote gives only in rare conditions. */

let local: TestStudio;
let listingId: string;

beforeAll(async () => {
  local = await startStudio();
  listingId = await listingWithFixtures(local, ['codeblock.md', 'umlauts-utf8.md']);
});
afterAll(() => local?.close());

function upload(status: Upload['status'], patch: Partial<Upload> = {}): Upload {
  return {
    uploadId: 'upl_scripted',
    listingId: 'lst_remote',
    status,
    config: {},
    progress: { stage: 'done', filesDone: 2, filesTotal: 2, bytesDone: 0, bytesTotal: 0, chunks: 0 },
    files: [],
    documentCount: null,
    chunkCount: null,
    error: null,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    ...patch,
  };
}

const reply = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** The remote's answer to the push's first question (`GET /listings?limit=1`): it is an API. */
const listingsPage = () =>
  reply(200, { data: [], pagination: { total: 0, limit: 1, offset: 0, hasMore: false } });

function push(fetch: PushRequest['fetch'], options: Partial<PushRequest> = {}): Promise<PushReport> {
  return pushListing(
    {
      listingId,
      baseUrl: 'http://remote.test/v1',
      apiKey: 'kbs_scripted',
      pollIntervalMs: 1,
      backoffMs: () => 1,
      fetch:
        fetch &&
        (async (url, init) =>
          new URL(String(url)).pathname === '/v1/listings' ? listingsPage() : fetch(url, init)),
      ...options,
    },
    local.services,
    pushTargetsOf(local.services),
  );
}

describe('what the remote says, per file', () => {
  it('reports a refused file as rejected with its reason, and the rest of its part as not stored', async () => {
    const failed = upload('failed', {
      error: { code: 'no_text_layer', message: 'docs/codeblock.md: refused by the remote' },
      files: [
        {
          source: 'docs/codeblock.md',
          format: 'markdown',
          status: 'rejected',
          chunks: 0,
          error: { code: 'no_text_layer', message: 'docs/codeblock.md: refused by the remote' },
        },
        { source: 'docs/umlauts-utf8.md', format: 'markdown', status: 'ingested', chunks: 1 },
      ],
    });
    const report = await push(async (_url, init) =>
      init.method === 'POST' ? reply(202, { data: upload('queued') }) : reply(200, { data: failed }),
    );
    expect(report.state).toBe('failed');
    expect(report.parts[0]!.files).toEqual([
      expect.objectContaining({
        source: 'docs/codeblock.md',
        status: 'rejected',
        error: { code: 'no_text_layer', message: 'docs/codeblock.md: refused by the remote' },
      }),
      expect.objectContaining({
        source: 'docs/umlauts-utf8.md',
        status: 'not_stored',
        error: expect.objectContaining({
          message: expect.stringMatching(/^Not stored: the remote refused the part/),
        }),
      }),
    ]);
    expect(report.totals).toMatchObject({ rejected: 1, not_stored: 1, accepted: 0 });
  });

  it('waits out a 429 with its Retry-After, then sends the part again', async () => {
    let posts = 0;
    const done = upload('completed', {
      files: [
        { source: 'docs/codeblock.md', format: 'markdown', status: 'ingested', chunks: 2 },
        { source: 'docs/umlauts-utf8.md', format: 'markdown', status: 'unchanged', chunks: 1 },
      ],
      documentCount: 2,
      chunkCount: 3,
    });
    const report = await push(async (_url, init) => {
      if (init.method !== 'POST') return reply(200, { data: done });
      await new Response(init.body).arrayBuffer();
      return ++posts === 1
        ? reply(
            429,
            { error: { code: 'rate_limited', message: 'slow down', retryAfter: 0 } },
            { 'retry-after': '0' },
          )
        : reply(202, { data: upload('queued') });
    });
    expect(posts).toBe(2);
    expect(report.parts[0]!.attempts).toBe(2);
    expect(report.parts[0]!.files.map((f) => [f.source, f.status, f.chunks])).toEqual([
      ['docs/codeblock.md', 'accepted', 2],
      ['docs/umlauts-utf8.md', 'unchanged', 1],
    ]);
    expect(report).toMatchObject({ state: 'completed', remoteDocumentCount: 2, remoteChunkCount: 3 });
  });

  it.each([
    ['pushed with this key', apiKeyFingerprint('kbs_scripted')],
    ['remembered before keys were', undefined],
  ])(
    'forgets a remembered remote listing that is gone (%s) and creates a new draft',
    async (_when, fingerprint) => {
      const targets = pushTargetsOf(local.services);
      targets.rememberRemoteListing('http://remote.test/v1', listingId, 'lst_deleted', fingerprint);
      const configs: Record<string, unknown>[] = [];
      const report = await push(async (url, init) => {
        if (init.method !== 'POST')
          return reply(200, { data: upload('completed', { listingId: 'lst_new' }) });
        const form = await new Request(url, {
          method: 'POST',
          body: init.body,
          headers: init.headers,
          duplex: 'half',
        } as RequestInit).formData();
        const config = JSON.parse(String(form.get('config'))) as Record<string, unknown>;
        configs.push(config);
        return config.listing_id === 'lst_deleted'
          ? reply(404, {
              error: { code: 'listing_not_found', message: "Listing 'lst_deleted' was not found." },
            })
          : reply(202, { data: upload('queued', { listingId: 'lst_new' }) });
      });
      expect(configs.map((c) => c.listing_id)).toEqual(['lst_deleted', undefined]);
      expect(report.remoteListingId).toBe('lst_new');
      expect(targets.remoteListing('http://remote.test/v1', listingId)).toBe('lst_new');
      expect(targets.remoteListingKey('http://remote.test/v1', listingId)).toBe(
        apiKeyFingerprint('kbs_scripted'),
      );
    },
  );
});

/** A remote that never answers, until the request is aborted. */
const hangs = (_url: string, init: RequestInit) =>
  new Promise<Response>((_, reject) =>
    init.signal?.addEventListener('abort', () => reject(init.signal!.reason as Error)),
  );

describe('PushJobs', () => {
  it('fails the start when the push fails before its first report, and keeps finished jobs readable', async () => {
    const jobs = new PushJobs();
    await expect(jobs.start(() => Promise.reject(new Error('no such listing')))).rejects.toThrow(
      'no such listing',
    );

    const job = await jobs.start((signal, onUpdate) =>
      pushListing(
        { listingId, baseUrl: 'http://remote.test/v1', apiKey: 'k', signal, onUpdate, fetch: hangs },
        local.services,
        pushTargetsOf(local.services),
      ),
    );
    expect(job.state).toBe('running');
    const events: string[] = [];
    jobs.subscribe(job.id, (e) => events.push(`${e.type}:${e.job.state}`));
    jobs.cancel(job.id);
    const final = await jobs.settled(job.id);
    expect(final).toMatchObject({ state: 'cancelled', error: { code: 'cancelled' } });
    expect(events.at(-1)).toBe('done:cancelled');
    expect(jobs.get(job.id)).toEqual(final);
    expect(jobs.list().map((j) => j.id)).toContain(job.id);
  });
});
