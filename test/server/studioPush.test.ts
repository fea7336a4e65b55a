import { readdirSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { recoverInterruptedJobs } from '../../src/db/repositories/jobJournal';
import type { PushJob } from '../../src/shared/push';
import { flakyProxy, listingWithFixtures, remoteKey, type FlakyProxy } from '../helpers/pushRemote';
import { FIXTURES, json, startStudio, type TestStudio } from '../helpers/studio';

let studio: TestStudio;
let remote: TestStudio;
let key: string;

beforeAll(async () => {
  [studio, remote] = await Promise.all([startStudio(), startStudio({ rateLimits: { perKey: 10_000 } })]);
  key = remoteKey(remote);
});
afterAll(async () => {
  await Promise.all([studio?.close(), remote?.close()]);
});

const studioFetch = (path: string, init: { method?: string; body?: unknown } = {}) => {
  const headers = new Headers({ 'X-Studio-Token': studio.studioToken });
  if (init.body !== undefined) headers.set('Content-Type', 'application/json');
  return fetch(studio.url + path, {
    method: init.method,
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
};

/** The SSE stream of a push job, read to its end. */
async function follow(jobId: string): Promise<{ event: string; job: PushJob }[]> {
  const res = await studioFetch(`/studio/push/jobs/${jobId}/events`);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  return (await res.text())
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => ({
      event: /^event: (.+)$/m.exec(block)![1]!,
      job: JSON.parse(/^data: (.+)$/m.exec(block)![1]!) as PushJob,
    }));
}

async function startPush(body: Record<string, unknown>): Promise<PushJob> {
  const res = await studioFetch('/studio/push', { method: 'POST', body });
  expect(res.status).toBe(202);
  return (await json(res)).data as PushJob;
}

/** Every fixture document, as a creator would drop the folder (the ZIP's entries at the top level). */
async function fixturesKnowledgeBase(): Promise<string> {
  const listing = studio.services.listings.create(
    { title: 'Fixture handbook', accessModel: 'one_time', price: 1 },
    studio.services.wallets.defaultWallet().address,
  );
  const inputs = readdirSync(FIXTURES).map((f) => ({
    path: join(FIXTURES, f),
    name: f.endsWith('.zip') ? f : `docs/${f}`,
  }));
  await studio.services.ingestion.run({
    listingId: listing.id,
    inputs,
    atomic: false,
    limits: STUDIO_LIMITS,
  });
  return listing.id;
}

describe('studio push targets', () => {
  it('saves, lists, changes and forgets targets; the key never comes back, only masked', async () => {
    const apiKey = 'kbs_0123456789abcdefghijklmnopqrstuv';
    const created = await studioFetch('/studio/push/targets', {
      method: 'POST',
      body: { baseUrl: 'https://hosted.example.com', apiKey, label: 'Hosted' },
    });
    expect(created.status).toBe(201);
    const target = (await json(created)).data;
    expect(target).toMatchObject({
      id: expect.stringMatching(/^tgt_/),
      baseUrl: 'https://hosted.example.com/v1',
      maskedKey: 'kbs_••••stuv',
      label: 'Hosted',
    });
    const listed = await studioFetch('/studio/push/targets');
    const text = await listed.text();
    expect(text).not.toContain(apiKey);
    expect(JSON.parse(text).data.map((t: { id: string }) => t.id)).toContain(target.id);

    const patched = await studioFetch(`/studio/push/targets/${target.id}`, {
      method: 'PATCH',
      body: { apiKey: 'kbs_zzzzzzzzzzzzzzzzzzzzzzzzzzzz9999' },
    });
    expect((await json(patched)).data.maskedKey).toBe('kbs_••••9999');

    const bad = await studioFetch('/studio/push/targets', {
      method: 'POST',
      body: { baseUrl: 'ftp://nope', apiKey },
    });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toMatch(/http\(s\)/);

    expect((await studioFetch(`/studio/push/targets/${target.id}`, { method: 'DELETE' })).status).toBe(200);
    const after = (await json(await studioFetch('/studio/push/targets'))).data;
    expect(after.map((t: { id: string }) => t.id)).not.toContain(target.id);
  });
});

describe('studio push, end to end against a second server', () => {
  let proxy: FlakyProxy | undefined;
  afterAll(() => proxy?.close());

  it(
    'pushes the fixture knowledge base in several parts through a failing link, complete and without duplicates',
    { timeout: 90_000 },
    async () => {
      const listingId = await fixturesKnowledgeBase();
      const localDocs = studio.services.knowledgeBase.documents(listingId);
      const localListing = studio.services.listings.get(listingId, 'studio');
      expect(localDocs.length).toBeGreaterThan(20);

      // Upload 2 is answered 503; upload 4 reaches the remote but its answer is cut off.
      proxy = await flakyProxy(remote.url, (n) => (n === 2 ? '503' : n === 4 ? 'drop-response' : 'pass'));
      const saved = (
        await json(
          await studioFetch('/studio/push/targets', {
            method: 'POST',
            body: { baseUrl: proxy.url, apiKey: key },
          }),
        )
      ).data;
      const started = await startPush({ listingId, targetId: saved.id, maxPartFiles: 6 });
      expect(started).toMatchObject({ id: expect.stringMatching(/^push_/), state: 'running', listingId });

      const events = await follow(started.id);
      const done = events.at(-1)!;
      expect(done.event).toBe('done');
      const report = done.job;
      expect(report.error).toBeNull();
      expect(report.state).toBe('completed');
      expect(report.parts.length).toBe(Math.ceil(localDocs.length / 6));
      expect(report.parts.every((p) => p.fileCount <= 6)).toBe(true);
      expect(report.parts.map((p) => p.attempts)).toEqual(
        report.parts.map((_, i) => (i === 1 || i === 2 ? 2 : 1)),
      );
      expect(proxy.uploads.slice(0, 5)).toEqual(['pass', '503', 'pass', 'drop-response', 'pass']);
      expect(events.some((e) => e.job.parts.some((p) => p.state === 'packing'))).toBe(true);
      expect(events.some((e) => e.job.parts.some((p) => p.state === 'processing'))).toBe(true);
      expect(report.totals).toMatchObject({
        files: localDocs.length,
        rejected: 0,
        not_stored: 0,
        missing: 0,
      });
      // The upload whose answer was lost was stored by the remote: its retry found every file unchanged.
      const retried = report.parts[2]!;
      expect(retried.files.every((f) => f.status === 'unchanged')).toBe(true);

      // The other side holds the same documents with the same chunks, in one listing.
      const remoteIds = remote.services.db.prepare('SELECT id FROM listings').pluck().all();
      expect(remoteIds).toEqual([report.remoteListingId]);
      expect(remote.services.listings.get(report.remoteListingId!, 'studio')).toMatchObject({
        title: 'Fixture handbook',
        // A file each, a JSON array's items one each (spec §2): the same count on both sides.
        documentCount: localListing.documentCount,
        chunkCount: localListing.chunkCount,
      });
      const remoteDocs = remote.services.knowledgeBase.documents(report.remoteListingId!);
      expect(remoteDocs.map((d) => [d.source, d.contentHash, d.chunkCount])).toEqual(
        localDocs.map((d) => [d.source, d.contentHash, d.chunkCount]),
      );
      expect(report.remoteChunkCount).toBe(localListing.chunkCount);

      // The snapshot endpoint gives the same final report.
      const snapshot = (await json(await studioFetch(`/studio/push/jobs/${started.id}`))).data;
      expect(snapshot).toEqual(report);
    },
  );

  it('surfaces a wrong API key as an authentication error naming the target', async () => {
    const listingId = await listingWithFixtures(studio, ['codeblock.md']);
    const started = await startPush({
      listingId,
      baseUrl: remote.url,
      apiKey: 'kbs_notakeynotakeynotakeynotakey00',
    });
    const report = (await follow(started.id)).at(-1)!.job;
    expect(report.state).toBe('failed');
    expect(report.error!.code).toBe('unauthorized');
    expect(report.error!.message).toContain(`Authentication failed at ${remote.url}/v1`);
    expect(report.parts[0]!.files[0]).toMatchObject({ source: 'docs/codeblock.md', status: 'not_stored' });
  });

  it('remembers a target given with remember: true only once the service accepted its key', async () => {
    const listingId = await listingWithFixtures(studio, ['codeblock.md']);
    const savedFor = async (url: string) =>
      (
        (await json(await studioFetch('/studio/push/targets'))).data as {
          baseUrl: string;
          maskedKey: string;
        }[]
      ).find((t) => t.baseUrl === url);
    const v1 = `${remote.url}/v1`;
    const good = await startPush({ listingId, baseUrl: remote.url, apiKey: key, remember: true });
    expect((await follow(good.id)).at(-1)!.job.state).toBe('completed');
    const masked = `kbs_••••${key.slice(-4)}`;
    expect(await savedFor(v1)).toMatchObject({ maskedKey: masked });

    // A mistyped key: refused by the service, and the working key stays saved.
    const typo = await startPush({
      listingId,
      baseUrl: remote.url,
      apiKey: 'kbs_typotypotypotypotypotypotoTyp',
      remember: true,
    });
    expect((await follow(typo.id)).at(-1)!.job.error!.code).toBe('unauthorized');
    expect(await savedFor(v1)).toMatchObject({ maskedKey: masked });

    // An unknown listing: refused at once, nothing saved.
    const unknown = await studioFetch('/studio/push', {
      method: 'POST',
      body: {
        listingId: 'lst_nope',
        baseUrl: remote.url,
        apiKey: 'kbs_otherotherotherotherotherother1',
        remember: true,
      },
    });
    expect(unknown.status).toBe(404);
    expect(await savedFor(v1)).toMatchObject({ maskedKey: masked });

    // An address that is not the API: no target saved for it.
    const notApi = await startPush({
      listingId,
      baseUrl: `${remote.url}/api/v1`,
      apiKey: key,
      remember: true,
    });
    expect((await follow(notApi.id)).at(-1)!.job.error!.code).toBe('not_a_marketplace_api');
    expect(await savedFor(`${remote.url}/api/v1`)).toBeUndefined();
  });

  it('cancels a push that waits on a silent host', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const listingId = await listingWithFixtures(studio, ['umlauts-utf8.md']);
      const started = await startPush({ listingId, baseUrl: `http://127.0.0.1:${port}`, apiKey: key });
      const events = follow(started.id);
      // The push's first question (is this an API?) reaches the host and gets no answer.
      for (let i = 0; i < 200 && sockets.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(sockets.length).toBeGreaterThan(0);
      const job = (await json(await studioFetch(`/studio/push/jobs/${started.id}`))).data as PushJob;
      expect(job.state).toBe('running');
      const twice = await studioFetch('/studio/push', {
        method: 'POST',
        body: { listingId, baseUrl: `http://127.0.0.1:${port}`, apiKey: key },
      });
      expect(twice.status).toBe(409);
      expect((await json(twice)).error.message).toContain(`already being pushed (job ${started.id})`);
      const cancel = await studioFetch(`/studio/push/jobs/${started.id}/cancel`, { method: 'POST' });
      expect(cancel.status).toBe(200);
      const report = (await events).at(-1)!.job;
      expect(report.state).toBe('cancelled');
      expect(report.error).toMatchObject({ code: 'cancelled' });
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it('refuses a start without a key, an unknown listing and an unknown job clearly', async () => {
    const noKey = await studioFetch('/studio/push', {
      method: 'POST',
      body: { listingId: 'lst_x', baseUrl: remote.url },
    });
    expect(noKey.status).toBe(400);
    expect((await json(noKey)).error.message).toMatch(/apiKey/);
    const unknown = await studioFetch('/studio/push', {
      method: 'POST',
      body: { listingId: 'lst_nope', baseUrl: remote.url, apiKey: key },
    });
    expect(unknown.status).toBe(404);
    expect((await studioFetch('/studio/push/jobs/push_nope')).status).toBe(404);
  });

  it('reports a push a stop interrupted until dismissed, or until a push of its listing completes', async () => {
    const listingId = await listingWithFixtures(studio, ['codeblock.md']);
    // Pushes an earlier process journaled and never ended, found by this start (as after a kill).
    const plan = { target: remote.url, remoteListingId: null, parts: 1, files: 1, bytes: 1234 };
    studio.services.pushJournal.opened({
      id: 'push_cut1',
      listingId,
      startedAt: '2026-11-28T09:00:00.000Z',
      plan,
    });
    studio.services.pushJournal.opened({
      id: 'push_cut2',
      listingId,
      startedAt: '2026-11-28T09:30:00.000Z',
      plan,
    });
    recoverInterruptedJobs(studio.services.db);

    const ofListing = async () =>
      ((await json(await studioFetch('/studio/push/jobs'))).data as PushJob[]).filter(
        (j) => j.listingId === listingId,
      );
    const reported = await ofListing();
    expect(reported.map((j) => [j.id, j.state])).toEqual([
      ['push_cut2', 'interrupted'],
      ['push_cut1', 'interrupted'],
    ]);
    expect(reported[0]).toEqual({
      id: 'push_cut2',
      listingId,
      target: remote.url,
      remoteListingId: null,
      state: 'interrupted',
      parts: [],
      missing: [],
      // No part had got an upload: its file was not stored (every file counted once).
      totals: {
        files: 1,
        bytes: 1234,
        accepted: 0,
        unchanged: 0,
        rejected: 0,
        not_stored: 1,
        unconfirmed: 0,
        missing: 0,
      },
      remoteDocumentCount: null,
      remoteChunkCount: null,
      error: {
        code: 'interrupted',
        message:
          'The studio stopped before this push ended. The parts the service had completed stay there: push again to resume, and what the service already holds comes back unchanged.',
      },
      startedAt: '2026-11-28T09:30:00.000Z',
      finishedAt: null,
    });
    expect((await json(await studioFetch('/studio/push/jobs/push_cut2'))).data).toEqual(reported[0]);
    expect(await follow('push_cut2')).toEqual([{ event: 'done', job: reported[0] }]);
    const cancel = await studioFetch('/studio/push/jobs/push_cut2/cancel', { method: 'POST' });
    expect((await json(cancel)).data).toEqual(reported[0]);

    const dismissed = await studioFetch('/studio/push/jobs/push_cut2/dismiss', { method: 'POST' });
    expect(dismissed.status).toBe(200);
    expect((await studioFetch('/studio/push/jobs/push_cut2')).status).toBe(404);
    expect((await studioFetch('/studio/push/jobs/push_cut2/dismiss', { method: 'POST' })).status).toBe(404);

    // A push of the listing that completes: push_cut1 is no longer reported; the push cannot be dismissed.
    const pushed = await startPush({ listingId, baseUrl: remote.url, apiKey: key });
    expect((await follow(pushed.id)).at(-1)!.job.state).toBe('completed');
    expect((await ofListing()).map((j) => [j.id, j.state])).toEqual([[pushed.id, 'completed']]);
    const refused = await studioFetch(`/studio/push/jobs/${pushed.id}/dismiss`, { method: 'POST' });
    expect(refused.status).toBe(409);
    expect((await json(refused)).error.message).toBe(
      `Push job '${pushed.id}' is completed: only an interrupted one can be dismissed.`,
    );
    const left = studio.services.db.prepare(`SELECT count(*) FROM studio_jobs WHERE kind = 'push'`);
    expect(left.pluck().get()).toBe(0);
  });
});
