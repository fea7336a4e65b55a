import { formatCount } from '../../lib/format';

/** Chunks on one page of Inspect's chunk list. */
export const CHUNK_PAGE_SIZE = 20;

/** The page of the chunk list that holds chunk number `chunk` (1-based, as each chunk shows "#12"). */
export const pageOfChunk = (chunk: number): number => Math.ceil(chunk / CHUNK_PAGE_SIZE);

/** "450,000 chunks", "1 matching chunk", "10,000+ matching chunks" (counting stopped there). */
export function chunkCountLabel(total: number, { search, atLeast }: { search: boolean; atLeast: boolean }) {
  const noun = `${search ? 'matching ' : ''}${total === 1 && !atLeast ? 'chunk' : 'chunks'}`;
  return `${formatCount(total)}${atLeast ? '+' : ''} ${noun}`;
}

/**
 * The chunk number typed into "Go to chunk" (1-based, as the chunks show it: "12", "#12", "12,345"), or
 * what to type instead: a whole number from 1 to the document's `total`.
 */
export function chunkNumberOf(typed: string, total: number): { chunk: number } | { error: string } {
  const digits = /^#?\s*(\d+|\d{1,3}(?:[,\u00a0\u202f ]\d{3})+)$/.exec(typed.trim())?.[1];
  const chunk = digits === undefined ? NaN : Number(digits.replace(/\D/g, ''));
  if (Number.isSafeInteger(chunk) && chunk >= 1 && chunk <= total) return { chunk };
  return { error: `Type a chunk number from 1 to ${formatCount(total)}.` };
}
