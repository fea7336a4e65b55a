import type { ChunkSpan, SizeOptions } from './spans';
import { splitByTokens } from './tokenWindows';

/** Windows of chunkSize tokens, each starting chunkOverlap tokens before the previous one ended. */
export function fixedChunker(text: string, { chunkSize, chunkOverlap }: SizeOptions): ChunkSpan[] {
  return splitByTokens(text, 0, text.length, chunkSize, chunkOverlap);
}
