import type { LexicalPostingsData } from '../../../src/core/retrieve/lexicalPostings';

/** A row of a hand-built index: its chunk id, listing, length (FTS5 docsize) and term counts. */
export interface Row {
  id: number;
  listing: string;
  length: number;
  terms: Record<string, number>;
}

/** The postings FTS5's index would give for these rows (ids ascending, terms sorted, CSR postings). */
export function postingsData(rows: Row[], shared = false): LexicalPostingsData {
  const sorted = [...rows].sort((a, b) => a.id - b.id);
  const listings = [...new Set(sorted.map((r) => r.listing))];
  // FTS5's order: that of the terms' UTF-8 bytes (not JavaScript's UTF-16 order).
  const terms = [...new Set(sorted.flatMap((r) => Object.keys(r.terms)))].sort((a, b) =>
    Buffer.compare(Buffer.from(a), Buffer.from(b)),
  );
  const encoded = terms.map((t) => Buffer.from(t));
  const termOffsets = [0];
  for (const bytes of encoded) termOffsets.push(termOffsets.at(-1)! + bytes.length);
  const starts: number[] = [];
  const positions: number[] = [];
  const counts: number[] = [];
  for (const term of terms) {
    starts.push(positions.length);
    sorted.forEach((row, pos) => {
      const count = row.terms[term] ?? 0;
      if (count > 0) {
        positions.push(pos);
        counts.push(count);
      }
    });
  }
  starts.push(positions.length);
  // In shared memory, as lexicalIndexWorker.mjs gives them (what the lexical thread can read).
  const place = <T extends Float64Array | Uint32Array | Uint16Array | Uint8Array>(array: T): T => {
    if (!shared) return array;
    const copy = new (array.constructor as new (buffer: SharedArrayBuffer) => T)(
      new SharedArrayBuffer(array.byteLength),
    );
    copy.set(array as never);
    return copy;
  };
  return {
    indexRows: sorted.length,
    indexTokens: sorted.reduce((sum, r) => sum + r.length, 0),
    ids: place(Float64Array.from(sorted.map((r) => r.id))),
    lengths: place(Uint32Array.from(sorted.map((r) => r.length))),
    listingOf: place(Uint32Array.from(sorted.map((r) => listings.indexOf(r.listing)))),
    listings,
    termBytes: place(new Uint8Array(Buffer.concat(encoded))),
    termOffsets: place(Uint32Array.from(termOffsets)),
    starts: place(Uint32Array.from(starts)),
    positions: place(Uint32Array.from(positions)),
    counts: place(Uint16Array.from(counts)),
  };
}
