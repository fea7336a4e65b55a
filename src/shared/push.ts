import { z } from 'zod';

/** Push to the hosted service (DESIGN §5): the wire shapes the studio server and the renderer share. */

export const PushTargetInputSchema = z.object({
  baseUrl: z.string().min(1).max(2000),
  apiKey: z.string().min(1).max(500),
  label: z.string().max(100, 'The label can be at most 100 characters.').optional(),
});
export type PushTargetInput = z.infer<typeof PushTargetInputSchema>;

export const PushTargetPatchSchema = PushTargetInputSchema.partial();
export type PushTargetPatch = z.infer<typeof PushTargetPatchSchema>;

/** A remembered target as shown: the key only masked, never whole once saved. */
export interface PushTarget {
  id: string;
  label: string | null;
  /** The `/v1` base URL of the hosted service. */
  baseUrl: string;
  /** `kbs••••a1b2`. */
  maskedKey: string;
  /** Whether the key is encrypted at rest (the desktop app's OS keychain). */
  encryptedAtRest: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Start a push: a remembered target, or a base URL with a key (remembered when `remember`). */
export const StartPushSchema = z
  .object({
    listingId: z.string().min(1).max(100),
    targetId: z.string().min(1).max(100).optional(),
    baseUrl: z.string().min(1).max(2000).optional(),
    apiKey: z.string().min(1).max(500).optional(),
    remember: z.boolean().optional(),
    /** Smaller parts than the spec's bulk threshold (tests, slow links); never larger. */
    maxPartBytes: z
      .number()
      .int()
      .min(1)
      .max(500 * 1024 * 1024)
      .optional(),
    maxPartFiles: z.number().int().min(1).max(1000).optional(),
    /** A new draft listing on the remote, not the one this listing was pushed to before. */
    newListing: z.boolean().optional(),
  })
  .refine((v) => v.targetId !== undefined || v.baseUrl !== undefined, {
    message: 'give targetId (a remembered target) or baseUrl with apiKey',
    path: ['targetId'],
  });
export type StartPush = z.infer<typeof StartPushSchema>;

/**
 * What happened to one file: `accepted` (ingested by the remote), `unchanged` (the remote already
 * held the same bytes with the same chunking), `rejected` (the remote refused the file: see error),
 * `not_stored` (its part failed or was never sent), `unconfirmed` (its part was sent and taken by the
 * remote, which was still processing it when the push stopped: it may be stored; pushing again tells),
 * `missing` (its original bytes are not kept locally: re-ingest it).
 */
export type PushFileStatus = 'accepted' | 'unchanged' | 'rejected' | 'not_stored' | 'unconfirmed' | 'missing';

export interface PushError {
  code: string;
  message: string;
}

export interface PushFileReport {
  source: string;
  format: string;
  bytes: number;
  status: PushFileStatus | 'pending';
  /** Chunks the remote holds for the file (accepted or unchanged). */
  chunks: number;
  error?: PushError;
}

export type PushPartState = 'waiting' | 'packing' | 'sending' | 'processing' | 'completed' | 'failed';

export interface PushPart {
  /** 1-based. */
  index: number;
  state: PushPartState;
  /** Source files in the part and their size before compression. */
  fileCount: number;
  bytes: number;
  /** The ZIP's size once packed. */
  archiveBytes: number | null;
  /** Chunking of the part's files (one upload carries one `config`). */
  chunking: { strategy: string; chunkSize: number; chunkOverlap: number; requiredColumns?: string[] };
  packing: { filesDone: number; bytesDone: number };
  sending: { loaded: number; total: number };
  /** The remote's progress while it ingests the part. */
  remote: { stage: string; filesDone: number; filesTotal: number; chunks: number } | null;
  /** Sending attempts so far (retries after network errors, 5xx, 408 and 429). */
  attempts: number;
  uploadId: string | null;
  error: PushError | null;
  files: PushFileReport[];
}

/** `interrupted`: found unfinished when the studio started (a stop cut it short); studio jobs only. */
export type PushState = 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';

export interface PushReport {
  listingId: string;
  /** The remote's `/v1` base URL. */
  target: string;
  remoteListingId: string | null;
  state: PushState;
  parts: PushPart[];
  /** Documents that could not be sent because their original bytes are not kept (status `missing`). */
  missing: PushFileReport[];
  totals: Record<PushFileStatus, number> & { files: number; bytes: number };
  /**
   * The spec's documents this listing holds when the push started: a file each, a JSON array's items one
   * each (spec §2). Absent from reports journaled by earlier versions.
   */
  documentCount?: number;
  /** The remote knowledge base after the last completed part. */
  remoteDocumentCount: number | null;
  remoteChunkCount: number | null;
  /** Why the push stopped (authentication, unreachable host, cancelled), when it did. */
  error: PushError | null;
  startedAt: string;
  finishedAt: string | null;
}

/**
 * What the remote holds that this listing does not, after a completed push: a push adds and replaces
 * documents, it never deletes, so a document deleted (or renamed) here stays on the service, found by
 * its buyers, until it is deleted there. Undefined when the remote holds no more than was pushed.
 */
export function remoteOnlyNote(report: PushReport): string | undefined {
  if (report.state !== 'completed' || report.remoteDocumentCount === null) return undefined;
  const extra = report.remoteDocumentCount - (report.documentCount ?? report.totals.files);
  if (extra <= 0) return undefined;
  const documents = extra === 1 ? '1 document' : `${extra} documents`;
  return `The service holds ${documents} more than this listing: a push never deletes, so documents deleted or renamed here stay there (and are found by its buyers) until deleted on the service.`;
}

/** A studio push job: the report as it grows. */
export interface PushJob extends PushReport {
  id: string;
}
