import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openServices } from '../../src/db/services';
import { OFFLINE_MODEL } from '../../src/shared/embeddingModels';
import type { Listing } from '../../src/shared/listings';
import { commitChunks } from '../helpers/commitChunks';
import { E2eStudio, shoot } from '../helpers/e2e';

/**
 * A knowledge base past the studio's byte limit (as a bulk upload of pre-built embeddings leaves one),
 * in Chromium against a real `kbstudio serve`: Ingest says so before anything is dropped, and a drop is
 * refused at once, with the reason, no file shown as stuck half-way.
 */

const studio = new E2eStudio('kbstudio-e2e-ingest-limits-');
let imported: Listing;
let notes: Listing;

const openIngest = (listing: Listing) => studio.openIngest(listing);

describe('Ingest into a knowledge base past the studio limits, in Chromium', () => {
  beforeAll(async () => {
    studio.prepare();
    imported = await studio.createListing('Imported in bulk');
    notes = await studio.createListing('Small notes');
    // 600 MB of documents in one chunk: what the studio is told of a knowledge base is its bytes.
    const services = openServices(studio.dataDir);
    try {
      const vector = Float32Array.from({ length: OFFLINE_MODEL.dimensions }, (_, i) => (i % 7) + 1);
      await commitChunks(
        services,
        imported.id,
        'corpus.jsonl',
        [{ text: 'imported puffin', tokenCount: 2, contentHash: 'h1', metadata: {}, vector }],
        OFFLINE_MODEL,
        { bytes: 600 * 1024 * 1024 },
      );
    } finally {
      services.close();
    }
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('says the limit before the drop, and a drop is refused at once with the reason', async () => {
    const page = await openIngest(imported);
    const notice = page.getByRole('alert').filter({ hasText: 'too large for ingestion from the studio' });
    await notice.waitFor();
    const text = (await notice.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain('It holds 600 MB of documents');
    expect(text).toContain('up to 500 MB (so does kbstudio ingest)');
    expect(text).toContain("POST /v1/upload with this listing's id as listing_id");
    await shoot(page, 'ingest-limits-notice');

    // The drop stays open (a new version of a document it holds could still fit); this file cannot.
    await page
      .locator('input[type="file"]:not([webkitdirectory])')
      .first()
      .setInputFiles({
        name: 'note.md',
        mimeType: 'text/markdown',
        buffer: Buffer.from('# Note\n\nA note.\n'),
      });
    await page.getByRole('button', { name: 'Ingest 1 file' }).click();
    await page.getByRole('heading', { name: 'Ingestion failed' }).waitFor();
    await expect
      .poll(() => page.getByRole('alert').filter({ hasText: 'would hold' }).innerText())
      .toContain(
        'The knowledge base would hold 600 MB of documents; the studio limit is 500 MB per knowledge base (use a bulk upload above that).',
      );
    // Refused before any file was read: no row of a file left at a stage it never finished.
    expect(await page.getByRole('table', { name: 'File progress' }).count()).toBe(0);
    await shoot(page, 'ingest-limits-refused');

    // Another listing, within the limits: no notice.
    const other = await openIngest(notes);
    // Once the studio's info and the sizes are in.
    await other.waitForLoadState('networkidle');
    expect(await other.getByText('too large for ingestion from the studio').count()).toBe(0);
  });
});
