/** An array a studio job stream sends as the change since its previous event (server/jobEvents.ts, `rows`). */
export type RowDeltas = Record<string, { length: number; changed: [number, unknown][] }>;

/** The arrays of a job's stream, kept across its events: each event's `delta` applied, as the whole array. */
export class JobRows {
  private readonly arrays = new Map<string, unknown[]>();

  apply<T extends { delta?: RowDeltas }>(event: T): Omit<T, 'delta'> {
    const { delta, ...job } = event;
    if (!delta) return job;
    for (const [field, { length, changed }] of Object.entries(delta)) {
      const rows = this.arrays.get(field) ?? [];
      rows.length = length;
      for (const [index, entry] of changed) rows[index] = entry;
      this.arrays.set(field, rows);
      // A new array each event: the page's state changes, and React draws it.
      (job as Record<string, unknown>)[field] = rows.slice();
    }
    return job;
  }
}
