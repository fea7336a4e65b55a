import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SHARED, tempDir } from '../helpers/studio';
import { cliRunner } from '../helpers/cli';
import { cliInProcess } from '../helpers/mainInProcess';

const DBPEDIA = join(SHARED, 'eval', 'dbpedia-5k');
const dir = tempDir('kbs-eval-cli-');
afterAll(() => dir.remove());

const dataDir = join(dir.path, 'data');
// What eval prints and its exit code do not depend on its running in a process of its own: main() runs
// in this one (a spawned kbstudio costs a second or more), but for one command seen end to end from outside.
const cli = cliInProcess(dataDir);
const cliProcess = cliRunner(dataDir);

const newListing = async (title: string) =>
  (await cli('--json', 'listings', 'create', '--title', title, '--access-model', 'one_time', '--price', '1'))
    .json.id as string;

describe('kbstudio eval', () => {
  it('ingests dbpedia-5k into an empty listing and reaches nDCG@10 >= 0.38 with the default hybrid ranking', async () => {
    const listing = await newListing('dbpedia-5k');
    const started = performance.now();
    // The command of this file seen end to end from outside: a real process, its exit status.
    const { code, json } = await cliProcess('--json', 'eval', '--listing', listing, DBPEDIA);
    const seconds = (performance.now() - started) / 1000;
    expect(code).toBe(0);
    expect(json).toMatchObject({
      queries: 40,
      skippedQueries: 10,
      mode: 'hybrid',
      listingId: listing,
      ingested: { documents: 5000, chunks: 5000 },
    });
    expect(json['ndcg@10']).toBeGreaterThanOrEqual(0.38);
    expect(json['recall@10']).toBeGreaterThan(0.2);
    expect(json['recall@100']).toBeGreaterThan(json['recall@10']);
    expect(json.mrr).toBeGreaterThan(0.5);
    expect(json.p50LatencyMs).toBeGreaterThan(0);
    expect(json.perQuery).toHaveLength(40);
    const skinner = json.perQuery.find((q: { id: string }) => q.id === 'SemSearch_ES-2');
    expect(skinner).toMatchObject({ query: 'B. F. Skinner', relevant: expect.any(Number) });
    expect(skinner.top[0]).toMatch(/^<dbpedia:/);
    expect(seconds).toBeLessThan(60);

    // The listing is no longer empty: a second run only queries, and lexical mode gives plain BM25.
    const lexical = await cli(
      '--json',
      'eval',
      '--listing',
      listing,
      DBPEDIA,
      '--mode',
      'lexical',
      '--k',
      '5',
    );
    expect(lexical.json).toMatchObject({ ingested: null, mode: 'lexical', queries: 40 });
    expect(lexical.json).toHaveProperty('ndcg@5');
    expect(lexical.json['ndcg@5']).toBeGreaterThan(0.3);
    // For people, the line says it in words, not `null`.
    const human = await cli('eval', '--listing', listing, DBPEDIA, '--mode', 'lexical', '--k', '5');
    expect(human.stdout).toMatch(/^ingested +no \(the listing already held chunks\)$/m);
  }, 120_000);

  it('refuses a folder that is not a BEIR dataset, and a listing whose chunks carry no corpus id', async () => {
    const listing = await newListing('docs');
    const incomplete = join(dir.path, 'incomplete');
    mkdirSync(incomplete, { recursive: true });
    writeFileSync(join(incomplete, 'corpus.jsonl'), '{"_id":"d1","text":"x"}\n');
    const missing = await cli('--json', 'eval', '--listing', listing, incomplete);
    expect(missing.code).toBe(1);
    expect(missing.json.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('queries.jsonl: not found'),
    });

    const notes = join(dir.path, 'notes.json');
    writeFileSync(notes, JSON.stringify([{ text: 'Airlines flying the Boeing 747 today.' }]));
    expect((await cli('--json', 'ingest', '--listing', listing, notes)).code).toBe(0);
    const unmapped = await cli('--json', 'eval', '--listing', listing, DBPEDIA, '--mode', 'lexical');
    expect(unmapped.code).toBe(1);
    expect(unmapped.json.error.message).toContain('without "corpusId" metadata');

    const badK = await cli('--json', 'eval', '--listing', listing, DBPEDIA, '--k', '0');
    expect(badK.json.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^--k: /),
    });
  });

  it('refuses qrels that judge no query before ingesting the corpus, leaving the listing empty', async () => {
    const listing = await newListing('mismatched');
    const dataset = join(dir.path, 'mismatched');
    mkdirSync(join(dataset, 'qrels'), { recursive: true });
    writeFileSync(
      join(dataset, 'corpus.jsonl'),
      '{"_id":"d1","title":"Boeing","text":"The Boeing 747 is a wide-body airliner."}\n',
    );
    writeFileSync(join(dataset, 'queries.jsonl'), '{"_id":"q1","text":"jumbo jet"}\n');
    writeFileSync(join(dataset, 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\nQ-1\td1\t1\n');
    const res = await cli('--json', 'eval', '--listing', listing, dataset);
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^qrels: no query has a judgment \(1 queries, 1 judged query ids\)/),
    });
    const shown = (await cli('--json', 'listings', 'show', listing)).json;
    expect(shown).toMatchObject({ documentCount: 0, chunkCount: 0 });
  });
});
