import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { E2eStudio, FIXTURES as fixtures, SCREENSHOTS as screenshots, SHARED } from '../helpers/e2e';

/**
 * The Playground, Evaluation and Settings views in Chromium against a real `kbstudio serve` (real
 * SQLite): a playground query shows ranked chunks with scores; an evaluation of a dbpedia-5k slice
 * shows its metrics and score plot. Screenshots of each view at 1280×800 and 1920×1080.
 */

const dbpedia = join(SHARED, 'eval', 'dbpedia-5k');
const studio = new E2eStudio('kbstudio-e2e-pg-');
const runCli = (args: string[]) => studio.runCli(args);
const openStudio = (hash: string, colorScheme: 'light' | 'dark' = 'light') =>
  studio.openStudio(hash, { colorScheme });
let sliceDir: string;

/** Screenshots at both sizes the studio must lay out cleanly at. */
async function shootBoth(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(screenshots, `${name}-1280x800.png`), fullPage: true });
  await page.setViewportSize({ width: 1920, height: 1080 });
  await page.waitForTimeout(200);
  await page.screenshot({ path: join(screenshots, `${name}-1920x1080.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** 500 corpus documents of dbpedia-5k and the queries whose relevant documents are all in them. */
function writeSlice(dir: string): number {
  const lines = (file: string) => readFileSync(join(dbpedia, file), 'utf8').split('\n').filter(Boolean);
  const relevant = lines('qrels/test.tsv')
    .slice(1)
    .map((l) => l.split('\t'))
    .filter((cells) => Number(cells[2]) > 0);
  const corpus = lines('corpus.jsonl');
  const byQuery = new Map<string, string[]>();
  for (const [q, doc] of relevant) byQuery.set(q!, [...(byQuery.get(q!) ?? []), doc!]);
  // The first queries' relevant documents, then other documents up to 500.
  const picked = new Set<string>();
  const queries: string[] = [];
  for (const [q, docs] of byQuery) {
    if (picked.size + docs.length > 300 || queries.length >= 12) continue;
    docs.forEach((d) => picked.add(d));
    queries.push(q);
  }
  const ids = corpus.map((l) => (JSON.parse(l) as { _id: string })._id);
  for (const id of ids) if (picked.size < 500) picked.add(id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'corpus.jsonl'), corpus.filter((_l, i) => picked.has(ids[i]!)).join('\n') + '\n');
  const wanted = new Set(queries);
  writeFileSync(
    join(dir, 'queries.jsonl'),
    lines('queries.jsonl')
      .filter((l) => wanted.has((JSON.parse(l) as { _id: string })._id))
      .join('\n') + '\n',
  );
  writeFileSync(
    join(dir, 'test.tsv'),
    [
      'query-id\tcorpus-id\tscore',
      ...relevant.filter((c) => wanted.has(c[0]!)).map((c) => c.join('\t')),
    ].join('\n') + '\n',
  );
  return queries.length;
}

let sliceQueries = 0;

describe('playground, evaluation and settings in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    sliceDir = join(studio.dataDir, 'slice');
    sliceQueries = writeSlice(sliceDir);
    const docs = JSON.parse(
      await runCli([
        'listings',
        'create',
        '--title',
        'Hockey and memos',
        '--access-model',
        'one_time',
        '--price',
        '1',
      ]),
    ) as { id: string };
    await runCli([
      'ingest',
      '--listing',
      docs.id,
      join(fixtures, 'stanley-cups.csv'),
      join(fixtures, 'fake-memo.pdf'),
      join(fixtures, 'fake-html.html'),
    ]);
    await runCli([
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

  it('runs a playground query and shows ranked chunks with scores, the request as curl', async () => {
    const page = await openStudio('#/playground');
    await page.getByRole('heading', { name: 'Playground' }).waitFor();
    await shootBoth(page, 'playground-empty');
    await page.getByRole('textbox', { name: 'Query' }).fill('Maple Leafs Stanley Cups');
    // The shortcut runs only once the page can (the Run button enabled: listing and playground key loaded).
    await expect.poll(() => page.getByRole('button', { name: 'Run' }).isEnabled()).toBe(true);
    await page.getByRole('textbox', { name: 'Query' }).press('Control+Enter');
    const results = page.getByRole('list', { name: 'Ranked chunks' });
    await results.getByRole('listitem').first().waitFor();
    const first = await results.getByRole('listitem').first().textContent();
    expect(first).toContain('Maple Leafs');
    const scores = (await page.getByTestId('chunk-score').allTextContents()).map(Number);
    expect(scores.length).toBeGreaterThan(0);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(scores[0]).toBeGreaterThan(0);
    await expect.poll(() => page.getByLabel('Latency').textContent()).toMatch(/\d+(\.\d+)? ms/);
    await expect.poll(() => page.locator('mark').first().textContent()).toMatch(/maple|leafs|stanley|cups/i);
    await expect.poll(() => page.locator('pre').first().textContent()).toContain('/v1/retrieve');
    await shootBoth(page, 'playground-results');

    // Streaming with a filter: chunks of the CSV only.
    await page.getByRole('switch', { name: 'Stream chunks as they arrive' }).check({ force: true });
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByRole('textbox', { name: 'Filter 1 key' }).fill('format');
    await page.getByRole('textbox', { name: 'Filter 1 value' }).fill('csv');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => results.getByRole('listitem').count()).toBe(3);
    await page.getByLabel('Latency').waitFor();
    const streamed = await results.getByRole('listitem').allTextContents();
    expect(streamed.length).toBeGreaterThan(0);
    for (const text of streamed) expect(text).toContain('stanley-cups.csv');
    await shootBoth(page, 'playground-stream-filter');
  }, 90_000);

  it('evaluates a dbpedia-5k slice and shows the metrics and the score plot', async () => {
    const page = await openStudio('#/evaluation');
    await page.getByRole('heading', { name: 'Evaluation' }).waitFor();
    await page.getByRole('combobox', { name: 'Listing' }).click();
    await page.getByRole('option', { name: 'DBpedia slice' }).click();
    await page.getByText('No runs yet').waitFor();
    await shootBoth(page, 'evaluation-empty');
    await page
      .locator('input[type=file]')
      .setInputFiles(['corpus.jsonl', 'queries.jsonl', 'test.tsv'].map((f) => join(sliceDir, f)));
    await page.getByRole('textbox', { name: 'Run name' }).fill('slice hybrid');
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    const ndcg = page.getByTestId('metric-ndcgAt10');
    await ndcg.waitFor({ timeout: 90_000 });
    expect(Number(await ndcg.textContent())).toBeGreaterThan(0.2);
    expect(Number(await page.getByTestId('metric-recallAt100').textContent())).toBeGreaterThan(0.3);
    expect(await page.getByTestId('histogram-bin').count()).toBe(20);
    const rows = page.getByRole('table', { name: 'Per-question results' }).getByRole('row');
    expect(await rows.count()).toBe(sliceQueries + 1);

    // A second run in lexical mode, side by side with the first.
    await page.getByText('Lexical').last().click();
    await page.getByRole('textbox', { name: 'Run name' }).fill('slice lexical');
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    const runs = page.getByRole('table', { name: 'Evaluation runs' }).getByRole('row');
    await expect.poll(() => runs.count(), { timeout: 60_000 }).toBe(3);
    await expect.poll(() => runs.nth(1).textContent()).toContain('slice lexical');
    await expect.poll(() => runs.nth(2).textContent()).toContain('slice hybrid');
    await shootBoth(page, 'evaluation-runs');
  }, 180_000);

  it('shows provider settings with their source and stores a key masked', async () => {
    const page = await openStudio('#/settings', 'dark');
    await page.getByRole('heading', { name: 'Embedding providers' }).waitFor();
    const input = page.getByLabel('OpenAI API key', { exact: true });
    await input.fill('sk-e2e-abcdefghijkl1234');
    await input.press('Enter');
    await expect.poll(() => input.getAttribute('placeholder')).toBe('sk-••••1234');
    expect(await page.content()).not.toContain('abcdefghijkl');
    await shootBoth(page, 'settings-dark');
  });
});
