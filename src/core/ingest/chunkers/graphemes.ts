import { isLowSurrogate } from './tokenizer';

/**
 * Extended grapheme cluster boundaries (what a reader sees as one character: 👨‍👩‍👧‍👦, 🇩🇪, é as e + U+0301,
 * a Hangul syllable spelled in jamo) near a cut, without segmenting the whole text: most positions are
 * recognised as boundaries from the two characters around them, and only the others have a small window
 * segmented (Intl.Segmenter), from the nearest position that is surely a boundary.
 */

/** A fixed locale keeps chunk boundaries the same on every machine. */
const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * How far (in UTF-16 code units, either way) a window reaches for a sure boundary. Text with none in this
 * stretch (a cluster of over a thousand marks, hundreds of flags in a row) is segmented from this far
 * back; a flag there may then be cut between its two letters, as the count of letters before it is unknown.
 */
const SCAN_LIMIT = 1024;

// Classes of a code point for the rules of UAX #29 that join two characters (GB9–GB13); each is a
// superset of what the rule needs, so "surely a boundary" never errs, it only sends more cuts to a window.
/** Extend, ZWJ, SpacingMark and Format: may join what precedes them (GB9, GB9a). */
const JOINS_PREVIOUS = 1;
/**
 * Prepend and ZWJ: may join what follows (GB9b, GB11). Taken as every format character, U+0D4E and the
 * letters of U+11000–U+16FFF, where the other Prepend letters are.
 */
const JOINS_NEXT = 2;
const REGIONAL_INDICATOR = 4;
const HANGUL_JAMO = 8;
const HANGUL_SYLLABLE = 16;
/** A letter an Indic conjunct may continue with after a virama (GB9c). */
const LATE_LETTER = 32;

const JOINS_PREVIOUS_CHARS = /[\p{M}\p{Grapheme_Extend}\p{Emoji_Modifier}\p{Cf}\u0E33\u0EB3]/u;
const FORMAT = /\p{Cf}/u;
const LETTER = /\p{L}/u;

const classes = new Map<number, number>();

function classOf(code: number): number {
  let known = classes.get(code);
  if (known !== undefined) return known;
  const char = String.fromCodePoint(code);
  known = 0;
  if (JOINS_PREVIOUS_CHARS.test(char)) known |= JOINS_PREVIOUS;
  if (FORMAT.test(char) || code === 0x0d4e || (code >= 0x11000 && code < 0x17000)) known |= JOINS_NEXT;
  if (code >= 0x1f1e6 && code <= 0x1f1ff) known |= REGIONAL_INDICATOR;
  // Kirat Rai's vowel signs (U+16D63, U+16D67–U+16D6A) join like Hangul vowels since Unicode 16.
  if (
    (code >= 0x1100 && code <= 0x11ff) ||
    (code >= 0xa960 && code <= 0xa97f) ||
    (code >= 0xd7b0 && code <= 0xd7ff) ||
    (code >= 0x16d40 && code <= 0x16d7f)
  )
    known |= HANGUL_JAMO;
  if (code >= 0xac00 && code <= 0xd7a3) known |= HANGUL_SYLLABLE;
  if (code >= 0x900 && LETTER.test(char)) known |= LATE_LETTER;
  classes.set(code, known);
  return known;
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/**
 * Whether `at` is a grapheme boundary whatever the text before the previous character: true is certain,
 * false means "look closer" (the two characters may belong together).
 */
function surelyBoundary(text: string, at: number): boolean {
  if (at <= 0 || at >= text.length) return true;
  const next = text.charCodeAt(at);
  const previous = text.charCodeAt(at - 1);
  // No character below U+0300 joins what precedes it, and none below U+0600 joins what follows it.
  if (next < 0x300 && previous < 0x600) return previous !== 0x0d || next !== 0x0a;
  // Controls break on both sides (GB4, GB5).
  if (next < 0x20 || previous < 0x20) return previous !== 0x0d || next !== 0x0a;
  if (isLowSurrogate(next) && isHighSurrogate(previous)) return false;
  const after = classOf(text.codePointAt(at)!);
  const beforeCode =
    isLowSurrogate(previous) && at >= 2 && isHighSurrogate(text.charCodeAt(at - 2))
      ? text.codePointAt(at - 2)!
      : previous;
  const before = classOf(beforeCode);
  if (after & JOINS_PREVIOUS || before & JOINS_NEXT) return false;
  if (before & after & REGIONAL_INDICATOR) return false;
  if (before & HANGUL_JAMO && after & (HANGUL_JAMO | HANGUL_SYLLABLE)) return false;
  if (before & HANGUL_SYLLABLE && after & HANGUL_JAMO) return false;
  if (before & JOINS_PREVIOUS && after & LATE_LETTER) return false;
  return true;
}

/** The boundaries either side of `at`: [the last at or before it, the first after it]. */
function clusterAround(text: string, at: number): [number, number] {
  const lowest = Math.max(0, at - SCAN_LIMIT);
  let from = at - 1;
  while (from > lowest && !surelyBoundary(text, from)) from--;
  if (from > 0 && isLowSurrogate(text.charCodeAt(from)) && isHighSurrogate(text.charCodeAt(from - 1))) from--;
  const highest = Math.min(text.length, at + SCAN_LIMIT);
  let to = at + 1;
  while (to < highest && !surelyBoundary(text, to)) to++;
  const { index, segment } = segmenter.segment(text.slice(from, to)).containing(at - from)!;
  return [from + index, from + index + segment.length];
}

/** Whether a cut at `at` keeps every grapheme cluster of the text whole. */
export function isGraphemeBoundary(text: string, at: number): boolean {
  return surelyBoundary(text, at) || clusterAround(text, at)[0] === at;
}

/** The last grapheme boundary at or before `at`. */
export function graphemeBoundaryAtOrBefore(text: string, at: number): number {
  return surelyBoundary(text, at) ? at : clusterAround(text, at)[0];
}

/** The first grapheme boundary at or after `at`. */
export function graphemeBoundaryAtOrAfter(text: string, at: number): number {
  if (surelyBoundary(text, at)) return at;
  const [before, after] = clusterAround(text, at);
  return before === at ? at : after;
}
