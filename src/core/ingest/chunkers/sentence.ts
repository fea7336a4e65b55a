import { graphemeBoundaryAtOrAfter, graphemeBoundaryAtOrBefore } from './graphemes';
import { packPieces } from './packPieces';
import { measurePiece, wholeText, type ChunkSpan, type Piece, type SizeOptions } from './spans';
import { splitByTokens } from './tokenWindows';

/** A fixed locale keeps chunk boundaries the same on every machine. */
const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * ICU's sentence iterator slows down with the length of the string it is given (3 MB at once took
 * minutes), so the text is segmented in windows of this many characters, each resuming at the start
 * of the previous window's last (possibly cut-off) sentence.
 */
const WINDOW = 10_000;

/**
 * Whole sentences (Intl.Segmenter) packed up to chunkSize tokens, overlapping by whole sentences; a
 * sentence longer than chunkSize is cut into token windows.
 */
export function sentenceChunker(text: string, sizes: SizeOptions): ChunkSpan[] {
  const whole = wholeText(text, sizes.chunkSize);
  if (whole === undefined) return [];
  if ('fits' in whole) return [whole.fits];
  // Its sentences, then its chunks, are counted from one pass over its text.
  const options = { ...sizes, ranges: whole.ranges };
  const pieces: Piece[] = [];
  const bounds = [0, ...sentenceStarts(text), text.length];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const piece = measurePiece(text, bounds[i]!, bounds[i + 1]!, options.chunkSize, options.ranges);
    if (piece.tokens <= options.chunkSize) pieces.push(piece);
    else pieces.push(...splitByTokens(text, piece.start, piece.end, options.chunkSize, 0, options.ranges));
  }
  return packPieces(text, pieces, options);
}

/** Where each sentence after the first begins. */
export function sentenceStarts(text: string): number[] {
  const starts: number[] = [];
  let pos = 0;
  while (pos < text.length) {
    const windowEnd = Math.min(text.length, pos + WINDOW);
    const local = [...segmenter.segment(text.slice(pos, windowEnd))]
      .map((s) => pos + s.index)
      .filter((s) => s > pos);
    if (windowEnd === text.length) {
      starts.push(...local);
      break;
    }
    if (local.length === 0) {
      // One sentence longer than the window: cut it here, between grapheme clusters.
      const before = graphemeBoundaryAtOrBefore(text, windowEnd);
      const cut = before > pos ? before : graphemeBoundaryAtOrAfter(text, windowEnd);
      if (cut >= text.length) break;
      starts.push(cut);
      pos = cut;
    } else {
      // The last sentence may run past the window: it is segmented again from its start.
      starts.push(...local);
      pos = local[local.length - 1]!;
    }
  }
  return starts;
}
