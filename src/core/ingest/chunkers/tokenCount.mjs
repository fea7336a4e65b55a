// cl100k token counting, shared by the main thread (tokenizer.ts imports it) and a worker thread
// (tokenCountPool.ts starts this file as one, to count pre-built embedding lines on the other core).
// Plain JavaScript on purpose: a worker must load as it is under node, tsx, vitest and the Electron build.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';

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
  for (const [start, end] of tokenizerSegments(text))
    total += countCl100k(text.slice(start, end), PLAIN_TEXT);
  return total;
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
 * A plain scan: the equivalent regex tries a 256-character match at every position, which took more
 * time than the tokenizer itself.
 * @param {string} text
 * @returns {[number, number][]}
 */
function longRuns(text) {
  /** @type {[number, number][]} */
  const runs = [];
  let runStart = 0;
  let runSpace = text.length > 0 && isSpace(text.charCodeAt(0));
  for (let i = 1; i <= text.length; i++) {
    const space = i < text.length && isSpace(text.charCodeAt(i));
    if (i < text.length && space === runSpace) continue;
    if (i - runStart >= MAX_RUN) runs.push([runStart, i]);
    runStart = i;
    runSpace = space;
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

// Started as a worker by tokenCountPool.ts: counts each batch of texts it is sent.
if (!isMainThread && parentPort && workerData?.role === 'kbstudio-token-counter') {
  const port = parentPort;
  port.on('message', ({ id, texts }) => port.postMessage({ id, counts: texts.map(countTokens) }));
}
