import { z } from 'zod';
import { ListingIdSchema } from './listings';

export const CHUNKING_STRATEGIES = ['recursive', 'fixed', 'sentence', 'markdown'] as const;

/** `config` of POST /v1/upload: the spec's snake_case keys (camelCase accepted too). */
export const UploadConfigSchema = z
  .object({
    chunking: z.enum(CHUNKING_STRATEGIES).default('recursive'),
    embedding_model: z.string().min(1).optional().meta({
      description: "A model of the spec §2 table, or the offline default. Default: the listing's model.",
    }),
    listing_id: ListingIdSchema.optional().meta({
      description: 'Without it a new draft listing is created.',
    }),
    chunk_size: z
      .number()
      .int()
      .min(16)
      .max(8192)
      .optional()
      .meta({ description: 'Tokens (cl100k), default 512.' }),
    chunk_overlap: z.number().int().min(0).max(8191).optional().meta({ description: 'Tokens, default 64.' }),
    required_columns: z
      .array(z.string().min(1))
      .optional()
      .meta({ description: 'CSV columns whose empty cells skip a row (default: all named columns).' }),
  })
  .meta({ id: 'UploadConfig' });
export type UploadConfig = z.output<typeof UploadConfigSchema>;

export const UPLOAD_STATUSES = ['queued', 'processing', 'completed', 'failed'] as const;
export type UploadStatus = (typeof UPLOAD_STATUSES)[number];

export const INGEST_STAGES = ['reading', 'parsing', 'chunking', 'embedding', 'storing', 'done'] as const;
export type IngestStage = (typeof INGEST_STAGES)[number];

/** Progress of an ingestion: the pipeline's events, an upload's `progress`, the studio's job stream. */
export interface IngestProgress {
  stage: IngestStage;
  file?: string;
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
  chunks: number;
  /**
   * The studio's jobs only, before any file is read: the ZIP archive being unpacked (stage `reading`,
   * no file counted yet). Extracting 8,000 entries takes seconds.
   */
  unpacking?: UnpackingProgress;
}

/** A ZIP archive being extracted: its files written so far, of those it holds (folders and OS litter left out). */
export interface UnpackingProgress {
  /** The archive's source name (`docs/kb.zip`). */
  archive: string;
  filesDone: number;
  filesTotal: number;
}

export const FileResultSchema = z.object({
  source: z.string(),
  format: z.string(),
  status: z.enum(['ingested', 'unchanged', 'rejected']),
  chunks: z.number().int(),
  documents: z.number().int().optional().meta({
    description:
      'A JSON array file of several items: the documents they make (each top-level item with text is one document). Absent for a file that is one document, as every other file is.',
  }),
  skippedRows: z.array(z.object({ row: z.number().int(), reason: z.string() })).optional(),
  warnings: z.array(z.string()).optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
/** The outcome of one file of an ingestion (CLI summary, upload results, studio jobs). */
export type FileOutcome = z.infer<typeof FileResultSchema>;

/** An upload's per-file result: an ingestion's outcome, or `not_stored` when the upload failed. */
export const UploadFileResultSchema = FileResultSchema.extend({
  status: z.enum([...FileResultSchema.shape.status.options, 'not_stored']).meta({
    description:
      '`not_stored`: the file was read without error, but the upload is all or nothing and another file failed it, so nothing of it was stored.',
  }),
});
export type UploadFileResult = z.infer<typeof UploadFileResultSchema>;

export const UploadSchema = z
  .object({
    uploadId: z.string(),
    listingId: z.string(),
    status: z.enum(UPLOAD_STATUSES),
    config: z.record(z.string(), z.unknown()),
    progress: z.object({
      stage: z.string(),
      file: z.string().optional(),
      filesDone: z.number().int(),
      filesTotal: z.number().int(),
      bytesDone: z.number(),
      bytesTotal: z.number(),
      chunks: z.number().int(),
    }),
    files: z.array(UploadFileResultSchema).meta({ description: 'Per-file results, once known.' }),
    documentCount: z.number().int().nullable(),
    chunkCount: z.number().int().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Upload' });
export type Upload = z.infer<typeof UploadSchema>;
