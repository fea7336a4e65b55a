import { mkdir, rename, rm } from 'node:fs/promises';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { InvalidInput, NotFound } from '../../../core/errors';
import { newId } from '../../../core/ids';
import { BULK_LIMITS } from '../../../core/ingest/limits';
import { BEIR_FILES, readCorpus, readQrels, readQueries } from '../../../core/retrieve/eval/beir';
import { writeCorpusAsJson } from '../../../core/retrieve/eval/corpusFiles';
import { judgedQueries } from '../../../core/retrieve/eval/evaluate';
import {
  EVAL_DEPTH,
  expectedQuestionSet,
  parseQuestionFile,
  runEvaluation,
  type EvalRun,
  type QuestionSet,
} from '../../../core/retrieve/eval/runs';
import { knowledgeBaseChunking } from '../../../core/retrieve/eval/runSettings';
import { DENSE_WEIGHT } from '../../../core/retrieve/scoring';
import { parseOrThrow } from '../../../core/validation';
import { SqliteDocumentRepository } from '../../../db/repositories/documents';
import { SqliteEvalRunRepository } from '../../../db/repositories/evalRuns';
import { RETRIEVAL_MODES, type RetrievalMode } from '../../../shared/retrieval';
import type { StudioServices } from '../../../db/services';
import type { ServerDeps } from '../../deps';
import { receiveMultipart } from '../../multipart';
import type { defineRoutes } from '../../route';

const IdParams = z.object({ id: z.string().min(1).max(100) });
const RunParams = IdParams.extend({ runId: z.string().min(1).max(100) });
const ModeSchema = z.enum(RETRIEVAL_MODES).default('hybrid');
const NameSchema = z.string().trim().max(120).optional();

const HandWrittenSchema = z.object({
  name: NameSchema,
  mode: ModeSchema,
  questions: z
    .array(
      z
        .object({
          question: z.string().trim().min(1),
          expectedSource: z.string().trim().min(1).optional(),
          expectedText: z.string().trim().min(1).optional(),
        })
        // As a question file's row: without an expected answer there is nothing to score.
        .refine((q) => q.expectedSource !== undefined || q.expectedText !== undefined, {
          message: 'give expectedSource or expectedText',
          path: ['expectedSource'],
        }),
    )
    .min(1),
});

const K = 10;
const MAX_FILE_BYTES = 200 * 1024 * 1024;

/**
 * Evaluation runs (studio only): a question set is run against a listing and stored with its
 * metrics, per-question hits and misses, score distribution and the settings used. Runs are
 * synchronous: a BEIR corpus is ingested first when the listing is empty, then every question runs.
 */
export function evaluationRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  const runs = new SqliteEvalRunRepository(services.db);
  const documents = new SqliteDocumentRepository(services.db);
  const tags = ['Studio'];

  route({
    method: 'get',
    path: '/listings/:id/evaluations',
    summary: "A listing's evaluation runs, newest first",
    tags,
    params: IdParams,
    response: { status: 200, description: 'OK' },
    handler: ({ params }) => {
      services.listings.get(params.id, 'studio');
      return { data: runs.list(params.id) };
    },
  });
  route({
    method: 'delete',
    path: '/listings/:id/evaluations/:runId',
    summary: 'Delete an evaluation run',
    tags,
    params: RunParams,
    response: { status: 200, description: 'Deleted' },
    errors: [404],
    handler: ({ params }) => {
      const run = runs.get(params.runId);
      if (!run || run.listingId !== params.id)
        throw new NotFound(`Evaluation run '${params.runId}' was not found.`);
      runs.remove(run.id);
      return { data: { id: run.id, deleted: true } };
    },
  });
  route({
    method: 'post',
    path: '/listings/:id/evaluations',
    summary: 'Run an evaluation: BEIR files, a CSV/JSONL question file (multipart), or JSON questions',
    description:
      'multipart/form-data: `files` = corpus.jsonl + queries.jsonl + a qrels .tsv (BEIR), or one .csv/.jsonl of question + expected_source / expected_text; text fields `mode` and `name`. Or a JSON body `{ questions: [{ question, expectedSource?, expectedText? }], mode?, name? }`. An expected source naming no document of the listing is reported in `report.unknownSources` (with `suggestion`, the document it most likely meant, when one is close), its question left out of the metrics unless it also has an expected text; none left to score is a 400.',
    tags,
    params: IdParams,
    response: { status: 201, description: 'The stored run' },
    errors: [404, 413],
    handler: async ({ req, params }) => {
      const listing = services.listings.get(params.id, 'studio');
      const work = join(services.dataDir, 'tmp', newId('evr', 12));
      try {
        let input: { set: QuestionSet; mode: RetrievalMode; name?: string; dataset: string };
        if (req.is('multipart/form-data')) {
          input = await fromMultipart(req, work, services, listing.id);
        } else if (req.is('application/json')) {
          const body = parseOrThrow(HandWrittenSchema, req.body);
          input = {
            set: expectedQuestionSet(body.questions),
            mode: body.mode,
            name: body.name,
            dataset: 'hand-written questions',
          };
        } else {
          throw new InvalidInput(
            'body: send multipart/form-data with `files`, or a JSON body with `questions`.',
          );
        }
        const current = services.listings.get(listing.id, 'studio');
        if (current.chunkCount === 0)
          throw new InvalidInput(
            `Listing '${listing.id}' has no chunks yet: ingest documents first, or send a BEIR corpus.jsonl.`,
          );
        const report = await runEvaluation({
          set: input.set,
          settings: {
            mode: input.mode,
            k: K,
            embeddingModel: current.embeddingModel,
            documentCount: current.documentCount,
            chunkCount: current.chunkCount,
            dataset: input.dataset,
            chunking: knowledgeBaseChunking(documents.chunkings(listing.id)),
            denseWeight: input.mode === 'hybrid' ? (current.retrievalDenseWeight ?? DENSE_WEIGHT) : null,
            topK: EVAL_DEPTH,
          },
          documentSources: () => documents.sources(listing.id),
          search: (query) =>
            services.retrieval.deepSearch(listing.id, query, { mode: input.mode, depth: EVAL_DEPTH }),
        });
        const createdAt = new Date().toISOString();
        const run: EvalRun = {
          id: newId('evr', 12),
          listingId: listing.id,
          name: input.name || `${input.dataset} · ${input.mode}`,
          createdAt,
          report,
        };
        runs.insert(run);
        return { data: run };
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
  });
}

async function fromMultipart(
  req: Parameters<typeof receiveMultipart>[0],
  work: string,
  services: StudioServices,
  listingId: string,
) {
  const form = await receiveMultipart(
    req,
    join(work, 'received'),
    { fileField: 'files', textFields: ['mode', 'name'] },
    { maxFileBytes: MAX_FILE_BYTES, maxFiles: 4, maxFieldBytes: 1024 },
  );
  const mode = parseOrThrow(ModeSchema, form.fields.mode || undefined, 'mode');
  const name = parseOrThrow(NameSchema, form.fields.name, 'name') || undefined;
  if (form.files.length === 0) throw new InvalidInput('files: send a question file or the BEIR files.');
  const byName = (test: (n: string) => boolean) => form.files.find((f) => test(f.name.toLowerCase()));
  const queries = byName((n) => n === 'queries.jsonl');
  const qrels = byName((n) => n.endsWith('.tsv'));
  if (queries || qrels) {
    if (!queries || !qrels)
      throw new InvalidInput(
        `files: a BEIR set needs queries.jsonl and a qrels .tsv (e.g. test.tsv); ${queries ? 'the qrels file' : 'queries.jsonl'} is missing.`,
      );
    const dir = join(work, 'beir');
    await mkdir(join(dir, 'qrels'), { recursive: true });
    await rename(queries.path, join(dir, BEIR_FILES.queries));
    await rename(qrels.path, join(dir, BEIR_FILES.qrels));
    // Messages name the files as sent, not where they were put (nor the data directory with them).
    const set: QuestionSet = {
      kind: 'beir',
      queries: await readQueries(dir, queries.name),
      qrels: await readQrels(dir, qrels.name),
    };
    // Refused before a corpus is ingested for it.
    judgedQueries(set.queries, set.qrels);
    const corpus = byName((n) => n === 'corpus.jsonl');
    if (corpus && services.listings.get(listingId, 'studio').chunkCount === 0) {
      await rename(corpus.path, join(dir, BEIR_FILES.corpus));
      await ingestCorpus(services, listingId, dir, join(work, 'corpus'), corpus.name);
    }
    return { set, mode, name, dataset: 'BEIR set' };
  }
  if (form.files.length > 1)
    throw new InvalidInput(
      'files: send one question file (.csv or .jsonl), or the BEIR files corpus.jsonl, queries.jsonl and test.tsv.',
    );
  const file = form.files[0]!;
  const questions = parseQuestionFile(file.name, await readFile(file.path, 'utf8'));
  return { set: expectedQuestionSet(questions), mode, name, dataset: file.name };
}

/** Ingests a BEIR corpus through the normal pipeline, as JSON documents carrying their corpus id. */
async function ingestCorpus(
  services: StudioServices,
  listingId: string,
  dir: string,
  out: string,
  shownAs: string,
) {
  const { files } = await writeCorpusAsJson(readCorpus(dir, shownAs), out);
  await services.ingestion.run({
    listingId,
    // Written under the evaluation's scratch folder, removed when it ends: kept sources are moved.
    inputs: files.map((path) => ({ path, disposable: true })),
    atomic: true,
    limits: BULK_LIMITS,
  });
}
