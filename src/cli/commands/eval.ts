import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { InvalidInput } from '../../core/errors';
import { newId } from '../../core/ids';
import { BULK_LIMITS } from '../../core/ingest/limits';
import { checkBeirFolder, readCorpus, readQrels, readQueries } from '../../core/retrieve/eval/beir';
import { writeCorpusAsJson } from '../../core/retrieve/eval/corpusFiles';
import { corpusIdsOf, evaluate, judgedQueries, type EvalReport } from '../../core/retrieve/eval/evaluate';
import { parseOrThrow } from '../../core/validation';
import type { StudioServices } from '../../db/services';
import { RetrieveRequestSchema, type RetrievalMode } from '../../shared/retrieval';
import { numberFlag, withServices } from '../context';
import type { Output } from '../output';

interface EvalFlags {
  listing: string;
  k?: number;
  mode?: string;
}

const DEPTH = 100;
const round = (x: number, digits: number) => Number(x.toFixed(digits));

export function evalCommand(program: Command): void {
  program
    .command('eval')
    .description(
      'score retrieval on a BEIR-layout dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv); an empty listing is filled from the corpus first',
    )
    .requiredOption('--listing <id>', 'listing id')
    .argument('<dataset-dir>', 'BEIR dataset folder')
    .option('--k <n>', 'cut-off of nDCG and recall, 1..100 (default 10)', numberFlag)
    .option('--mode <mode>', 'hybrid | dense | lexical (default hybrid)')
    .action((datasetDir: string, flags: EvalFlags, cmd: Command) =>
      withServices(cmd, async ({ services, out }) => {
        const k = flags.k ?? 10;
        if (!Number.isInteger(k) || k < 1 || k > DEPTH)
          throw new InvalidInput(`k: expected an integer from 1 to ${DEPTH}.`);
        const mode = parseOrThrow(RetrieveRequestSchema.shape.mode, flags.mode, 'mode');
        const dir = resolve(datasetDir);
        await checkBeirFolder(dir);
        const listing = services.listings.get(flags.listing, 'studio');
        // Everything that can refuse the dataset is read before the corpus fills the listing: qrels that
        // match no query used to fail after the ingestion, leaving the listing full (as the studio does).
        const [queries, qrels] = await Promise.all([readQueries(dir), readQrels(dir)]);
        const judged = judgedQueries(queries, qrels).length;
        const unmapped = () =>
          new InvalidInput(
            `Listing '${listing.id}' holds chunks without "corpusId" metadata, so its results cannot be matched to the qrels. Evaluate an empty listing: kbstudio eval fills it from ${join(dir, 'corpus.jsonl')}.`,
          );
        const ingested = listing.chunkCount === 0 ? await ingestCorpus(services, listing.id, dir, out) : null;

        out.info(
          `Running ${judged} judged queries (${mode}; ${queries.length - judged} without judgments skipped)…`,
        );
        let chunksSeen = 0;
        let chunksMapped = 0;
        const report = await evaluate({
          queries,
          qrels,
          k,
          search: async (text) => {
            const { chunks, latencyMs } = await services.retrieval.deepSearch(listing.id, text, {
              mode,
              depth: DEPTH,
            });
            chunksSeen += chunks.length;
            chunksMapped += chunks.filter((c) => typeof c.sourceMetadata.corpusId === 'string').length;
            // Refused at the first query that finds chunks, none of them mapped: not after every query ran.
            if (chunksSeen > 0 && chunksMapped === 0) throw unmapped();
            return { ids: corpusIdsOf(chunks), latencyMs };
          },
        });
        const summary = summarize(report, listing.id, mode, ingested);
        out.result(out.json ? { ...summary, perQuery: perQueryOf(report) } : summary, () =>
          Object.entries(summary)
            .map(([key, value]) => `${key.padEnd(14)} ${humanValue(key, value)}`)
            .join('\n'),
        );
      }),
    );
}

/** A summary value for people: `ingested` says whether the corpus was ingested (it printed `null`). */
function humanValue(key: string, value: unknown): string {
  if (key !== 'ingested') return typeof value === 'object' ? JSON.stringify(value) : String(value);
  const ingested = value as { documents: number; chunks: number; durationMs: number } | null;
  return ingested
    ? `${ingested.documents} documents, ${ingested.chunks} chunks (${(ingested.durationMs / 1000).toFixed(1)} s)`
    : 'no (the listing already held chunks)';
}

/** Ingests the corpus through the normal pipeline, as JSON documents carrying their corpus id. */
async function ingestCorpus(services: StudioServices, listingId: string, dir: string, out: Output) {
  const work = join(services.dataDir, 'tmp', newId('eval', 12));
  try {
    out.info(`The listing is empty: ingesting ${join(dir, 'corpus.jsonl')}…`);
    const { files, documents } = await writeCorpusAsJson(readCorpus(dir), work);
    const result = await services.ingestion.run({
      listingId,
      inputs: files.map((path) => ({ path })),
      atomic: true,
      limits: BULK_LIMITS,
    });
    return { documents, chunks: result.chunkCount, durationMs: result.durationMs };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function summarize(
  report: EvalReport,
  listingId: string,
  mode: RetrievalMode,
  ingested: { documents: number; chunks: number; durationMs: number } | null,
) {
  return {
    [`ndcg@${report.k}`]: round(report.ndcg, 4),
    [`recall@${report.k}`]: round(report.recallAtK, 4),
    'recall@100': round(report.recallAt100, 4),
    mrr: round(report.mrr, 4),
    queries: report.queries,
    p50LatencyMs: round(report.p50LatencyMs, 1),
    skippedQueries: report.skipped,
    listingId,
    mode,
    ingested,
  };
}

function perQueryOf(report: EvalReport) {
  return report.perQuery.map((q) => ({
    id: q.id,
    query: q.text,
    [`ndcg@${report.k}`]: round(q.ndcg, 4),
    [`recall@${report.k}`]: round(q.recallAtK, 4),
    'recall@100': round(q.recallAt100, 4),
    reciprocalRank: round(q.reciprocalRank, 4),
    latencyMs: q.latencyMs,
    relevant: q.relevant,
    top: q.top,
  }));
}
