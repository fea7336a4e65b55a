import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { E2eStudio, SHARED, shootAll } from '../helpers/e2e';

/**
 * Evaluation end to end, in Chromium, against a real `kbstudio serve`: two runs of a dbpedia-5k
 * slice under different settings, their metrics, the score plot, and the runs compared side by
 * side. Also the Playground and Settings views in both themes at both sizes (screenshots).
 */

const dbpedia = join(SHARED, 'eval', 'dbpedia-5k');
const studio = new E2eStudio('kbstudio-e2e-eval-');
const openStudio = (hash: string) => studio.openStudio(hash, { defaultTimeout: 20_000 });
let sliceDir: string;
let sliceQueries = 0;

/** 250 corpus documents of dbpedia-5k and up to 8 queries whose relevant documents are all in them. */
function writeSlice(dir: string): number {
  const lines = (file: string) => readFileSync(join(dbpedia, file), 'utf8').split('\n').filter(Boolean);
  const relevant = lines('qrels/test.tsv')
    .slice(1)
    .map((l) => l.split('\t'))
    .filter((cells) => Number(cells[2]) > 0);
  const byQuery = new Map<string, string[]>();
  for (const [q, doc] of relevant) byQuery.set(q!, [...(byQuery.get(q!) ?? []), doc!]);
  const picked = new Set<string>();
  const queries: string[] = [];
  for (const [q, docs] of byQuery) {
    if (picked.size + docs.length > 150 || queries.length >= 8) continue;
    docs.forEach((d) => picked.add(d));
    queries.push(q);
  }
  const corpus = lines('corpus.jsonl');
  const ids = corpus.map((l) => (JSON.parse(l) as { _id: string })._id);
  for (const id of ids) if (picked.size < 250) picked.add(id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'corpus.jsonl'), corpus.filter((_l, i) => picked.has(ids[i]!)).join('\n') + '\n');
  const wanted = new Set(queries);
  const queryLines = lines('queries.jsonl').filter((l) => wanted.has((JSON.parse(l) as { _id: string })._id));
  writeFileSync(join(dir, 'queries.jsonl'), queryLines.join('\n') + '\n');
  const judged = relevant.filter((c) => wanted.has(c[0]!)).map((c) => c.join('\t'));
  writeFileSync(join(dir, 'test.tsv'), ['query-id\tcorpus-id\tscore', ...judged].join('\n') + '\n');
  return queries.length;
}

async function runEvaluation(page: Page, mode: 'Hybrid' | 'Lexical', name: string): Promise<void> {
  await page
    .locator('input[type=file]')
    .setInputFiles(['corpus.jsonl', 'queries.jsonl', 'test.tsv'].map((f) => join(sliceDir, f)));
  await page.getByRole('radiogroup').getByText(mode, { exact: true }).click();
  await page.getByRole('textbox', { name: 'Run name' }).fill(name);
  await page.getByRole('button', { name: 'Run evaluation' }).click();
  const runs = page
    .getByRole('table', { name: 'Evaluation runs' })
    .getByRole('row')
    .filter({ hasText: name });
  await runs.waitFor({ timeout: 90_000 });
}

describe('evaluation runs compared, in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    sliceDir = join(studio.dataDir, 'slice');
    sliceQueries = writeSlice(sliceDir);
    await studio.runCli([
      'listings',
      'create',
      '--title',
      'DBpedia slice',
      '--access-model',
      'one_time',
      '--price',
      '1',
    ]);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('records each run’s settings and compares two runs side by side, the better values highlighted', async () => {
    const page = await openStudio('#/evaluation');
    await page.getByRole('heading', { name: 'Evaluation' }).waitFor();
    await page.getByText('No runs yet').waitFor();

    await runEvaluation(page, 'Hybrid', 'slice hybrid');
    const ndcg = page.getByTestId('metric-ndcgAt10');
    await ndcg.waitFor();
    expect(Number(await ndcg.textContent())).toBeGreaterThan(0.2);
    // The plot is drawn (bars in an SVG), with the numbers behind it for screen readers.
    const plot = page.getByRole('img', { name: 'Score distribution' });
    await expect.poll(() => plot.locator('path.recharts-rectangle').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('histogram-bin').count()).toBe(20);
    expect(await page.getByRole('table', { name: 'Per-question results' }).getByRole('row').count()).toBe(
      sliceQueries + 1,
    );
    await page
      .getByText(/hybrid \(dense weight 0\.30\) · .+ · recursive · 512 \/ 64 tokens · \d+ chunks/)
      .waitFor();

    await runEvaluation(page, 'Lexical', 'slice lexical');
    const rows = page.getByRole('table', { name: 'Evaluation runs' }).getByRole('row');
    await expect.poll(() => rows.count()).toBe(3);
    await expect
      .poll(() => rows.nth(1).innerText())
      .toMatch(/slice lexical[\s\S]*lexical[\s\S]*recursive · 512 \/ 64 tokens/i);
    await expect.poll(() => rows.nth(2).innerText()).toContain('dense weight 0.30');

    await page.getByRole('checkbox', { name: 'Compare slice hybrid' }).check();
    await page.getByText('Tick one more run to compare.').waitFor();
    await page.getByRole('checkbox', { name: 'Compare slice lexical' }).check();
    const compared = page.getByRole('table', { name: 'Compared runs' });
    await compared.waitFor();
    // Columns in the order the runs are listed: newest first.
    expect(await compared.getByRole('columnheader').allInnerTexts()).toEqual([
      '',
      expect.stringContaining('slice lexical'),
      expect.stringContaining('slice hybrid'),
    ]);
    const row = async (label: string) =>
      await compared
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: label, exact: false }) })
        .first();
    const mode = await row('Mode');
    expect(await mode.getByRole('cell').allInnerTexts()).toEqual(['lexical', 'hybrid']);
    expect(await mode.getAttribute('data-differs')).toBe('');
    const weight = await row('Dense weight');
    expect(await weight.getByRole('cell').allInnerTexts()).toEqual(['—', '0.30']);
    const chunking = await row('Chunk size');
    expect(await chunking.getByRole('cell').allInnerTexts()).toEqual(['512', '512']);
    expect(await chunking.getAttribute('data-differs')).toBeNull();

    // The better value of each metric is the one highlighted.
    const ndcgRow = await row('nDCG@10');
    const values = (await ndcgRow.getByRole('cell').allInnerTexts()).map(Number);
    const best = await ndcgRow.locator('[data-best]').allInnerTexts();
    if (values[0] === values[1]) expect(best).toEqual([]);
    else expect(best.map(Number)).toEqual([Math.max(...values)]);
    const latency = await row('p50 latency');
    expect(await latency.locator('[data-best]').count()).toBeLessThanOrEqual(1);

    await shootAll(page, 'evaluation-comparison');
    await page.getByRole('button', { name: 'Clear comparison' }).click();
    await compared.waitFor({ state: 'detached' });
  }, 240_000);

  it('shows playground results and settings cleanly in both themes', async () => {
    const page = await openStudio('#/playground');
    await page.getByRole('heading', { name: 'Playground' }).waitFor();
    await page.getByRole('textbox', { name: 'Query' }).fill('football club in England');
    // The shortcut runs only once the page can (the Run button enabled: listing and playground key loaded).
    await expect.poll(() => page.getByRole('button', { name: 'Run' }).isEnabled()).toBe(true);
    await page.getByRole('textbox', { name: 'Query' }).press('Control+Enter');
    await page.getByRole('list', { name: 'Ranked chunks' }).getByRole('listitem').first().waitFor();
    await shootAll(page, 'playground-results');
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Embedding providers' }).waitFor();
    await shootAll(page, 'settings');
    await page.getByRole('link', { name: 'Listings' }).click();
    await page.getByRole('table', { name: 'Listings' }).getByText('DBpedia slice').waitFor();
    await shootAll(page, 'listings');
  }, 120_000);
});
