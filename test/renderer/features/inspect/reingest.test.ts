import { describe, expect, it } from 'vitest';
import {
  chunkingOfDocument,
  csvRowsOfDocument,
  reingestPlan,
  requiredColumnsLabel,
} from '../../../../src/renderer/src/features/inspect/reingest';

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

describe("a CSV document's required columns on re-ingest", () => {
  const csv = (csvRequiredColumns?: string[]) => ({
    format: 'csv',
    metadata: {
      chunking: {
        strategy: 'recursive',
        chunkSize: 512,
        chunkOverlap: 64,
        ...(csvRequiredColumns && { csvRequiredColumns }),
      },
    },
  });
  const chunking = { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 } as const;

  it('start from the ones it was ingested with, and are said so', () => {
    expect(csvRowsOfDocument(csv(['notes']))).toEqual({ rule: 'listed', columns: ['notes'] });
    expect(csvRowsOfDocument(csv([]))).toEqual({ rule: 'none', columns: [] });
    expect(csvRowsOfDocument(csv())).toEqual({ rule: 'named', columns: [] });
    expect(csvRowsOfDocument({ ...csv(['notes']), format: 'markdown' })).toBeNull();
    expect(requiredColumnsLabel({ rule: 'listed', columns: ['notes', ' title '] })).toBe(
      'required columns: notes, title',
    );
    expect(requiredColumnsLabel({ rule: 'named', columns: [] })).toBe('required columns: every named column');
    expect(requiredColumnsLabel({ rule: 'none', columns: [] })).toBe('required columns: none');
  });

  it('are sent as chosen: the columns, [] for none, null for every named column', () => {
    const kept = reingestPlan(csv(['notes']), chunking, { rule: 'listed', columns: ['notes'] });
    expect(kept).toEqual({
      body: { ...chunking, csvRequiredColumns: ['notes'] },
      unchanged: true,
      error: undefined,
    });
    expect(reingestPlan(csv(['notes']), chunking, { rule: 'none', columns: [] })).toMatchObject({
      body: { csvRequiredColumns: [] },
      unchanged: false,
    });
    expect(reingestPlan(csv(['notes']), chunking, { rule: 'named', columns: [] })).toMatchObject({
      body: { csvRequiredColumns: null },
      unchanged: false,
    });
    expect(reingestPlan(csv(), chunking, { rule: 'named', columns: [] }).unchanged).toBe(true);
    expect(reingestPlan(csv(['notes']), chunking, { rule: 'listed', columns: [] }).error).toMatch(
      /Name at least one column/,
    );
  });
});
