import type { CompletedUpload } from '../../core/ingest/store';
import type { UploadRecord, UploadRepository } from '../../core/uploads/uploads';
import type { Db } from '../open';
import { writeWithoutWaiting } from '../withoutWaiting';

interface UploadRow {
  id: string;
  listing_id: string;
  wallet: string;
  status: UploadRecord['status'];
  config: string;
  progress: string;
  results: string;
  error: string | null;
  created_at: string;
  updated_at: string;
}

/** Columns of uploads; document/chunk totals and results live in the `results` JSON. */
export class SqliteUploadRepository implements UploadRepository {
  constructor(private readonly db: Db) {}

  insert(r: UploadRecord): void {
    this.db
      .prepare(
        `INSERT INTO uploads (id, listing_id, wallet, status, config, progress, results, error, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        r.uploadId,
        r.listingId,
        r.wallet,
        r.status,
        JSON.stringify(r.config),
        JSON.stringify(r.progress),
        results(r),
        r.error ? JSON.stringify(r.error) : null,
        r.createdAt,
        r.updatedAt,
      );
  }

  update(id: string, patch: Partial<Omit<UploadRecord, 'uploadId'>>): void {
    // Read and written under the write lock: a commit on another connection may complete the upload
    // (commitWorker.mjs) between the two, and a progress patch must not write back what it read before.
    this.db
      .transaction(() => {
        const current = this.findById(id);
        if (!current) return;
        const next = { ...current, ...patch };
        this.db
          .prepare(
            `UPDATE uploads SET status = ?, progress = ?, results = ?, error = ?, updated_at = ? WHERE id = ?`,
          )
          .run(
            next.status,
            JSON.stringify(next.progress),
            results(next),
            next.error ? JSON.stringify(next.error) : null,
            next.updatedAt,
            id,
          );
      })
      .immediate();
  }

  tryUpdate(id: string, patch: Partial<Omit<UploadRecord, 'uploadId'>>): boolean {
    return writeWithoutWaiting(this.db, () => this.update(id, patch));
  }

  atomically<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  findById(id: string): UploadRecord | undefined {
    const row = this.db.prepare(`SELECT * FROM uploads WHERE id = ?`).get(id) as UploadRow | undefined;
    return row && fromRow(row);
  }

  unfinished(): UploadRecord[] {
    return (
      this.db.prepare(`SELECT * FROM uploads WHERE status IN ('queued', 'processing')`).all() as UploadRow[]
    ).map(fromRow);
  }
}

const results = (r: Pick<UploadRecord, 'files' | 'documentCount' | 'chunkCount'>) =>
  JSON.stringify({ files: r.files, documentCount: r.documentCount, chunkCount: r.chunkCount });

/** What a commit writes to complete an upload in its transaction (commitWorker.mjs). */
export interface CompletedUploadRow {
  id: string;
  /** These two columns as update() writes them; the commit sets the knowledge base's counts in them. */
  progress: string;
  results: string;
  updatedAt: string;
}

export function completedUploadRow(upload: CompletedUpload): CompletedUploadRow {
  return {
    id: upload.uploadId,
    progress: JSON.stringify(upload.progress),
    results: results({ files: upload.files, documentCount: null, chunkCount: null }),
    updatedAt: upload.updatedAt,
  };
}

function fromRow(row: UploadRow): UploadRecord {
  const res = JSON.parse(row.results) as Pick<UploadRecord, 'files' | 'documentCount' | 'chunkCount'>;
  return {
    uploadId: row.id,
    listingId: row.listing_id,
    wallet: row.wallet,
    status: row.status,
    config: JSON.parse(row.config) as Record<string, unknown>,
    progress: JSON.parse(row.progress) as UploadRecord['progress'],
    files: res.files ?? [],
    documentCount: res.documentCount ?? null,
    chunkCount: res.chunkCount ?? null,
    error: row.error ? (JSON.parse(row.error) as UploadRecord['error']) : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
