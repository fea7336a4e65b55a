import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { Conflict, InvalidInput } from '../../../core/errors';
import { newId } from '../../../core/ids';
import {
  CHUNKING_STRATEGIES,
  resolveChunkingOptions,
  type ChunkingOptions,
} from '../../../core/ingest/chunkers';
import { IngestJobs, type IngestJobSnapshot } from '../../../core/ingest/jobs';
import { STUDIO_LIMITS } from '../../../core/ingest/limits';
import { previewChunks } from '../../../core/ingest/preview';
import { DEFAULT_ZIP_LIMITS, formatBytes } from '../../../core/ingest/zipLimits';
import { parseOrThrow } from '../../../core/validation';
import { unknownFieldsError } from '../../../shared/unknownFields';
import { SqliteDocumentRepository } from '../../../db/repositories/documents';
import type { ServerDeps } from '../../deps';
import { jobRoutes, type JobRoutesOptions } from '../../jobEvents';
import { MAX_FILE_NAME_CHARS, receiveMultipart, type ReceivedForm } from '../../multipart';
import { camelKeys, fieldsOf, type defineRoutes } from '../../route';

const IdParams = z.object({ id: z.string().min(1).max(100) });

const chunkingFields = {
  strategy: z.enum(CHUNKING_STRATEGIES).optional(),
  chunkSize: z.number().int().optional(),
  chunkOverlap: z.number().int().optional(),
  csvRequiredColumns: z.array(z.string().min(1).max(200)).max(100).optional(),
};
/**
 * Options with only these fields: a misspelt one (`chunk_sise`, `strategi`) was dropped and the
 * document chunked with the defaults without a word. snake_case is read as camelCase (optionsOf).
 */
const optionsSchema = <T extends z.ZodRawShape>(fields: T) =>
  z.strictObject(fields, {
    error: unknownFieldsError(Object.keys(fields), ' (snake_case also accepted, e.g. chunk_size)'),
  });
/**
 * Files in one drop: as many as a ZIP archive may hold (DEFAULT_ZIP_LIMITS.maxEntries). It was 5,000, and
 * a folder of more (a documentation site's export) was refused only once the page had sent it all.
 */
const DROP_FILES = DEFAULT_ZIP_LIMITS.maxEntries;
const IngestOptionsSchema = optionsSchema({
  ...chunkingFields,
  /** The name of each `files` part inside the knowledge base, in order: a dropped folder's relative paths. */
  paths: z.array(z.string().min(1).max(MAX_FILE_NAME_CHARS)).max(DROP_FILES).optional(),
});
/**
 * Re-ingestion settings; each one left out keeps what the document was ingested with. A CSV document's
 * `csvRequiredColumns` may be changed too: null is the default again (every named column).
 */
const ReingestSchema = optionsSchema({
  ...chunkingFields,
  csvRequiredColumns: chunkingFields.csvRequiredColumns.unwrap().nullable().optional(),
});
const PreviewOptionsSchema = optionsSchema({
  ...chunkingFields,
  limit: z.number().int().min(1).max(200).default(20),
});

const MULTIPART_LIMITS = {
  // A document over its own limit is refused by itself when read, and the other files are ingested.
  maxFileBytes: STUDIO_LIMITS.maxArchiveBytes,
  fileLimitName: `per ZIP archive (a document may be ${formatBytes(STUDIO_LIMITS.maxFileBytes)})`,
  maxFiles: DROP_FILES,
  // The `options` part holds a relative path per file: 16 MB is 100,000 paths of 160 characters.
  maxFieldBytes: 16 * 1024 * 1024,
};

/** The JSON `options` part of a studio form, validated. */
function optionsOf<S extends z.ZodType>(form: ReceivedForm, schema: S): z.output<S> {
  let raw: unknown = {};
  if (form.fields.options !== undefined) {
    try {
      raw = JSON.parse(form.fields.options);
    } catch {
      throw new InvalidInput('options: not valid JSON; send an object such as {"strategy":"recursive"}.');
    }
  }
  return parseOrThrow(schema, camelKeys(raw, fieldsOf(schema)), 'options', 'options.');
}

/** A relative path from the browser, as a knowledge-base source name: forward slashes, nothing outside. */
export function sourceName(path: string): string {
  const parts = path
    .replace(/\\/g, '/')
    .split('/')
    .filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) {
    throw new InvalidInput(`options.paths: '${path}' is not a relative file path inside the drop.`);
  }
  return parts.join('/');
}

/** How an ingestion job's events go out (streamJobEvents): each stage seen, the files as changes. */
export const INGEST_JOB_EVENTS = {
  labelsOf: (job: IngestJobSnapshot) =>
    job.progress ? [job.progress.unpacking ? 'unpacking' : job.progress.stage] : [],
  rows: 'files',
} as const satisfies Pick<JobRoutesOptions<IngestJobSnapshot>, 'labelsOf' | 'rows'>;

/**
 * Studio ingestion (DESIGN §5): files, folders (as relative paths) and ZIPs are sent as multipart,
 * ingested in the background non-atomically with the studio limits, and followed by SSE.
 */
export function ingestRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  const jobs = new IngestJobs(
    (command) => services.ingestion.run(command),
    undefined,
    services.ingestJournal,
  );
  const documents = new SqliteDocumentRepository(services.db);
  const tags = ['Studio'];
  const scratch = () => join(services.dataDir, 'tmp', newId('studio', 12));

  route({
    method: 'post',
    path: '/listings/:id/ingest',
    summary: "Ingest files into a listing's knowledge base (background job)",
    description:
      'Multipart form: `files` parts (documents or ZIP archives) and an `options` part (JSON: strategy, chunkSize, chunkOverlap, csvRequiredColumns, paths). Answers 202 with the job id; follow it with GET /studio/jobs/{id}/events.',
    tags,
    params: IdParams,
    formBody: z.object({ files: z.string().meta({ format: 'binary' }), options: z.string() }),
    response: { status: 202, description: 'Accepted' },
    errors: [400, 404, 413],
    handler: async ({ req, res, params }) => {
      services.listings.get(params.id, 'studio');
      const dir = scratch();
      const form = await receiveMultipart(
        req,
        dir,
        { fileField: 'files', textFields: ['options'] },
        MULTIPART_LIMITS,
      );
      try {
        const options = optionsOf(form, IngestOptionsSchema);
        const { paths, csvRequiredColumns, ...chunking } = options;
        resolveChunkingOptions(chunking);
        if (form.files.length === 0)
          throw new InvalidInput('files: drop at least one file, folder or ZIP archive.');
        if (paths && paths.length !== form.files.length) {
          throw new InvalidInput(`options.paths: ${paths.length} names for ${form.files.length} files.`);
        }
        // Received into `dir`, which the job removes when it ends: kept sources are moved, not copied.
        // Named by their path in the drop: litter inside a dropped folder is left out, as the page does.
        const inputs = form.files.map((f, i) => ({
          path: f.path,
          name: paths ? sourceName(paths[i]!) : f.name,
          disposable: true,
          fromDrop: true,
        }));
        const job = jobs.start({
          listingId: params.id,
          inputs,
          chunking,
          csvRequiredColumns,
          limits: STUDIO_LIMITS,
          cleanup: () => rm(dir, { recursive: true, force: true }),
        });
        res.status(202);
        return { data: { jobId: job.id, job } };
      } catch (err) {
        await rm(dir, { recursive: true, force: true });
        throw err;
      }
    },
  });

  route({
    method: 'post',
    path: '/documents/:id/reingest',
    summary: 'Re-ingest one document from its kept original file (background job)',
    description:
      'JSON body: strategy, chunkSize, chunkOverlap and, for a CSV document, csvRequiredColumns (the columns a row must fill, [] for none, null for every named column); each one left out keeps the setting the document was ingested with. Answers 202 with the job id, like POST /studio/listings/{id}/ingest; 409 when the original file was not kept (documents ingested before the studio kept sources).',
    tags,
    params: IdParams,
    body: ReingestSchema,
    response: { status: 202, description: 'Accepted' },
    errors: [400, 404, 409],
    handler: async ({ res, params, body }) => {
      const document = documents.get(params.id);
      if (!services.sources.has(document.contentHash)) {
        throw new Conflict(
          `The original file of '${document.source}' was not kept (it was ingested before the studio kept source files): drop the file again on Ingest to re-ingest it.`,
        );
      }
      const previous = (document.metadata.chunking ?? {}) as Record<string, unknown>;
      const chunkSize = body.chunkSize ?? (previous.chunkSize as number | undefined);
      // The kept overlap only where it fits the chunk size asked for: a smaller size without an
      // overlap was refused for an overlap the creator never sent. Else the default for that size.
      const keptOverlap = previous.chunkOverlap as number | undefined;
      const chunking = {
        strategy: body.strategy ?? (previous.strategy as ChunkingOptions['strategy']),
        chunkSize,
        chunkOverlap:
          body.chunkOverlap ??
          (keptOverlap !== undefined && (chunkSize === undefined || keptOverlap < chunkSize)
            ? keptOverlap
            : undefined),
      };
      resolveChunkingOptions(chunking);
      if (body.csvRequiredColumns !== undefined && document.format !== 'csv') {
        throw new InvalidInput(
          `csvRequiredColumns: '${document.source}' is not a CSV document (it is ${document.format}).`,
        );
      }
      const csvRequiredColumns =
        body.csvRequiredColumns === null
          ? undefined
          : (body.csvRequiredColumns ??
            (Array.isArray(previous.csvRequiredColumns)
              ? (previous.csvRequiredColumns as string[])
              : undefined));
      // The kept copy is read in place and never removed by the job (no cleanup).
      const job = jobs.start({
        listingId: document.listingId,
        kind: 'reingest',
        inputs: [{ path: services.sources.pathOf(document.contentHash), name: document.source }],
        chunking,
        csvRequiredColumns,
        limits: STUDIO_LIMITS,
      });
      res.status(202);
      return { data: { jobId: job.id, job } };
    },
  });

  route({
    method: 'get',
    path: '/jobs',
    summary: 'Ingestion jobs of this launch and those a stop interrupted, newest first',
    description:
      'An ingestion the studio was running when it stopped (killed, crashed, closed) is reported with state `interrupted`, the names it was given and what may have been stored, until it is dismissed or another ingestion into its listing completes.',
    tags,
    query: z.object({ listingId: z.string().min(1).max(100).optional() }),
    response: { status: 200, description: 'OK' },
    handler: ({ query }) => ({ data: jobs.list(query.listingId) }),
  });

  jobRoutes(route, jobs, {
    path: '/jobs',
    noun: 'An ingestion job',
    snapshot: 'progress, per-file stages, outcome',
    outcome: 'the outcome',
    cancelSummary: 'Cancel an ingestion job (nothing is stored)',
    dismissSummary: "Forget an interrupted ingestion's report",
    tags,
    ...INGEST_JOB_EVENTS,
  });

  route({
    method: 'post',
    path: '/preview',
    summary: 'How one document would be chunked (nothing is stored)',
    description:
      'Multipart form: one `file` part and an `options` part (JSON: strategy, chunkSize, chunkOverlap, csvRequiredColumns, limit).',
    tags,
    formBody: z.object({ file: z.string().meta({ format: 'binary' }), options: z.string() }),
    response: { status: 200, description: 'OK' },
    errors: [400, 413, 415, 422],
    handler: async ({ req }) => {
      const dir = scratch();
      const form = await receiveMultipart(
        req,
        dir,
        { fileField: 'file', textFields: ['options', 'name'] },
        {
          maxFileBytes: STUDIO_LIMITS.maxFileBytes,
          fileLimitName: 'per document',
          maxFiles: 1,
          maxFieldBytes: 64 * 1024,
        },
      );
      try {
        const { limit, csvRequiredColumns, ...chunking } = optionsOf(form, PreviewOptionsSchema);
        const file = form.files[0];
        if (!file) throw new InvalidInput('file: send the document to preview.');
        const preview = await previewChunks({
          path: file.path,
          source: form.fields.name ? sourceName(form.fields.name) : file.name,
          chunking,
          csvRequiredColumns,
          limit,
          limits: STUDIO_LIMITS,
        });
        return { data: preview };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  });
}
