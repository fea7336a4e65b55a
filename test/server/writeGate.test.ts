import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommitSession, StagedDocumentWriter } from '../../src/core/ingest/store';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { generateKeypair } from '../../src/core/wallets/keypair';
import { FIXTURES, json, startStudio, tempDir, type TestStudio } from '../helpers/studio';
import { writeZip } from '../helpers/zip';

const DIMS = 8;
const OPTIONS = { model: 'test-model-8', dimensions: DIMS, maxChunks: 1_000, maxKnowledgeBaseBytes: null };

let studio: TestStudio | undefined;
afterEach(async () => {
  await studio?.close();
  studio = undefined;
});

/** A studio with a draft listing 'KB' of the default wallet. */
async function studioWithListing() {
  studio = await startStudio();
  const s = studio;
  const wallet = s.services.wallets.defaultWallet().address;
  const newListing = (title: string) =>
    s.services.listings.create({ title, accessModel: 'one_time', price: 0 }, wallet).id;
  return { s, wallet, newListing, listingId: newListing('KB') };
}

/**
 * A commit that this thread feeds, as the last documents of an ingestion or an import's lines are: once
 * its first batch is taken, its worker holds the write lock until `end()`.
 */
async function fedCommit(s: TestStudio, listingId: string) {
  const staging = s.services.knowledgeBase.createStaging(join(s.services.dataDir, 'tmp'));
  const session: CommitSession = s.services.knowledgeBase.beginCommit(listingId, staging, OPTIONS);
  const writer: StagedDocumentWriter = session.open({
    source: 'fed.jsonl',
    format: 'jsonl',
    contentHash: 'hash of fed.jsonl',
    bytes: 10,
    metadata: {},
  });
  const vector = Float32Array.from({ length: DIMS }, (_, i) => i + 1);
  await writer.add([{ text: 'fed kittiwake', tokenCount: 2, contentHash: 'h1', metadata: {}, vector }]);
  return {
    async end() {
      writer.finish();
      await session.finish();
      staging.dispose();
    },
  };
}

const studioWrite = (s: TestStudio, path: string, method: string, body: unknown) =>
  s.api(path, {
    method,
    headers: { 'Content-Type': 'application/json', 'X-Studio-Token': s.studioToken },
    body: JSON.stringify(body),
  });

/** Settles to 'pending' when the promise has not settled within `ms`. */
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms))]);

describe('writes while a commit this thread feeds holds the write lock', () => {
  it('wait for it and then succeed, instead of failing busy; reads and bad input are answered at once', async () => {
    const { s, listingId, newListing } = await studioWithListing();
    const other = newListing('Other');
    const commit = await fedCommit(s, listingId);

    const rename = studioWrite(s, `/studio/listings/${other}`, 'PATCH', { title: 'Renamed during a commit' });
    const newKey = studioWrite(s, '/studio/keys', 'POST', {});
    expect(await within(rename, 300)).toBe('pending');
    // Meanwhile the server answers reads, and refuses bad input without waiting.
    const read = await s.api(`/studio/listings/${other}`, { headers: { 'X-Studio-Token': s.studioToken } });
    expect(read.status).toBe(200);
    expect((await json(read)).data.title).toBe('Other');
    const bad = await studioWrite(s, `/studio/listings/${other}`, 'PATCH', { title: 42 });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toMatch(/title/);

    await commit.end();
    const renamed = await rename;
    expect(renamed.status).toBe(200);
    expect((await json(renamed)).data.title).toBe('Renamed during a commit');
    expect((await newKey).status).toBe(201);
    expect(s.services.listings.get(other, 'studio').title).toBe('Renamed during a commit');
    // The commit itself went in whole.
    const chunks = s.services.db
      .prepare(
        `SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.listing_id = ?`,
      )
      .pluck()
      .get(listingId);
    expect(chunks).toBe(1);
  });

  it('writes nothing for a client that hung up while it waited', async () => {
    const { s, listingId } = await studioWithListing();
    const commit = await fedCommit(s, listingId);
    const body = JSON.stringify({ title: 'Never saved', accessModel: 'one_time', price: 1 });
    const { port } = new URL(s.url);
    const sent = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/studio/listings',
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Studio-Token': s.studioToken },
    });
    sent.on('error', () => undefined);
    sent.end(body);
    // Received and waiting, then the client goes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    sent.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await commit.end();
    // A request made afterwards is served in order behind anything the first could still have done.
    expect((await studioWrite(s, `/studio/listings/${listingId}`, 'PATCH', { title: 'After' })).status).toBe(
      200,
    );
    const titles = s.services.db.prepare(`SELECT title FROM listings ORDER BY title`).pluck().all();
    expect(titles).toEqual(['After']);
  });

  it('accept an upload once its files are received and the commit has been fed', async () => {
    const { s, wallet, listingId } = await studioWithListing();
    const key = s.services.apiKeys.create(wallet).key;
    const scratch = tempDir('kbs-write-gate-');
    try {
      const zip = await writeZip(join(scratch.path, 'kb.zip'), {
        'a.md': { path: join(FIXTURES, 'codeblock.md') },
      });
      const commit = await fedCommit(s, listingId);
      const body = new FormData();
      body.append('files', new Blob([readFileSync(zip)]), 'kb.zip');
      const sent = s.api('/v1/upload', { key, method: 'POST', body });
      expect(await within(sent, 300)).toBe('pending');
      await commit.end();
      const res = await sent;
      expect(res.status).toBe(202);
      const { uploadId } = (await json(res)).data;
      await s.services.uploads.idle();
      const done = await json(await s.api(`/v1/upload/${uploadId}`, { key }));
      expect(done.data.status).toBe('completed');
    } finally {
      scratch.remove();
    }
  });

  it('answer a free retrieval at once, and a charged one after the commit, debited once', async () => {
    const { s, wallet, listingId } = await studioWithListing();
    const draft = s.services.listings.create(
      { title: 'Metered', accessModel: 'per_query', price: 0.002 },
      wallet,
    );
    await s.services.ingestion.run({
      listingId: draft.id,
      inputs: [{ path: join(FIXTURES, 'stanley-cups.csv') }],
      atomic: true,
      limits: STUDIO_LIMITS,
    });
    const metered = await s.services.publishing.publish(draft.id);
    const buyer = generateKeypair().address;
    const buyerKey = s.services.apiKeys.create(buyer).key;
    const creatorKey = s.services.apiKeys.create(wallet).key;
    await s.services.credentials.grant(metered.id, buyer, { balance: 0.005 });
    const retrieve = (key: string) =>
      s.api('/v1/retrieve', {
        key,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ listingId: metered.id, query: 'Maple Leafs Stanley Cups', topK: 2 }),
      });
    const balance = () =>
      s.services.db
        .prepare(`SELECT balance_lamports FROM credentials WHERE listing_id = ? AND holder_wallet = ?`)
        .pluck()
        .get(metered.id, buyer);
    expect(balance()).toBe(5_000_000);

    const commit = await fedCommit(s, listingId);
    expect((await retrieve(creatorKey)).status).toBe(200);
    const charged = retrieve(buyerKey);
    expect(await within(charged, 300)).toBe('pending');
    expect(balance()).toBe(5_000_000);
    await commit.end();
    const res = await charged;
    expect(res.status).toBe(200);
    expect((await json(res)).chunks).toHaveLength(2);
    expect(balance()).toBe(3_000_000);
  });
});
