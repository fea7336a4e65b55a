import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { openServices, type StudioServices } from '../../src/db/services';
import { tempDir } from './studio';

/**
 * A fresh data directory holding one empty listing for each test of the file (registered with
 * beforeEach/afterEach), and `ingest`: a file of that name and text ingested through the real pipeline,
 * with its outcome and its chunks as stored.
 */
export function listingPerTest(title: string) {
  let dir: ReturnType<typeof tempDir>;
  let services: StudioServices;
  let listingId: string;
  beforeEach(() => {
    dir = tempDir();
    services = openServices(join(dir.path, 'data'));
    listingId = services.listings.create(
      { title, accessModel: 'one_time', price: 1 },
      services.wallets.defaultWallet().address,
    ).id;
  });
  afterEach(() => {
    services.close();
    dir.remove();
  });
  return {
    services: () => services,
    listingId: () => listingId,
    /** The test's temporary folder (the data directory is its `data`), for files to ingest. */
    dir: () => dir.path,
    async ingest(name: string, text: string) {
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
    },
  };
}
