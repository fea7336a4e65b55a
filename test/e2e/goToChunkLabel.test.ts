import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OFFLINE_MODEL } from '../../src/shared/embeddingModels';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, shoot } from '../helpers/e2e';

/**
 * Inspect's "Go to chunk" field, in Chromium against a real `kbstudio serve`: a label the eye can read
 * stays beside the field once a number is typed in (a placeholder alone goes), on the line of the chunk
 * count at 1280×800, and names the field for a screen reader too.
 */

const studio = new E2eStudio('kbstudio-e2e-go-to-chunk-');
// 105 pages of chunks: enough for "Go to chunk" (it shows with more than one page).
const LINES = 2_100;
let archive: Listing;
let seed = '';

const openInspect = (viewport: { width: number; height: number }): Promise<Page> =>
  studio.openStudio(`#/inspect?listing=${archive.id}&document=corpus.jsonl`, {
    viewport,
    defaultTimeout: 20_000,
  });

/**
 * The text of each label of `field` in view: its own (`for` its id), taller and wider than a visually
 * hidden one, with nothing over it.
 */
async function visibleLabels(page: Page, field: Locator): Promise<string[]> {
  const id = await field.getAttribute('id');
  if (!id) return [];
  const shown: string[] = [];
  for (const label of await page.locator(`label[for="${id}"]`).all()) {
    const box = await label.boundingBox();
    const uncovered = await label.evaluate((element) => {
      const r = element.getBoundingClientRect();
      const top = element.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
      return top !== null && element.contains(top);
    });
    if (box && box.width > 8 && box.height > 8 && (await label.isVisible()) && uncovered)
      shown.push((await label.textContent()) ?? '');
  }
  return shown;
}

/** The vertical centre of `target`, in the page. */
async function middle(target: Locator): Promise<number> {
  const box = (await target.boundingBox())!;
  return box.y + box.height / 2;
}

describe('Inspect’s "Go to chunk" label, in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    archive = await studio.createListing('Archive');
    seed = mkdtempSync(join(tmpdir(), 'kbstudio-e2e-go-to-chunk-'));
    // Pre-built embeddings, one chunk a line: no embedding model has to run.
    const lines = Array.from({ length: LINES }, (_, i) =>
      JSON.stringify({
        text: `Line ${i + 1}: the heron by the pond.`,
        embedding: Array.from({ length: OFFLINE_MODEL.dimensions }, (_, d) => (((i + d) % 9) - 4) / 4),
      }),
    );
    writeFileSync(join(seed, 'corpus.jsonl'), `${lines.join('\n')}\n`);
    await studio.runCli(['ingest', '--listing', archive.id, join(seed, 'corpus.jsonl')]);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(async () => {
    await studio.close();
    if (seed) rmSync(seed, { recursive: true, force: true });
  });

  it('keeps a visible "Go to chunk" label beside the field once typed in, on the count’s line at 1280×800', async () => {
    const page = await openInspect({ width: 1280, height: 800 });
    const goTo = page.getByRole('textbox', { name: 'Go to chunk', exact: true });
    await goTo.waitFor();
    await goTo.fill('12');
    // The placeholder has gone: the label is what says what the number is for.
    expect(await visibleLabels(page, goTo)).toEqual(['Go to chunk']);
    const label = page.locator('label').filter({ hasText: /^Go to chunk$/ });
    const [labelBox, fieldBox] = [(await label.boundingBox())!, (await goTo.boundingBox())!];
    expect(labelBox.x + labelBox.width, 'the label before the field').toBeLessThanOrEqual(fieldBox.x);

    // One line: the search, the count, the label, the field and Go.
    const line = await middle(goTo);
    for (const [name, target] of [
      ['Search chunks', page.getByRole('textbox', { name: 'Search chunks' })],
      ['the count', page.getByText('2,100 chunks', { exact: true })],
      ['the label', label],
      ['Go', page.getByRole('button', { name: 'Go', exact: true })],
    ] as const) {
      expect(Math.abs((await middle(target)) - line), name).toBeLessThanOrEqual(4);
    }
    await shoot(page, 'inspect-go-to-chunk-label-1280x800-light');

    // A number the document lacks: the refusal under the line, the label still in view on it.
    await goTo.fill('99999');
    await goTo.press('Enter');
    await page.getByText('Type a chunk number from 1 to 2,100.').waitFor();
    expect(await goTo.getAttribute('aria-invalid')).toBe('true');
    const describedBy = await goTo.evaluate((el) =>
      (el.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .map((id: string) => el.ownerDocument.getElementById(id)?.textContent),
    );
    expect(describedBy).toEqual(['Type a chunk number from 1 to 2,100.']);
    expect(await visibleLabels(page, goTo)).toEqual(['Go to chunk']);
    expect(Math.abs((await middle(label)) - (await middle(goTo)))).toBeLessThanOrEqual(4);
    await shoot(page, 'inspect-go-to-chunk-label-refused-1280x800-light');

    // The label names the field: it still goes to a chunk.
    await goTo.fill('1,234');
    await goTo.press('Enter');
    await expect
      .poll(() => page.evaluate<string | null>("document.activeElement?.getAttribute('aria-label') ?? null"))
      .toBe('Chunk 1234');
  });

  it('keeps the label in view at 1024×700, where the count and the field go under the search', async () => {
    const page = await openInspect({ width: 1024, height: 700 });
    const goTo = page.getByRole('textbox', { name: 'Go to chunk', exact: true });
    await goTo.fill('7');
    expect(await visibleLabels(page, goTo)).toEqual(['Go to chunk']);
    await shoot(page, 'inspect-go-to-chunk-label-1024x700-light');
  });
});
