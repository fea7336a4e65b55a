import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { openServices, type StudioServices } from '../../../src/db/services';
import { tempDir } from '../../helpers/studio';

let dir: ReturnType<typeof tempDir>;
let services: StudioServices;
let listingId: string;

beforeEach(() => {
  dir = tempDir();
  services = openServices(join(dir.path, 'data'));
  listingId = services.listings.create(
    { title: 'Pre-built', accessModel: 'one_time', price: 1 },
    services.wallets.defaultWallet().address,
  ).id;
});
afterEach(() => {
  services.close();
  dir.remove();
});

describe('pre-built embeddings (JSONL) as stored', () => {
  it("keeps a line's own `source` as `source_2` beside the file's name", async () => {
    const dims = services.listings.get(listingId, 'studio').dimensions;
    const embedding = Array.from({ length: dims }, (_, i) => Math.sin(i + 1));
    const file = join(dir.path, 'e1.jsonl');
    writeFileSync(
      file,
      `{"text":"First prebuilt chunk","embedding":${JSON.stringify(embedding)},"metadata":{"page":3,"source":"orig.pdf"}}\n`,
    );

    const result = await services.ingestion.run({
      listingId,
      inputs: [{ path: file }],
      atomic: false,
      limits: STUDIO_LIMITS,
    });

    expect(result.documents[0]).toMatchObject({ source: 'e1.jsonl', status: 'ingested', chunks: 1 });
    const rows = services.db.prepare(`SELECT text, metadata FROM chunks`).all() as {
      text: string;
      metadata: string;
    }[];
    expect(rows.map((r) => ({ text: r.text, metadata: JSON.parse(r.metadata) as unknown }))).toEqual([
      {
        text: 'First prebuilt chunk',
        metadata: {
          page: 3,
          source_2: 'orig.pdf',
          line: 1,
          source: 'e1.jsonl',
          format: 'jsonl',
          documentId: expect.any(String),
          chunkIndex: 0,
        },
      },
    ]);
  });
});
