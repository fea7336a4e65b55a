import { expect, vi } from 'vitest';
import type { Embedder } from '../../src/core/embed/embedder';
import { GloveSentenceModel } from '../../src/core/embed/offlineGlove';

/**
 * Embeds `texts` as documents once, waits longer than an embedding thread takes to start here
 * (0.3-0.5 s), had one been started, then expects the next documents to be embedded on this thread.
 */
export async function expectDocumentsEmbeddedHere(embedder: Embedder, texts: string[]): Promise<void> {
  await embedder.embed(texts, 'document');
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const here = vi.spyOn(GloveSentenceModel.prototype, 'embed');
  try {
    await embedder.embed(texts, 'document');
    expect(here).toHaveBeenCalledTimes(texts.length);
  } finally {
    here.mockRestore();
  }
}
