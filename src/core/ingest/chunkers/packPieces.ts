import { finishChunk, type ChunkSpan, type Piece, type SizeOptions } from './spans';
import { splitByTokens } from './tokenWindows';

/**
 * Greedily packs consecutive pieces into chunks of at most chunkSize tokens; the next chunk starts with
 * the last whole pieces of the previous one that fit in chunkOverlap (LangChain's merge step). Each chunk
 * is measured as joined text; in the rare case joining adds tokens, pieces move to the next chunk.
 */
export function packPieces(
  text: string,
  pieces: Piece[],
  { chunkSize, chunkOverlap, ranges }: SizeOptions,
): ChunkSpan[] {
  const chunks: ChunkSpan[] = [];
  let from = 0;
  let to = 0;
  let total = 0;
  while (from < pieces.length) {
    while (to < pieces.length && (to === from || total + pieces[to]!.tokens <= chunkSize)) {
      total += pieces[to]!.tokens;
      to++;
    }
    let chunk = finishChunk(text, pieces[from]!.start, pieces[to - 1]!.end, ranges);
    while (chunk !== undefined && chunk.tokens > chunkSize && to - from > 1) {
      to--;
      chunk = finishChunk(text, pieces[from]!.start, pieces[to - 1]!.end, ranges);
    }
    if (chunk !== undefined && chunk.tokens > chunkSize) {
      chunks.push(...splitByTokens(text, chunk.start, chunk.end, chunkSize, chunkOverlap, ranges));
    } else if (chunk !== undefined) {
      chunks.push(chunk);
    }
    if (to >= pieces.length) break;
    let next = to;
    let carried = 0;
    const following = pieces[to]!.tokens;
    while (next - 1 > from) {
      const tokens = pieces[next - 1]!.tokens;
      if (carried + tokens > chunkOverlap || carried + tokens + following > chunkSize) break;
      carried += tokens;
      next--;
    }
    from = next;
    total = carried;
  }
  return chunks;
}
