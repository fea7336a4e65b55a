import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkBeirFolder, readCorpus, readQrels, readQueries } from '../../../../src/core/retrieve/eval/beir';
import { writeCorpusAsJson } from '../../../../src/core/retrieve/eval/corpusFiles';
import { SHARED, tempDir } from '../../../helpers/studio';

const scratch = tempDir('kbs-beir-');
afterAll(() => scratch.remove());

function dataset(name: string, files: { corpus?: string; queries?: string; qrels?: string }): string {
  const dir = join(scratch.path, name);
  mkdirSync(join(dir, 'qrels'), { recursive: true });
  writeFileSync(join(dir, 'corpus.jsonl'), files.corpus ?? '{"_id":"d1","title":"T","text":"x"}\n');
  writeFileSync(join(dir, 'queries.jsonl'), files.queries ?? '{"_id":"q1","text":"x"}\n');
  if (files.qrels !== undefined) writeFileSync(join(dir, 'qrels', 'test.tsv'), files.qrels);
  return dir;
}

describe('BEIR datasets', () => {
  it('reads the shared dbpedia-5k: 5,000 documents, 50 queries, graded judgments for 40', async () => {
    const dir = join(SHARED, 'eval', 'dbpedia-5k');
    await checkBeirFolder(dir);
    let count = 0;
    let first;
    for await (const doc of readCorpus(dir)) {
      first ??= doc;
      count++;
    }
    expect(count).toBe(5000);
    expect(first).toMatchObject({ id: '<dbpedia:Oceanic_Airlines>', title: 'Oceanic Airlines' });
    expect((await readQueries(dir))[0]).toEqual({ id: 'SemSearch_ES-2', text: 'B. F. Skinner' });
    const qrels = await readQrels(dir);
    expect(qrels.size).toBe(40);
    expect(qrels.get('INEX_LD-2010019')?.get('<dbpedia:Arènes_de_Lutèce>')).toBe(2);
  });

  it('skips the qrels header, keeps the highest grade of a repeated pair and accepts spaces', async () => {
    const dir = dataset('ok', { qrels: 'query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t2\nq2 d9 0\n' });
    const qrels = await readQrels(dir);
    expect([...qrels.get('q1')!]).toEqual([['d1', 2]]);
    expect([...qrels.get('q2')!]).toEqual([['d9', 0]]);
  });

  it('names the missing file and the bad line', async () => {
    const missing = dataset('missing', {});
    await expect(checkBeirFolder(missing)).rejects.toThrow(/qrels\/test\.tsv: not found/);
    const bad = dataset('bad', {
      corpus: '{"_id":"d1","text":"x"}\n{oops\n',
      queries: '{"text":"no id"}\n',
      qrels: 'query-id\tcorpus-id\tscore\nq1\td1\n',
    });
    await expect(async () => {
      for await (const _ of readCorpus(bad)) void _;
    }).rejects.toThrow(/corpus\.jsonl line 2: not valid JSON/);
    await expect(readQueries(bad)).rejects.toThrow(/queries\.jsonl line 1: "_id" must be a non-empty string/);
    await expect(readQrels(bad)).rejects.toThrow(
      /test\.tsv line 2: expected "query-id<TAB>corpus-id<TAB>score"/,
    );
  });

  it('writes the corpus as JSON documents of title + text that keep the corpus id', async () => {
    const dir = dataset('json', {
      corpus: '{"_id":"d1","title":"Title","text":"Body one."}\n{"_id":2,"title":"","text":"Body two."}\n',
    });
    const { files, documents } = await writeCorpusAsJson(readCorpus(dir), join(scratch.path, 'out'));
    expect(documents).toBe(2);
    expect(JSON.parse(readFileSync(files[0]!, 'utf8'))).toEqual([
      { text: 'Title\nBody one.', corpusId: 'd1' },
      { text: 'Body two.', corpusId: '2' },
    ]);
  });
});
