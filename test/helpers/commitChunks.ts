import { join } from 'node:path';
import { BULK_LIMITS } from '../../src/core/ingest/limits';
import type { StagedChunk } from '../../src/core/ingest/store';
import type { StudioServices } from '../../src/db/services';

/**
 * Stages `chunks` as one document, `source`, and commits them into the listing's knowledge base under
 * `model`, as a JSONL import of pre-built embeddings does after reading its lines. `bytes`: the size the
 * document is said to have (a knowledge base past the studio's byte limit needs no such file).
 */
export async function commitChunks(
  services: StudioServices,
  listingId: string,
  source: string,
  chunks: StagedChunk[],
  model: { id: string; dimensions: number },
  { bytes = 1 }: { bytes?: number } = {},
) {
  const staging = services.knowledgeBase.createStaging(join(services.dataDir, 'tmp'));
  try {
    const writer = staging.open({ source, format: 'jsonl', contentHash: source, bytes, metadata: {} });
    for (let at = 0; at < chunks.length; at += 2_000) writer.add(chunks.slice(at, at + 2_000));
    writer.finish();
    return await services.knowledgeBase.commit(listingId, staging, {
      model: model.id,
      dimensions: model.dimensions,
      maxChunks: BULK_LIMITS.maxChunks,
      maxKnowledgeBaseBytes: null,
    });
  } finally {
    staging.dispose();
  }
}
