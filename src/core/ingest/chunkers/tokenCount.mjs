// cl100k token counting, shared by the main thread (tokenizer.ts imports it) and worker threads
// (tokenCounter.ts starts this file as one per core, to count pre-built embedding lines).
// Plain JavaScript on purpose: a worker must load as it is under node, tsx, vitest and the Electron build.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { countTokens as countCl100k, setMergeCacheSize } from 'gpt-tokenizer/encoding/cl100k_base';
import { CL100K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';

/*
 * gpt-tokenizer keeps the merges of the last 100,000 pieces it encoded, evicting the oldest once full with
 * `keys().next()` on a Map whose front is all deleted entries, which V8 walks each time: past 100,000
 * distinct pieces (base64, identifiers, hashes: any large corpus), every piece not yet seen cost 28 µs
 * instead of 8 µs, and a 4.2 MB base64 Markdown file took 46 s to ingest, its server's thread held
 * throughout. The counts of pieces are cached here already (asciiCounts, pieceCounts), so its cache is off.
 */
setMergeCacheSize(0);

/** A document that contains "<|endoftext|>" means the characters, not the control token. */
export const PLAIN_TEXT = { disallowedSpecial: new Set() };

/**
 * BPE time grows with the square of a pre-token's length: 50,000 characters without a space take
 * seconds. Runs longer than this are tokenized in pieces of this length, which changes their count by
 * a token or so and leaves ordinary text (words, URLs, CJK sentences) exactly as cl100k counts it.
 */
export const MAX_RUN = 256;

/** @param {string} text @returns {number} Tokens of `text` in cl100k (the tokenizer of OpenAI's embedding models). */
export function countTokens(text) {
  let total = 0;
  for (const [start, end] of tokenizerSegments(text)) total += countPieces(text, start, end, Infinity);
  return total;
}

/**
 * The token count when it is at most `limit`, else false; stops early, so a 5 MB text costs no more than `limit`.
 * @param {string} text @param {number} limit @returns {number | false}
 */
export function countTokensUpTo(text, limit) {
  let total = 0;
  for (const [start, end] of tokenizerSegments(text)) {
    total += countPieces(text, start, end, limit - total);
    if (total > limit) return false;
  }
  return total;
}

/*
 * cl100k cuts a text into pieces with one regex and encodes each piece on its own, so a text's count is
 * the sum of its pieces' counts. Words repeat: the count of each piece is kept, and only pieces not seen
 * yet go through gpt-tokenizer (whose own cache of merges still moves every hit to the back of a Map).
 * ASCII pieces are found by asciiPieceEnd, which follows the regex rule by rule; a piece that touches
 * any other character is found by the regex itself. Both start each piece where the last one ended (the
 * regex never skips a character), so the pieces, and the counts, are the regex's.
 */
const SPLIT = new RegExp(CL100K_TOKEN_SPLIT_REGEX.source, CL100K_TOKEN_SPLIT_REGEX.flags);
/** Pieces longer than this are counted each time (rare, and they would fill the cache). */
const MAX_CACHED_PIECE = 64;
/** The cache of other pieces starts over past this many: a few MB, the working vocabulary of a corpus. */
const MAX_CACHED_PIECES = 100_000;
/** @type {Map<string, number>} Counts of the cached pieces with a character outside ASCII. */
let pieceCounts = new Map();

/**
 * Tokens of text[start, end), or a number above `limit` as soon as the count passes it.
 * @param {string} text @param {number} start @param {number} end @param {number} limit
 */
function countPieces(text, start, end, limit) {
  const segment = start === 0 && end === text.length ? text : text.slice(start, end);
  const n = segment.length;
  let total = 0;
  for (let i = 0; i < n && total <= limit;) {
    const ascii = asciiPieceEnd(segment, i, n);
    if (ascii > 0 && ascii - i <= MAX_CACHED_PIECE) {
      total += asciiCounts.count(segment, i, ascii);
      i = ascii;
      continue;
    }
    const next = ascii > 0 ? ascii : regexPieceEnd(segment, i, n);
    total += pieceTokens(segment, i, next, false);
    i = next;
  }
  return total;
}

/**
 * Tokens of the piece s[i, end): from the table of ASCII pieces when `ascii` (asciiPieceEnd found it)
 * and it is short, else from the cache of other pieces, else from gpt-tokenizer.
 * @param {string} s @param {number} i @param {number} end @param {boolean} ascii
 */
function pieceTokens(s, i, end, ascii) {
  if (ascii && end - i <= MAX_CACHED_PIECE) return asciiCounts.count(s, i, end);
  const piece = s.slice(i, end);
  let count = pieceCounts.get(piece);
  if (count === undefined) {
    count = countCl100k(piece, PLAIN_TEXT);
    if (piece.length <= MAX_CACHED_PIECE) {
      if (pieceCounts.size >= MAX_CACHED_PIECES) pieceCounts = new Map();
      pieceCounts.set(piece, count);
    }
  }
  return count;
}

/** Texts longer than this are not indexed by TokenRanges (its index takes 8 bytes per piece). */
const MAX_INDEXED_CHARS = 4 * 1024 * 1024;
/** Pieces a range may start with before it falls in step with the text's pieces; past them it is counted whole. */
const MAX_HEAD_PIECES = 8;

/**
 * Counts ranges of one text without tokenizing each range again: the chunkers measure the pieces of a
 * long section, then each chunk made of them, and the chunks (with their overlaps) are as long again as
 * the section. The text is cut into cl100k's pieces once, with the tokens before each piece; a range's
 * count is then a difference of those sums, plus its first and last pieces counted as the range cuts them.
 *
 * Why that is exact: the regex finds each piece from where the last one ended, looking only forward, so
 * cut out of the text at a piece start, a range is cut into the text's own pieces, up to the one that
 * would run past its end. Only two alternatives look past a piece (`\s+$` and `\s+(?!\S)`), and only
 * at whitespace that reaches the end: a range ending in whitespace is counted as it is. A range starting
 * inside a piece of the text is cut on its own until one of its pieces ends where one of the text's does
 * (usually its first: " word" in the text, "word" in the range), then as the text. Texts with runs that
 * countTokens cuts (MAX_RUN) are not indexed. test/core/ingest/chunkers/tokenRanges.test.ts compares every
 * count with countTokens of the slice.
 */
export class TokenRanges {
  /**
   * The index of `text`, or null when its ranges must be counted as they are.
   * @param {string} text @returns {TokenRanges | null}
   */
  static of(text) {
    if (text.length > MAX_INDEXED_CHARS || longRuns(text).length > 0) return null;
    return new TokenRanges(text);
  }

  /** @param {string} text */
  constructor(text) {
    this.text = text;
    const n = text.length;
    let starts = new Int32Array((n >> 2) + 16);
    let before = new Int32Array(starts.length);
    let k = 0;
    let total = 0;
    for (let i = 0; i < n; k++) {
      if (k + 1 >= starts.length) {
        const grown = new Int32Array(starts.length * 2);
        grown.set(starts);
        starts = grown;
        const grownBefore = new Int32Array(grown.length);
        grownBefore.set(before);
        before = grownBefore;
      }
      const ascii = asciiPieceEnd(text, i, n);
      const next = ascii > 0 ? ascii : regexPieceEnd(text, i, n);
      starts[k] = i;
      before[k] = total;
      total += pieceTokens(text, i, next, ascii > 0);
      i = next;
    }
    starts[k] = n;
    before[k] = total;
    /** Where each piece starts, then the text's length. */
    this.starts = starts.subarray(0, k + 1);
    /** The tokens before each piece, then the total. */
    this.before = before.subarray(0, k + 1);
  }

  /**
   * Tokens of text.slice(start, end), as countTokens counts them.
   * @param {number} start @param {number} end @returns {number}
   */
  count(start, end) {
    const { text, starts, before } = this;
    if (start >= end) return 0;
    if (isSpace(text.charCodeAt(end - 1))) return countTokens(text.slice(start, end));
    let total = 0;
    let at = start;
    let k = this.pieceAt(at);
    for (let head = 0; starts[k] !== at; head++) {
      const next = head < MAX_HEAD_PIECES ? asciiPieceEnd(text, at, end) : -1;
      // A piece outside ASCII, or no step yet: the range as it is.
      if (next <= 0) return countTokens(text.slice(start, end));
      total += pieceTokens(text, at, next, true);
      at = next;
      if (at === end) return total;
      while (starts[k + 1] <= at) k++;
    }
    const last = this.pieceAt(end);
    total += before[last] - before[k];
    if (starts[last] < end) total += countPieces(text, starts[last], end, Infinity);
    return total;
  }

  /**
   * The count when it is at most `limit`, else false (as countTokensUpTo).
   * @param {number} start @param {number} end @param {number} limit @returns {number | false}
   */
  countUpTo(start, end, limit) {
    const count = this.count(start, end);
    return count > limit ? false : count;
  }

  /**
   * The last piece starting at or before `position`.
   * @param {number} position
   */
  pieceAt(position) {
    const { starts } = this;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= position) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/**
 * The counts of ASCII pieces (nearly every piece of most texts), in an open-addressing table over their
 * characters, looked up without cutting the piece out of the text: no string per piece, and no V8 string
 * hashing. That was 20% of counting (33 → 39 MB/s of Markdown, JSON and CSV text). A slot holds the
 * piece's hash, where its characters start in `chars` (+ 1; 0 = empty) and its length << 16 | count.
 * The table starts over when half full or when its characters fill `chars`.
 */
export class AsciiPieceCounts {
  /** @param {number} bits log2 of the slots @param {number} charBytes room for the pieces' characters */
  constructor(bits, charBytes) {
    this.bits = bits;
    this.slots = new Int32Array((1 << bits) * 3);
    this.chars = new Uint8Array(charBytes);
    this.charsUsed = 0;
    this.pieces = 0;
  }

  /**
   * Tokens of the ASCII piece s[i, end), of at most 65,535 characters (its length is kept in 16 bits).
   * @param {string} s @param {number} i @param {number} end
   */
  count(s, i, end) {
    const { slots, chars, bits } = this;
    const length = end - i;
    // FNV-1a, then mixed so that the slot (the high bits) depends on every bit.
    let hash = 0x811c9dc5 | 0;
    for (let k = i; k < end; k++) hash = Math.imul(hash ^ s.charCodeAt(k), 0x01000193);
    const mask = (1 << bits) - 1;
    let slot = Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d) >>> (32 - bits);
    for (; ; slot = (slot + 1) & mask) {
      const at = slot * 3;
      const start = slots[at + 1] - 1;
      if (start < 0) break;
      if (slots[at] !== hash) continue;
      const lengthAndCount = slots[at + 2];
      if (lengthAndCount >>> 16 !== length) continue;
      let k = 0;
      while (k < length && chars[start + k] === s.charCodeAt(i + k)) k++;
      if (k === length) return lengthAndCount & 0xffff;
    }
    const count = countCl100k(s.slice(i, end), PLAIN_TEXT);
    if (this.pieces >= 1 << (bits - 1) || this.charsUsed + length > chars.length) {
      // Full: start over (this piece is kept the next time it is seen).
      slots.fill(0);
      this.charsUsed = 0;
      this.pieces = 0;
      return count;
    }
    for (let k = 0; k < length; k++) chars[this.charsUsed + k] = s.charCodeAt(i + k);
    const at = slot * 3;
    slots[at] = hash;
    slots[at + 1] = this.charsUsed + 1;
    slots[at + 2] = (length << 16) | count;
    this.charsUsed += length;
    this.pieces++;
    return count;
  }
}

/** 131,072 pieces before it starts over; 5 MB. */
const asciiCounts = new AsciiPieceCounts(18, 2 * 1024 * 1024);

/**
 * Where the piece starting at `i` ends, when asciiPieceEnd cannot tell: the regex's match.
 * @param {string} s @param {number} i @param {number} n
 */
function regexPieceEnd(s, i, n) {
  SPLIT.lastIndex = i;
  const match = SPLIT.exec(s);
  // Every character starts a piece, so the match is at i; if it ever were not, the rest is one piece.
  return match !== null && match.index === i ? i + match[0].length : n;
}

/**
 * Where the piece starting at `i` (where the previous one ended) ends.
 * @param {string} s @param {number} i @param {number} n
 */
function pieceEnd(s, i, n) {
  const end = asciiPieceEnd(s, i, n);
  return end > 0 ? end : regexPieceEnd(s, i, n);
}

/**
 * The pieces cl100k encodes one by one, as countTokens finds them (tests compare them with the regex's).
 * @param {string} text @returns {string[]}
 */
export function cl100kPieces(text) {
  const pieces = [];
  for (let i = 0; i < text.length;) {
    const end = pieceEnd(text, i, text.length);
    pieces.push(text.slice(i, end));
    i = end;
  }
  return pieces;
}

// ASCII classes as the regex sees them: \p{L}, \p{N}, \s (JavaScript's, so not 0x1c-0x1f) and the rest.
const LETTER = 1;
const DIGIT = 2;
const SPACE = 3;
const OTHER = 4;
const ASCII_CLASS = new Uint8Array(128).fill(OTHER);
for (let c = 65; c <= 90; c++) ASCII_CLASS[c] = ASCII_CLASS[c + 32] = LETTER;
for (let c = 48; c <= 57; c++) ASCII_CLASS[c] = DIGIT;
for (const c of [9, 10, 11, 12, 13, 32]) ASCII_CLASS[c] = SPACE;
const isNewline = (/** @type {number} */ c) => c === 10 || c === 13;

/**
 * Where the piece starting at `i` ends, following the alternatives of the cl100k regex in order:
 * `'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])`, `[^\r\n\p{L}\p{N}]?\p{L}+`, `\p{N}{1,3}`,
 * ` ?[^\s\p{L}\p{N}]+[\r\n]*`, `\s+$`, `\s*[\r\n]`, `\s+(?!\S)`, `\s`. Returns -1 as soon as it reads a
 * character outside ASCII (the regex decides that piece).
 * @param {string} s @param {number} i @param {number} n
 */
function asciiPieceEnd(s, i, n) {
  const c = s.charCodeAt(i);
  if (c >= 128) return -1;
  const kind = ASCII_CLASS[c];
  let d;
  if (c === 39 && i + 1 < n) {
    // 's 'd 'm 't 'll 've 're, in any case (| 32 lower-cases a letter and maps no other character onto these).
    if ((d = s.charCodeAt(i + 1)) >= 128) return -1;
    const second = d | 32;
    if (second === 115 || second === 100 || second === 109 || second === 116) return i + 2;
    if ((second === 108 || second === 118 || second === 114) && i + 2 < n) {
      if ((d = s.charCodeAt(i + 2)) >= 128) return -1;
      const third = d | 32;
      if (second === 108 ? third === 108 : third === 101) return i + 3;
    }
  }
  // One optional character that is no letter, digit or newline, then letters.
  const first = kind === LETTER || kind === DIGIT || isNewline(c) ? i : i + 1;
  if (first < n) {
    if ((d = s.charCodeAt(first)) >= 128) return -1;
    if (ASCII_CLASS[d] === LETTER) {
      let end = first + 1;
      for (; end < n; end++) {
        if ((d = s.charCodeAt(end)) >= 128) return -1;
        if (ASCII_CLASS[d] !== LETTER) break;
      }
      return end;
    }
  }
  if (kind === DIGIT) {
    let end = i + 1;
    for (; end < n && end < i + 3; end++) {
      if ((d = s.charCodeAt(end)) >= 128) return -1;
      if (ASCII_CLASS[d] !== DIGIT) break;
    }
    return end;
  }
  // An optional space, then characters that are no space, letter or digit, then newlines.
  const other = c === 32 ? i + 1 : i;
  if (other < n) {
    if ((d = s.charCodeAt(other)) >= 128) return -1;
    if (ASCII_CLASS[d] === OTHER) {
      let end = other + 1;
      for (; end < n; end++) {
        if ((d = s.charCodeAt(end)) >= 128) return -1;
        if (ASCII_CLASS[d] !== OTHER) break;
      }
      while (end < n && isNewline(s.charCodeAt(end))) end++;
      return end;
    }
  }
  // Whitespace: to the end of the text; else up to its last newline; else all but its last character
  // when that leaves any; else the one character.
  let end = i + 1;
  for (; end < n; end++) {
    if ((d = s.charCodeAt(end)) >= 128) return -1;
    if (ASCII_CLASS[d] !== SPACE) break;
  }
  if (end === n) return n;
  for (let q = end - 1; q >= i; q--) if (isNewline(s.charCodeAt(q))) return q + 1;
  return end - i >= 2 ? end - 1 : i + 1;
}

/**
 * [start, end) ranges to tokenize separately: the text between long runs, and long runs in pieces.
 * @param {string} text
 * @returns {[number, number][]}
 */
export function tokenizerSegments(text) {
  /** @type {[number, number][]} */
  const segments = [];
  let pos = 0;
  for (const [runStart, runEnd] of longRuns(text)) {
    if (runStart > pos) segments.push([pos, runStart]);
    for (let start = runStart; start < runEnd;) {
      let end = Math.min(runEnd, start + MAX_RUN);
      if (end < runEnd && isLowSurrogate(text.charCodeAt(end))) end--;
      segments.push([start, end]);
      start = end;
    }
    pos = runEnd;
  }
  if (pos < text.length) segments.push([pos, text.length]);
  return segments;
}

/**
 * Maximal runs of at least MAX_RUN whitespace or non-whitespace characters (as `\s` and `\S` see them).
 * Such a run holds two characters MAX_RUN / 2 apart at multiples of MAX_RUN / 2, so only those are read
 * first: where two of them are alike, the characters between are read, and only where they are all alike
 * is the run followed both ways. Ordinary text has a space or a letter within a few characters of each,
 * so a text is not read character by character twice (it was a quarter of counting). The equivalent
 * regex tries a 256-character match at every position, which took more time than the tokenizer itself.
 * @param {string} text
 * @returns {[number, number][]}
 */
function longRuns(text) {
  /** @type {[number, number][]} */
  const runs = [];
  const n = text.length;
  const step = MAX_RUN >> 1;
  for (let p = 0; p + step < n; p += step) {
    const space = isSpace(text.charCodeAt(p));
    if (isSpace(text.charCodeAt(p + step)) !== space) continue;
    let k = p + 1;
    while (k < p + step && isSpace(text.charCodeAt(k)) === space) k++;
    if (k < p + step) continue;
    let start = p;
    while (start > 0 && isSpace(text.charCodeAt(start - 1)) === space) start--;
    let end = p + step + 1;
    while (end < n && isSpace(text.charCodeAt(end)) === space) end++;
    if (end - start >= MAX_RUN) runs.push([start, end]);
    // The next run starts at `end` or later: on to the last multiple of `step` before it.
    p = Math.floor(end / step) * step - step;
  }
  return runs;
}

/** @param {number} code JavaScript's `\s`: ASCII and Unicode spaces, line terminators and the BOM. */
function isSpace(code) {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** @param {number} code */
export const isLowSurrogate = (code) => code >= 0xdc00 && code <= 0xdfff;

/** The counters' nice value: below the server's thread and the commit's (0). */
const COUNTER_NICE = 10;

/**
 * Counting is background work that keeps up with whatever CPU is left: on Linux this thread gives way
 * when the cores are all busy, so the commit of a pre-built embedding import (its slowest part, written
 * while the next lines are counted) and the server's thread keep theirs: a 200,000-line import 21.2 →
 * 19.3 s (docs/performance.md, "eighth pass"). A thread's id is known only through /proc; elsewhere (or
 * when not permitted) the counters keep the default priority.
 */
function yieldToOtherThreads() {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, COUNTER_NICE);
  } catch {
    // No /proc (macOS, Windows): nothing to do.
  }
}

// Started as a worker by tokenCounter.ts: counts each batch of texts it is sent.
if (!isMainThread && parentPort && workerData?.role === 'kbstudio-token-counter') {
  const port = parentPort;
  yieldToOtherThreads();
  port.on('message', ({ id, texts }) => port.postMessage({ id, counts: texts.map(countTokens) }));
}
