import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, shootAll } from '../helpers/e2e';

/**
 * Defects a UI audit found around the Evaluation page, in Chromium against a real `kbstudio serve`:
 * the listing it works on (the one chosen elsewhere, and its own choice kept), a failed run's message
 * left on another listing, missed ids hidden behind "Missed:…", an expected source that names no
 * document, and a question CSV without a `question` column.
 */

const studio = new E2eStudio('kbstudio-e2e-eval-state-');
const open = (hash: string) => studio.openStudio(hash, { defaultTimeout: 20_000 });
/** A document name with no place to break a line, wider than the question column. */
const LONG =
  'quarterly_financial_statements_of_the_holding_company_and_its_subsidiaries_for_the_fiscal_year_2024_as_audited_by_the_external_auditors_final.md';
/** `empty` has no chunks; `filled` (created last, so listed first) holds lease.md and LONG. */
let empty: Listing;
let filled: Listing;

const picker = (page: Page) => page.getByRole('combobox', { name: 'Listing' });
const pickerValue = (page: Page) => expect.poll(() => picker(page).inputValue());

async function chooseListing(page: Page, title: string): Promise<void> {
  await picker(page).click();
  await page.getByRole('option', { name: title }).click();
  await pickerValue(page).toBe(title);
}

async function runQuestions(page: Page, questions: string, mode: 'Hybrid' | 'Lexical' = 'Lexical') {
  await page.getByRole('tab', { name: 'Write questions' }).click();
  await page.getByRole('textbox', { name: 'Questions' }).fill(questions);
  await page.getByRole('radiogroup').getByText(mode, { exact: true }).click();
  await page.getByRole('button', { name: 'Run evaluation' }).click();
}

describe('the Evaluation page’s listing, messages and per-question notes, in Chromium', () => {
  beforeAll(async () => {
    studio.prepare();
    empty = await studio.createListing('DBpedia');
    filled = await studio.createListing('OpenAI KB');
    const docs = join(studio.dataDir, 'docs');
    mkdirSync(docs);
    writeFileSync(join(docs, 'lease.md'), '# Lease\n\nThe notice period for tenants is three months.\n');
    writeFileSync(join(docs, LONG), '# Results\n\nRevenue grew twelve percent, driven by exports.\n');
    await studio.runCli(['ingest', '--listing', filled.id, join(docs, 'lease.md'), join(docs, LONG)]);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('works on the listing chosen in another view, and keeps its own choice', async () => {
    const page = await open('#/inspect');
    await pickerValue(page).toBe('OpenAI KB');
    await chooseListing(page, 'DBpedia');

    await page.getByRole('link', { name: 'Evaluation', exact: true }).click();
    await page.getByRole('heading', { name: 'Evaluation' }).waitFor();
    await pickerValue(page).toBe('DBpedia');
    await page.getByText('No runs yet').waitFor();

    await chooseListing(page, 'OpenAI KB');
    await page.getByRole('link', { name: 'Inspect', exact: true }).click();
    await pickerValue(page).toBe('OpenAI KB');
    await page.getByRole('link', { name: 'Evaluation', exact: true }).click();
    await pickerValue(page).toBe('OpenAI KB');
    await page.reload();
    await page.getByRole('heading', { name: 'Evaluation' }).waitFor();
    await pickerValue(page).toBe('OpenAI KB');
  });

  it('drops a failed run’s message when another listing is chosen, keeping the questions', async () => {
    const page = await open('#/evaluation');
    await chooseListing(page, 'DBpedia');
    await runQuestions(page, 'notice period for tenants | three months');
    const failure = page.getByText('The run failed');
    await failure.waitFor();
    await page.getByText(`Listing '${empty.id}' has no chunks yet`, { exact: false }).waitFor();

    await chooseListing(page, 'OpenAI KB');
    await failure.waitFor({ state: 'detached' });
    expect(await page.getByText('has no chunks yet', { exact: false }).count()).toBe(0);
    expect(await page.getByRole('textbox', { name: 'Questions' }).inputValue()).toBe(
      'notice period for tenants | three months',
    );
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    await page.getByRole('table', { name: 'Evaluation runs' }).waitFor({ timeout: 60_000 });
    expect(await failure.count()).toBe(0);
  });

  it('names an expected source that matches no document, and shows a long missed id', async () => {
    const page = await open('#/evaluation');
    await chooseListing(page, 'OpenAI KB');
    await runQuestions(
      page,
      [
        'notice period for tenants | source: lease.md',
        'What is an abomination? | source: nonexistent.pdf',
        `how long is the notice period | source: ${LONG}`,
      ].join('\n'),
    );
    const alert = page.getByRole('alert', { name: /no document of this listing/ });
    await alert.waitFor({ timeout: 60_000 });
    const said = await alert.innerText();
    expect(said).toContain('1 expected source matches no document of this listing');
    expect(said).toContain('nonexistent.pdf');
    expect(said).toContain('What is an abomination?');
    expect(said).toContain('left out of the metrics');
    expect(said).not.toContain('lease.md');
    await page.getByText(/2 questions \(1 left out: expected source not found\)/).waitFor();

    const rows = page.getByRole('table', { name: 'Per-question results' }).getByRole('row');
    expect(await rows.count()).toBe(3);
    const missed = rows.filter({ hasText: 'how long is the notice period' }).getByTestId('missed-ids');
    expect(await missed.getAttribute('title')).toBe(LONG);
    // The start of the id is drawn inside the line's box, not pushed onto a clamped second line
    // ("Missed:…"). A string, so this file needs no DOM types: it runs in the page.
    const idShown = await page.evaluate(`(() => {
      const id = ${JSON.stringify(LONG)};
      const el = [...document.querySelectorAll('[data-testid="missed-ids"]')].find((e) => e.title === id);
      const box = el.getBoundingClientRect();
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.textContent.indexOf(id.slice(0, 20));
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + 10);
        const start = range.getBoundingClientRect();
        return start.width > 0 && start.top >= box.top - 1 && start.bottom <= box.bottom + 1 &&
          start.left >= box.left - 1 && start.right <= box.right + 1;
      }
      return false;
    })()`);
    expect(idShown).toBe(true);
    await shootAll(page, 'evaluation-unknown-source');
  }, 90_000);

  it('says a question CSV has no "question" column, naming the columns found', async () => {
    const page = await open('#/evaluation');
    await chooseListing(page, 'OpenAI KB');
    await page.locator('input[type=file]').setInputFiles({
      name: 'bad.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('q,answer\nwhat is the notice period,three months\n'),
    });
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    await page.getByText('The run failed').waitFor();
    await page
      .getByText('bad.csv: no "question" column in its header (found "q", "answer")', { exact: false })
      .waitFor();
  });
});
