import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { SAMPLE_ITEMS } from '../core/retrieve/knowledgeBase';
import { json, SHARED, startStudio, tempDir, type TestStudio } from '../helpers/studio';

const DBPEDIA = join(SHARED, 'eval', 'dbpedia-5k');

let studio: TestStudio;
beforeAll(async () => {
  studio = await startStudio();
});
afterAll(() => studio.close());

const studioFetch = (path: string, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  headers.set('X-Studio-Token', studio.studioToken);
  return fetch(studio.url + path, { ...init, headers });
};

function createListing(title: string): string {
  const wallet = studio.services.wallets.defaultWallet().address;
  return studio.services.listings.create({ title, accessModel: 'one_time', price: 1 }, wallet).id;
}

/** A slice of dbpedia-5k: `queryCount` queries, their relevant documents and 80 others. */
function beirSlice(queryCount: number) {
  const lines = (file: string) => readFileSync(join(DBPEDIA, file), 'utf8').split('\n').filter(Boolean);
  const relevant = lines('qrels/test.tsv')
    .slice(1)
    .filter((l) => Number(l.split('\t')[2]) > 0);
  const withJudgments = new Set(relevant.map((l) => l.split('\t')[0]!));
  const queries = lines('queries.jsonl')
    .filter((q) => withJudgments.has((JSON.parse(q) as { _id: string })._id))
    .slice(0, queryCount);
  const ids = new Set(queries.map((q) => (JSON.parse(q) as { _id: string })._id));
  const qrels = relevant.filter((l) => ids.has(l.split('\t')[0]!));
  const judged = new Set(qrels.map((l) => l.split('\t')[1]!));
  const corpus = lines('corpus.jsonl');
  const picked = corpus.filter((l) => judged.has((JSON.parse(l) as { _id: string })._id));
  picked.push(...corpus.filter((l) => !judged.has((JSON.parse(l) as { _id: string })._id)).slice(0, 80));
  return {
    corpus: picked.join('\n') + '\n',
    queries: queries.join('\n') + '\n',
    qrels: ['query-id\tcorpus-id\tscore', ...qrels].join('\n') + '\n',
    queryIds: [...ids],
  };
}

describe('/studio evaluations', () => {
  it('ingests a BEIR slice into an empty listing, runs it and keeps the run', async () => {
    const listingId = createListing('dbpedia slice');
    const slice = beirSlice(6);
    const form = new FormData();
    form.append('files', new Blob([slice.corpus]), 'corpus.jsonl');
    form.append('files', new Blob([slice.queries]), 'queries.jsonl');
    form.append('files', new Blob([slice.qrels]), 'test.tsv');
    form.append('mode', 'hybrid');
    form.append('name', 'slice hybrid');
    // The corpus's documents are written to the evaluation's scratch folder: the source store moves them.
    const store = studio.services.sources;
    const put = store.put.bind(store);
    const moves = new Set<boolean | undefined>();
    store.put = (hash, file, options) => {
      moves.add(options?.move);
      return put(hash, file, options);
    };
    let res: Response;
    try {
      res = await studioFetch(`/studio/listings/${listingId}/evaluations`, { method: 'POST', body: form });
    } finally {
      store.put = put;
    }
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect([...moves]).toEqual([true]);
    const run = body.data;
    expect(run.name).toBe('slice hybrid');
    expect(run.report.settings).toMatchObject({
      mode: 'hybrid',
      k: 10,
      topK: 100,
      denseWeight: 0.3,
      dataset: 'BEIR set',
      // The corpus is ingested as JSON documents with the default chunking.
      chunking: { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 },
    });
    expect(run.report.settings.chunkCount).toBeGreaterThan(80);
    const { metrics, questions, distribution } = run.report;
    expect(metrics.queries).toBe(6);
    expect(metrics.ndcgAt10).toBeGreaterThan(0.2);
    expect(metrics.recallAt100).toBeGreaterThanOrEqual(metrics.recallAt10);
    expect(questions.map((q: { id: string }) => q.id)).toEqual(slice.queryIds);
    const hit = questions.find((q: { hits: { relevant: boolean }[] }) => q.hits.some((h) => h.relevant));
    expect(hit.hits[0].id).toMatch(/^<dbpedia:/);
    expect(distribution).toHaveLength(20);
    const relevantScores = distribution.reduce((n: number, b: { relevant: number }) => n + b.relevant, 0);
    expect(relevantScores).toBeGreaterThan(0);

    const list = (await json(await studioFetch(`/studio/listings/${listingId}/evaluations`))).data;
    expect(list.map((r: { id: string }) => r.id)).toEqual([run.id]);
  });

  it('runs hand-written questions with expected text, and finds hits and misses', async () => {
    const listingId = createListing('sample');
    const dir = tempDir('kbs-eval-');
    const file = join(dir.path, 'items.json');
    writeFileSync(file, JSON.stringify(SAMPLE_ITEMS));
    await studio.services.ingestion.run({
      listingId,
      inputs: [{ path: file }],
      atomic: true,
      limits: STUDIO_LIMITS,
    });
    dir.remove();
    const res = await studioFetch(`/studio/listings/${listingId}/evaluations`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        mode: 'lexical',
        questions: [
          { question: 'galaxy telescope', expectedText: 'distant galaxy' },
          { question: 'galaxy telescope', expectedText: 'text that no chunk holds' },
        ],
      }),
    });
    const run = (await json(res)).data;
    expect(res.status).toBe(201);
    expect(run.report.questions[0]).toMatchObject({ reciprocalRank: 1, missed: [] });
    expect(run.report.questions[0].hits[0]).toMatchObject({ relevant: true });
    expect(run.report.questions[1]).toMatchObject({
      reciprocalRank: 0,
      missed: ['text: text that no chunk holds'],
    });
    expect(run.report.metrics.mrr).toBe(0.5);
    // Lexical runs have no dense weight; the chunking is what the documents were cut with.
    expect(run.report.settings).toMatchObject({
      denseWeight: null,
      topK: 100,
      chunking: { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 },
    });
  });

  /** POSTs one question file as the page uploads it. */
  const postQuestionFile = (listingId: string, name: string, content: string) => {
    const form = new FormData();
    form.append('files', new Blob([content]), name);
    return studioFetch(`/studio/listings/${listingId}/evaluations`, { method: 'POST', body: form });
  };

  it('reads a CSV question file and names a bad row', async () => {
    const res = await postQuestionFile(
      createListing('csv'),
      'questions.csv',
      'question,expected_source\n"no source",\n',
    );
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toBe(
      'questions.csv row 1: give "expected_source" or "expected_text" for "no source".',
    );
  });

  it('says a question CSV has no "question" column, naming the columns it found', async () => {
    const res = await postQuestionFile(
      createListing('csv header'),
      'bad.csv',
      'q,answer\nwho signs,lease.pdf\n',
    );
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toBe(
      'bad.csv: no "question" column in its header (found "q", "answer"); the first line must name a "question" column and an "expected_source" or "expected_text" column (or both).',
    );
  });

  it('reports an expected source that names no document, leaves its question out, and refuses a run of only such', async () => {
    const listingId = createListing('sources');
    const dir = tempDir('kbs-eval-');
    const file = join(dir.path, 'items.json');
    writeFileSync(file, JSON.stringify(SAMPLE_ITEMS));
    await studio.services.ingestion.run({
      listingId,
      inputs: [{ path: file }],
      atomic: true,
      limits: STUDIO_LIMITS,
    });
    dir.remove();
    const post = (questions: object[]) =>
      studioFetch(`/studio/listings/${listingId}/evaluations`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ mode: 'lexical', questions }),
      });
    const res = await post([
      { question: 'galaxy telescope', expectedSource: 'items.json' },
      { question: 'What is an abomination?', expectedSource: 'nonexistent.pdf' },
      { question: 'galaxy', expectedSource: 'Items.JSON' },
    ]);
    expect(res.status).toBe(201);
    const { report } = (await json(res)).data;
    expect(report.unknownSources).toEqual([
      { id: 'q2', question: 'What is an abomination?', source: 'nonexistent.pdf', scored: false },
      { id: 'q3', question: 'galaxy', source: 'Items.JSON', scored: false, suggestion: 'items.json' },
    ]);
    expect(report.metrics.queries).toBe(1);
    expect(report.questions).toHaveLength(1);
    expect(report.questions[0]).toMatchObject({ id: 'q1', reciprocalRank: 1, missed: [] });

    const refused = await post([{ question: 'What is an abomination?', expectedSource: 'nonexistent.pdf' }]);
    expect(refused.status).toBe(400);
    expect((await json(refused)).error.message).toMatch(
      /^No question can be scored: no document of the listing is named "nonexistent\.pdf"\./,
    );
    const runs = (await json(await studioFetch(`/studio/listings/${listingId}/evaluations`))).data;
    expect(runs).toHaveLength(1);
  });

  it('refuses a BEIR set without its qrels, naming the missing file', async () => {
    const listingId = createListing('beir');
    const form = new FormData();
    form.append('files', new Blob(['{"_id":"q1","text":"x"}\n']), 'queries.jsonl');
    const res = await studioFetch(`/studio/listings/${listingId}/evaluations`, {
      method: 'POST',
      body: form,
    });
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toContain('the qrels file is missing');
  });

  it('refuses a hand-written question without an expected answer, as a question file row', async () => {
    const listingId = createListing('hand-written');
    const res = await studioFetch(`/studio/listings/${listingId}/evaluations`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ questions: [{ question: 'x' }] }),
    });
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toMatch(
      /^questions\.0\.expectedSource: give expectedSource or expectedText/,
    );
  });

  it('names an uploaded file as sent, checks the name field, and refuses qrels judging no query, before ingesting', async () => {
    const listingId = createListing('beir checks');
    const post = async (files: [string, string][], name?: string) => {
      const form = new FormData();
      for (const [file, text] of files) form.append('files', new Blob([text]), file);
      if (name !== undefined) form.append('name', name);
      const res = await studioFetch(`/studio/listings/${listingId}/evaluations`, {
        method: 'POST',
        body: form,
      });
      return { status: res.status, message: (await json(res)).error?.message as string };
    };
    const queries: [string, string] = ['queries.jsonl', '{"_id":"q1","text":"who won the cup"}\n'];
    const corpus: [string, string] = ['corpus.jsonl', '{"_id":"d1","title":"Cup","text":"The Blues won."}\n'];

    const badQrels = await post([queries, ['bad.tsv', 'query-id,corpus-id,score\nq1,d1,1\n']]);
    expect(badQrels).toEqual({
      status: 400,
      message: 'bad.tsv line 2: expected "query-id<TAB>corpus-id<TAB>score".',
    });
    expect(badQrels.message).not.toContain(studio.services.dataDir);

    const longName = await post([queries, ['test.tsv', 'q1\td1\t1\n']], 'a'.repeat(300));
    expect(longName.status).toBe(400);
    expect(longName.message).toMatch(/^name: /);

    const nothingJudged = await post([corpus, queries, ['test.tsv', 'nope-1\td1\t1\n']]);
    expect(nothingJudged).toEqual({
      status: 400,
      message:
        'qrels: no query has a judgment (1 queries, 1 judged query ids): the wrong qrels file, or query ids written differently?',
    });
    // Refused before the corpus was ingested into the empty listing.
    expect(studio.services.listings.get(listingId, 'studio').chunkCount).toBe(0);
    expect((await json(await studioFetch(`/studio/listings/${listingId}/evaluations`))).data).toEqual([]);
  });
});
