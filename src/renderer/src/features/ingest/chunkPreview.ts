import { counted, formatCount } from '../../lib/format';
import type { ChunkingFormValues, ChunkingSettings } from './types';

/** Keys every stored chunk carries that say nothing about where in the document it comes from. */
const RESERVED = new Set(['source', 'format', 'documentId', 'chunkIndex']);

export interface MetadataItem {
  key: string;
  label: string;
  value: string;
}

const LABELS: Record<string, string> = {
  page: 'Page',
  row: 'Row',
  item: 'Item',
  line: 'Line',
  headings: 'Headings',
  title: 'Title',
};

/**
 * A chunk's sourceMetadata as label/value pairs, most telling first: page, row, headings, then the
 * rest (front matter, CSV columns, JSON fields) in the document's order.
 */
export function metadataItems(metadata: Record<string, unknown>): MetadataItem[] {
  const items: MetadataItem[] = [];
  const first = ['page', 'row', 'item', 'line', 'headings'];
  const keys = [
    ...first.filter((k) => k in metadata),
    ...Object.keys(metadata).filter((k) => !first.includes(k)),
  ];
  for (const key of keys) {
    if (RESERVED.has(key)) continue;
    const value = metadata[key];
    if (value === undefined || value === null || value === '') continue;
    items.push({ key, label: LABELS[key] ?? key, value: formatValue(key, value) });
  }
  return items;
}

function formatValue(key: string, value: unknown): string {
  if (key === 'headings' && Array.isArray(value)) return value.map(String).join(' › ');
  if (Array.isArray(value))
    return value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const isWhole = (value: number | string): value is number =>
  typeof value === 'number' && Number.isInteger(value);

/** What is wrong with each chunking field as the user typed it, checked as the server checks it. */
export function chunkingFieldErrors(values: ChunkingFormValues): {
  chunkSize?: string;
  chunkOverlap?: string;
} {
  const { chunkSize, chunkOverlap } = values;
  if (!isWhole(chunkSize) || chunkSize < 16 || chunkSize > 8192) {
    // The overlap's bound depends on the size: it is checked once the size is right.
    return { chunkSize: 'Chunk size must be a whole number from 16 to 8192 tokens.' };
  }
  if (!isWhole(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize) {
    return {
      chunkOverlap: `Overlap must be a whole number from 0 to ${chunkSize - 1} tokens (less than the chunk size).`,
    };
  }
  return {};
}

/** The chunking settings as the user typed them, checked as the server checks them. */
export function chunkingError(values: ChunkingFormValues): string | undefined {
  const errors = chunkingFieldErrors(values);
  return errors.chunkSize ?? errors.chunkOverlap;
}

/** The settings a request may carry, or undefined while the form holds something the server refuses. */
export function validChunking(values: ChunkingFormValues): ChunkingSettings | undefined {
  const { strategy, chunkSize, chunkOverlap } = values;
  if (chunkingError(values) || typeof chunkSize !== 'number' || typeof chunkOverlap !== 'number') return;
  return { strategy, chunkSize, chunkOverlap };
}

/**
 * The text a chunk shares with the one before it (the overlap), so the preview can mark it: the longest
 * end of `previous` that starts `current`, at least a few characters long.
 */
export function sharedPrefix(previous: string | undefined, current: string): number {
  if (!previous) return 0;
  // From the longest candidate down; startsWith stops at the first differing character.
  for (let i = Math.max(0, previous.length - current.length); i <= previous.length - 8; i++) {
    if (current.startsWith(previous.slice(i))) return previous.length - i;
  }
  return 0;
}

/** "12 chunks · 5,210 tokens · showing the first 20", "1 chunk · 1 token" */
export function previewSummary(total: number, tokens: number, shown: number): string {
  const base = `${formatCount(total)} ${total === 1 ? 'chunk' : 'chunks'} · ${formatCount(tokens)} ${tokens === 1 ? 'token' : 'tokens'}`;
  return shown < total ? `${base} · showing the first ${formatCount(shown)}` : base;
}

/** Row numbers named for one reason; the others are counted. */
const ROWS_NAMED = 10;
/** Reasons named; the rows skipped for the others are counted. */
const REASONS_NAMED = 3;

/**
 * The CSV rows a document leaves out, and why, grouped by reason: "2 CSV rows skipped: rows 2 and 4
 * (empty required field(s): notes)". Row numbers count data rows, the first under the header being 1.
 */
export function skippedRowsSummary(rows: readonly { row: number; reason: string }[]): string | undefined {
  if (rows.length === 0) return undefined;
  const byReason = new Map<string, number[]>();
  for (const { row, reason } of rows) byReason.set(reason, [...(byReason.get(reason) ?? []), row]);
  const named = [...byReason].slice(0, REASONS_NAMED);
  const groups = named.map(([reason, numbers]) => `${rowList(numbers)} (${reason})`);
  const rest = rows.length - named.reduce((n, [, numbers]) => n + numbers.length, 0);
  const more = rest > 0 ? `; and ${counted(rest, 'other row')}` : '';
  return `${counted(rows.length, 'CSV row')} skipped: ${groups.join('; ')}${more}`;
}

/** "row 4", "rows 2 and 4", "rows 1, 2, …, 10 and 5 more" */
function rowList(numbers: readonly number[]): string {
  if (numbers.length === 1) return `row ${numbers[0]}`;
  const shown = numbers.slice(0, ROWS_NAMED).map(String);
  const more = numbers.length - shown.length;
  if (more > 0) return `rows ${shown.join(', ')} and ${more} more`;
  return `rows ${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}
