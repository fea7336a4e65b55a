import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KnowledgeBaseTooLarge } from '../../../src/core/ingest/errors';
import type { IngestProgress } from '../../../src/core/ingest/pipeline';
import { STUDIO_LIMITS, type IngestLimits } from '../../../src/core/ingest/limits';
import { listingPerTest } from '../../helpers/listingPerTest';

/**
 * A knowledge base already past the studio's limits (built by a bulk upload) refuses an ingestion that
 * cannot fit before any file is read, parsed or embedded; what can still fit (a smaller new version of a
 * document, a file unchanged) goes on as before.
 */

const kb = listingPerTest('Limits');

/** An ingestion's outcome or refusal, with every progress stage it reported on the way. */
async function ingest(files: Record<string, string>, limits: IngestLimits = STUDIO_LIMITS) {
  const stages: IngestProgress['stage'][] = [];
  const inputs = Object.entries(files).map(([name, text]) => {
    const path = join(kb.dir(), name);
    writeFileSync(path, text);
    return { path, name };
  });
  const outcome = await kb
    .services()
    .ingestion.run({
      listingId: kb.listingId(),
      inputs,
      atomic: false,
      limits,
      onProgress: (p) => stages.push(p.stage),
    })
    .then(
      (result) => ({ result, error: undefined }),
      (error: unknown) => ({ result: undefined, error: error as { code: string; message: string } }),
    );
  return { ...outcome, stages };
}

const size = () => {
  const docs = kb.services().knowledgeBase.documents(kb.listingId());
  return {
    bytes: docs.reduce((n, d) => n + d.bytes, 0),
    chunks: docs.reduce((n, d) => n + d.chunkCount, 0),
    sources: docs.map((d) => d.source).sort(),
  };
};

const ALPHA = '# Alpha\n\n' + 'alpha beta gamma delta. '.repeat(80);
const BETA = '# Beta\n\n' + 'one two three four five six. '.repeat(60);

describe('limits checked before any file is read', () => {
  it('refuses a knowledge base past its byte limit at once, and still takes what shrinks it to fit', async () => {
    await ingest({ 'alpha.md': ALPHA, 'beta.md': BETA });
    const before = size();
    // As a bulk upload leaves it: above the studio's limit (here a few bytes under what it holds).
    const limits = { ...STUDIO_LIMITS, maxKnowledgeBaseBytes: before.bytes - 100 };

    const note = '# Note\n\nA short note.';
    const refused = await ingest({ 'note.md': note }, limits);
    expect(refused.error).toMatchObject({ code: 'payload_too_large' });
    // The message of the check made before each file is staged, with what the knowledge base would hold.
    expect(refused.error!.message).toBe(
      new KnowledgeBaseTooLarge(before.bytes + note.length, limits.maxKnowledgeBaseBytes).message,
    );
    expect(refused.error!.message).toMatch(
      /^The knowledge base would hold 3\.\d KB of documents; the studio limit is 3\.\d KB per knowledge base \(use a bulk upload above that\)\./,
    );
    // Nothing was read, parsed, chunked or embedded: no stage was even reported.
    expect(refused.stages).toEqual([]);
    expect(size()).toEqual(before);

    // A smaller new version of a document that does not make room for a new file: refused at once too.
    const shrunkTooLittle = await ingest(
      { 'alpha.md': ALPHA.slice(0, ALPHA.length - 50), 'note.md': '# Note\n\n' + 'x '.repeat(200) },
      limits,
    );
    expect(shrunkTooLittle.error).toMatchObject({ code: 'payload_too_large' });
    expect(shrunkTooLittle.stages).toEqual([]);

    // The same file again may be unchanged: it is looked at, and is.
    const same = await ingest({ 'beta.md': BETA }, limits);
    expect(same.result!.documents.map((d) => d.status)).toEqual(['unchanged']);

    // A new version small enough to bring the knowledge base under the limit is ingested.
    const shrunk = await ingest({ 'alpha.md': '# Alpha\n\nShorter now.' }, limits);
    expect(shrunk.error).toBeUndefined();
    expect(shrunk.result!.documents.map((d) => d.status)).toEqual(['ingested']);
    expect(size().bytes).toBeLessThanOrEqual(limits.maxKnowledgeBaseBytes);
    expect(size().sources).toEqual(['alpha.md', 'beta.md']);
  });

  it('refuses a new document into a knowledge base at its chunk limit at once, and takes a new version', async () => {
    await ingest({ 'alpha.md': ALPHA, 'beta.md': BETA });
    const before = size();
    expect(before.chunks).toBeGreaterThan(1);
    const limits = { ...STUDIO_LIMITS, maxChunks: before.chunks };

    const refused = await ingest({ 'note.md': '# Note\n\nA short note.' }, limits);
    expect(refused.error).toMatchObject({ code: 'chunk_limit_exceeded' });
    expect(refused.error!.message).toBe(
      `The knowledge base already holds ${before.chunks} chunks; the limit is ${before.chunks}, so no new document can be added (a new version of a document it holds can replace it, or delete documents to make room). Larger knowledge bases require a creator plan upgrade or contacting support.`,
    );
    expect(refused.stages).toEqual([]);
    expect(size()).toEqual(before);

    // A new version of a document it holds may fit: it is ingested, in place of the old one.
    const replaced = await ingest({ 'beta.md': '# Beta\n\nNow a single short paragraph.' }, limits);
    expect(replaced.result!.documents.map((d) => d.status)).toEqual(['ingested']);
    expect(size().chunks).toBeLessThanOrEqual(before.chunks);

    // One that does not fit is still refused by the check made once it is chunked, as before.
    const grown = await ingest({ 'beta.md': BETA + BETA + BETA }, limits);
    expect(grown.error).toMatchObject({ code: 'chunk_limit_exceeded' });
    expect(grown.error!.message).toMatch(/^This upload would bring the knowledge base to \d+ chunks/);
    expect(grown.stages).toContain('embedding');
  });
});
