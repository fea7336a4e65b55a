import { lineCuts, paragraphCuts, sentenceEndCuts, wordCuts, type CutFinder } from './cuts';
import { packPieces } from './packPieces';
import { measurePiece, wholeText, type ChunkSpan, type Piece, type SizeOptions } from './spans';
import { splitByTokens } from './tokenWindows';

const LEVELS: CutFinder[] = [paragraphCuts, lineCuts, sentenceEndCuts, wordCuts];

/**
 * LangChain's RecursiveCharacterTextSplitter measured in tokens: split on paragraph breaks, then line
 * breaks, sentence ends and spaces, going one level finer only for the pieces still over chunkSize; pieces
 * that fit are packed back up to chunkSize with overlap. Past the last level, token windows.
 */
export function recursiveChunker(text: string, options: SizeOptions): ChunkSpan[] {
  const whole = wholeText(text, options.chunkSize);
  if (whole === undefined) return [];
  if ('fits' in whole) return [whole.fits];
  const chunks: ChunkSpan[] = [];
  // Its pieces, then its chunks, are counted from one pass over its text.
  const measured = { ...options, ranges: whole.ranges };
  splitRecursively(text, whole.tooLarge[0], whole.tooLarge[1], LEVELS, measured, chunks);
  return chunks;
}

export function splitRecursively(
  text: string,
  start: number,
  end: number,
  levels: CutFinder[],
  options: SizeOptions,
  out: ChunkSpan[],
): void {
  for (let level = 0; level < levels.length; level++) {
    const cuts = levels[level]!(text, start, end);
    if (cuts.length === 0) continue;
    const finer = levels.slice(level + 1);
    const bounds = [start, ...cuts, end];
    let fitting: Piece[] = [];
    for (let i = 0; i + 1 < bounds.length; i++) {
      const piece = measurePiece(text, bounds[i]!, bounds[i + 1]!, options.chunkSize, options.ranges);
      if (piece.tokens <= options.chunkSize) {
        fitting.push(piece);
        continue;
      }
      if (fitting.length > 0) out.push(...packPieces(text, fitting, options));
      fitting = [];
      splitRecursively(text, piece.start, piece.end, finer, options, out);
    }
    if (fitting.length > 0) out.push(...packPieces(text, fitting, options));
    return;
  }
  out.push(...splitByTokens(text, start, end, options.chunkSize, options.chunkOverlap, options.ranges));
}
