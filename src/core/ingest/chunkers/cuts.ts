import { isGraphemeBoundary } from './graphemes';

/** Finds where text[start, end) may be cut at one level of structure: positions strictly inside, ascending. */
export type CutFinder = (text: string, start: number, end: number) => number[];

/**
 * Cuts after each match of the pattern (a global regex), so separators stay with the text before them.
 * A cut that would split a grapheme cluster (a space and the accent it carries) is not made.
 */
export function cutsAfter(pattern: RegExp): CutFinder {
  return (text, start, end) => {
    // Searching a slice keeps a range without matches from scanning the rest of a long text.
    const slice = text.slice(start, end);
    const cuts: number[] = [];
    for (const match of slice.matchAll(pattern)) {
      const cut = match.index + match[0].length;
      if (cut > 0 && cut < slice.length && isGraphemeBoundary(text, start + cut)) cuts.push(start + cut);
    }
    return cuts;
  };
}

export const paragraphCuts = cutsAfter(/\n[^\S\n]*\n\s*/g);
export const lineCuts = cutsAfter(/\n/g);
/** After sentence-ending punctuation (and closing quotes or brackets) followed by space; CJK needs no space. */
export const sentenceEndCuts = cutsAfter(/[.!?…]+["'”’)\]]*\s+|[。！？]+["'”’」』）]*\s*/gu);
export const wordCuts = cutsAfter(/\s+/g);
