import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, runCli } from '../helpers/e2e';
import { tempDir } from '../helpers/studio';
import {
  integrityCheck,
  scratchLeft,
  seedStudio,
  serve,
  snapshot,
  uploadSettled,
  uploadStatus,
  uploadZip,
  writeCorpus,
  type Seeded,
  type ServeChild,
} from '../faults/studioProcess';

/**
 * `npm run test:stress` only: uploads SIGKILLed at spread-out moments (receiving, extracting,
 * embedding, committing, done). After each restart the knowledge base is either exactly as before or
 * complete, never in between; the database is intact and the scratch folder empty; the retry completes.
 */
const ROUNDS = 8;
const FILES = 40;
let dir: ReturnType<typeof tempDir>;
let dataDir: string;
let seeded: Seeded;
let server: ServeChild | undefined;

describe.runIf(process.env.KBSTUDIO_STRESS === '1')('uploads killed at random moments', () => {
  beforeAll(async () => {
    dir = tempDir('kbs-killrounds-');
    dataDir = join(dir.path, 'data');
    seeded = await seedStudio(dataDir);
    await runCli(dataDir, ['ingest', '--listing', seeded.listingId, join(FIXTURES, 'stanley-cups.csv')]);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it(`${ROUNDS} rounds end as before or complete, never in between`, async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const corpus = await writeCorpus(dir.path, `round${round}`, FILES, 10);
      server = await serve(dataDir, seeded.apiKey);
      const before = snapshot(dataDir, seeded.listingId);
      const id = await uploadZip(server, corpus.zip, seeded.listingId);
      // Spread over 0.1–6 s: from still extracting to well after the commit.
      await new Promise((r) => setTimeout(r, 100 + ((round * 7919) % 6000)));
      await server.kill();

      server = await serve(dataDir, seeded.apiKey);
      const afterKill = snapshot(dataDir, seeded.listingId);
      expect(integrityCheck(dataDir)).toBe('ok');
      expect(scratchLeft(dataDir)).toEqual([]);
      const killed = await uploadStatus(server, id);
      expect(['failed', 'completed']).toContain(killed.status);
      outcomes.push(killed.status);

      const retried = await uploadSettled(
        server,
        dataDir,
        await uploadZip(server, corpus.zip, seeded.listingId),
      );
      expect(retried.status).toBe('completed');
      const complete = snapshot(dataDir, seeded.listingId);
      expect(complete.documents.length).toBe(before.documents.length + FILES);
      if (killed.status === 'completed') expect(afterKill).toEqual(complete);
      else expect(afterKill).toEqual(before);
      await server.stop();
      server = undefined;
    }
    console.info(`kill rounds: ${outcomes.join(', ')}`);
  }, 1_800_000);
});
