import { describe, expect, it } from 'vitest';
import { chunkingOfDocument, reingestPlan } from '../../../../src/renderer/src/features/inspect/reingest';

const doc = (chunking: unknown) => ({ metadata: chunking === undefined ? {} : { chunking } });
const ingested = doc({ strategy: 'sentence', chunkSize: 256, chunkOverlap: 32 });

describe('re-ingest settings', () => {
  it('start from the chunking the document was ingested with', () => {
    expect(chunkingOfDocument(ingested)).toEqual({ strategy: 'sentence', chunkSize: 256, chunkOverlap: 32 });
  });

  it('are none for documents with their own embeddings, which are stored again as they are', () => {
    expect(chunkingOfDocument(doc({}))).toBeNull();
    expect(chunkingOfDocument(doc(undefined))).toBeNull();
    expect(reingestPlan(doc({}), null)).toEqual({ body: {}, unchanged: true });
  });

  it('send the chosen settings and tell when they are the ones already used', () => {
    expect(reingestPlan(ingested, { strategy: 'sentence', chunkSize: 256, chunkOverlap: 32 })).toMatchObject({
      unchanged: true,
      error: undefined,
    });
    expect(reingestPlan(ingested, { strategy: 'recursive', chunkSize: 128, chunkOverlap: 16 })).toEqual({
      body: { strategy: 'recursive', chunkSize: 128, chunkOverlap: 16 },
      unchanged: false,
      error: undefined,
    });
  });

  it('refuse what the server would refuse, saying why', () => {
    const plan = reingestPlan(ingested, { strategy: 'fixed', chunkSize: 64, chunkOverlap: 64 });
    expect(plan.error).toMatch(/Overlap must be a whole number from 0 to 63/);
    expect(reingestPlan(ingested, { strategy: 'fixed', chunkSize: 8, chunkOverlap: 0 }).error).toMatch(
      /Chunk size must be/,
    );
  });
});
