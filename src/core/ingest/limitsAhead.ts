import { ChunkLimitExceeded, KnowledgeBaseTooLarge } from './errors';
import type { IngestLimits } from './limits';
import type { SourceFile } from './sources';
import type { ExistingDocument } from './store';

/**
 * Refuses, once its files are known and before any is read, an ingestion that the knowledge base's limits
 * refuse whatever the files turn out to hold. A knowledge base built by a bulk upload may be above the
 * studio's limits: one 120-byte file dropped on a 2.1 GB knowledge base was parsed, chunked and embedded,
 * and only then refused.
 *
 * - Bytes: each file kept adds its bytes and takes away those of the document of its source it replaces
 *   (as the check before each file is staged counts them). When even the files that shrink a document
 *   leave the knowledge base past the limit, the first file that is not unchanged is refused; only a
 *   file of a stored document's size can be unchanged, so an ingestion of such files alone goes on.
 * - Chunks: a knowledge base that holds the maximum can take no new document, only new versions of its
 *   documents (which may hold fewer chunks).
 *
 * Anything else is left to the checks made file by file and by the commit.
 */
export function refuseBeyondLimits(
  files: readonly Pick<SourceFile, 'source' | 'bytes'>[],
  existing: ReadonlyMap<string, Pick<ExistingDocument, 'bytes' | 'chunkCount'>>,
  limits: Pick<IngestLimits, 'maxKnowledgeBaseBytes' | 'maxChunks'>,
): void {
  if (files.length === 0) return;
  const held = [...existing.values()].reduce((n, d) => n + d.bytes, 0);
  let least = held;
  let all = held;
  let changes = false;
  for (const file of files) {
    const previous = existing.get(file.source);
    const delta = file.bytes - (previous?.bytes ?? 0);
    all += delta;
    least += Math.min(0, delta);
    if (previous?.bytes !== file.bytes) changes = true;
  }
  const maxBytes = limits.maxKnowledgeBaseBytes;
  if (maxBytes !== null && changes && least > maxBytes) throw new KnowledgeBaseTooLarge(all, maxBytes);

  const chunks = [...existing.values()].reduce((n, d) => n + d.chunkCount, 0);
  if (chunks >= limits.maxChunks && files.every((f) => !existing.has(f.source))) {
    throw ChunkLimitExceeded.full(limits.maxChunks, chunks);
  }
}
