import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../../../src/core/ingest/limits';
import { openServices, type StudioServices } from '../../../../src/db/services';
import { tempDir } from '../../../helpers/studio';

let dir: ReturnType<typeof tempDir>;
let services: StudioServices;
let listingId: string;

beforeEach(() => {
  dir = tempDir();
  services = openServices(join(dir.path, 'data'));
  listingId = services.listings.create(
    { title: 'JSON', accessModel: 'one_time', price: 1 },
    services.wallets.defaultWallet().address,
  ).id;
});
afterEach(() => {
  services.close();
  dir.remove();
});

async function ingest(name: string, text: string) {
  const file = join(dir.path, name);
  writeFileSync(file, text);
  const result = await services.ingestion.run({
    listingId,
    inputs: [{ path: file }],
    atomic: false,
    limits: STUDIO_LIMITS,
  });
  const rows = services.db
    .prepare(`SELECT text, metadata FROM chunks WHERE json_extract(metadata, '$.source') = ? ORDER BY id`)
    .all(name) as { text: string; metadata: string }[];
  return {
    outcome: result.documents[0],
    chunks: rows.map((r) => ({ text: r.text, metadata: JSON.parse(r.metadata) as unknown })),
  };
}

const stored = (source: string, chunkIndex: number) => ({
  source,
  format: 'json',
  documentId: expect.any(String),
  chunkIndex,
});

describe('JSON without a text field, as stored', () => {
  it('stores a record list wrapped in an object (it was refused: "no text was found")', async () => {
    const { outcome, chunks } = await ingest(
      'articles.json',
      '{"version":3,"articles":[{"title":"First article","body":"The body of the first article talks about rockets."},{"title":"Second","body":"Second body about submarines."}]}',
    );

    expect(outcome).toMatchObject({ status: 'ingested', chunks: 1 });
    expect(chunks).toEqual([
      {
        text: [
          'articles[0].title: First article',
          'articles[0].body: The body of the first article talks about rockets.',
          'articles[1].title: Second',
          'articles[1].body: Second body about submarines.',
        ].join('\n'),
        metadata: { item: 0, version: 3, ...stored('articles.json', 0) },
      },
    ]);
  });

  it('stores the strings inside arrays as text, so a query for them finds the item', async () => {
    const { chunks } = await ingest(
      'widget.json',
      '{"name":"Widget","features":["waterproof","shockproof"],"reviews":[{"user":"bob","comment":"Great product, very durable"}]}',
    );

    expect(chunks).toEqual([
      {
        text: [
          'name: Widget',
          'features: waterproof, shockproof',
          'reviews[0].user: bob',
          'reviews[0].comment: Great product, very durable',
        ].join('\n'),
        metadata: { item: 0, features: ['waterproof', 'shockproof'], ...stored('widget.json', 0) },
      },
    ]);
    const found = await services.retrieval.retrieve(
      { listingId, query: 'waterproof shockproof durable', mode: 'lexical' },
      'studio',
    );
    expect(found.chunks.map((c) => c.sourceMetadata.source)).toEqual(['widget.json']);
  });
});
