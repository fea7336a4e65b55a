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

/** "12 chunks · 5,210 tokens · showing the first 20" */
export function previewSummary(total: number, tokens: number, shown: number): string {
  const n = new Intl.NumberFormat('en-US');
  const base = `${n.format(total)} ${total === 1 ? 'chunk' : 'chunks'} · ${n.format(tokens)} tokens`;
  return shown < total ? `${base} · showing the first ${n.format(shown)}` : base;
}
