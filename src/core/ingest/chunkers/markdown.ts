import { lineCuts, sentenceEndCuts, wordCuts } from './cuts';
import { packPieces } from './packPieces';
import { splitRecursively } from './recursive';
import { measurePiece, type ChunkSpan, type Piece, type SizeOptions } from './spans';
import { TokenRanges } from './tokenizer';

export type BlockKind = 'heading' | 'fence' | 'text';

/** A block runs from its start to the next block's start; blank lines belong to the block before them. */
export interface MarkdownBlock {
  start: number;
  end: number;
  kind: BlockKind;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
const ATX_HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;

/**
 * Heading-aware: a chunk never spans two headings' sections (a heading starts a new chunk) and never
 * cuts inside a fenced code block that fits; blocks (paragraphs, lists, code blocks) are packed whole up
 * to chunkSize with overlap. A block over chunkSize is split by lines, then sentences and words (code by
 * lines and words), and its pieces are packed only among themselves.
 */
export function markdownChunker(text: string, sizes: SizeOptions): ChunkSpan[] {
  const chunks: ChunkSpan[] = [];
  // Its blocks, then its chunks, are counted from one pass over its text.
  const options = { ...sizes, ranges: TokenRanges.of(text) ?? undefined };
  for (const region of headingRegions(markdownBlocks(text))) {
    let fitting: Piece[] = [];
    for (const block of region) {
      const piece = measurePiece(text, block.start, block.end, options.chunkSize, options.ranges);
      if (piece.tokens <= options.chunkSize) {
        fitting.push(piece);
        continue;
      }
      if (fitting.length > 0) chunks.push(...packPieces(text, fitting, options));
      fitting = [];
      const levels = block.kind === 'fence' ? [lineCuts, wordCuts] : [lineCuts, sentenceEndCuts, wordCuts];
      splitRecursively(text, block.start, block.end, levels, options, chunks);
    }
    if (fitting.length > 0) chunks.push(...packPieces(text, fitting, options));
  }
  return chunks;
}

/** The text's blocks in order, covering it whole. Fences left open run to the end (as in CommonMark). */
export function markdownBlocks(text: string): MarkdownBlock[] {
  const starts: { start: number; kind: BlockKind }[] = [];
  let fence: RegExp | undefined;
  let inText = false;
  for (let lineStart = 0; lineStart < text.length;) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    if (fence !== undefined) {
      if (fence.test(line)) fence = undefined;
    } else {
      const open = FENCE_OPEN.exec(line);
      if (open) {
        starts.push({ start: lineStart, kind: 'fence' });
        fence = new RegExp(`^ {0,3}${open[1]![0] === '`' ? '`' : '~'}{${open[1]!.length},}[ \\t]*\\r?$`);
        inText = false;
      } else if (ATX_HEADING.test(line)) {
        starts.push({ start: lineStart, kind: 'heading' });
        inText = false;
      } else if (line.trim() === '') {
        inText = false;
      } else if (!inText) {
        starts.push({ start: lineStart, kind: 'text' });
        inText = true;
      }
    }
    lineStart = lineEnd + 1;
  }
  if (starts.length > 0) starts[0]!.start = 0;
  return starts.map((block, i) => ({ ...block, end: starts[i + 1]?.start ?? text.length }));
}

/**
 * Groups blocks so each group starts at a heading. Headings with nothing but deeper headings under
 * them ("# Guide" directly followed by "## Install") stay with the heading that follows.
 */
function headingRegions(blocks: MarkdownBlock[]): MarkdownBlock[][] {
  const regions: MarkdownBlock[][] = [];
  let current: MarkdownBlock[] = [];
  let hasBody = false;
  for (const block of blocks) {
    if (block.kind === 'heading' && hasBody) {
      regions.push(current);
      current = [];
      hasBody = false;
    }
    current.push(block);
    if (block.kind !== 'heading') hasBody = true;
  }
  if (current.length > 0) regions.push(current);
  return regions;
}
