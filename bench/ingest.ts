import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DocumentFormat } from '../src/core/ingest/types';
import { buildCorpus, type Corpus, type CorpusPlan } from './corpus';
import { fixturesByFormat } from './fixtures';
import { measureIngestion, ScratchStudio, type CacheMode, type IngestMeasurement } from './ingestRun';
import { mb, median, medianRun, perSecond, seconds } from './stats';
import type { BenchContext, Check, Suite, SuiteResult, Table } from './suite';
import { writeEmbeddingsFile } from './uploadArchive';

const MB = 1024 * 1024;

/** Default bytes per format, and of the mixed corpus (before --scale). */
export const DEFAULT_FORMAT_BYTES = 5 * MB;
export const DEFAULT_MIXED_BYTES = 100 * MB;

/** The mixed corpus's shares of bytes: a knowledge base of mostly text, some office files and PDFs. */
export const MIXED_SHARES: Record<DocumentFormat, number> = {
  pdf: 0.05,
  docx: 0.05,
  html: 0.15,
  markdown: 0.25,
  json: 0.25,
  csv: 0.25,
};

const FORMATS = ['pdf', 'docx', 'html', 'markdown', 'json', 'csv', 'jsonl'] as const;

export interface IngestFigures {
  label: string;
  cache: CacheMode;
  files: number;
  bytes: number;
  chunks: number;
  /** Chunk texts the model computed; the rest were embedding-cache hits. */
  embedded: number;
  /** Median wall time over the runs. */
  ms: number;
  mbPerSecond: number;
  chunksPerSecond: number;
  filesPerSecond: number;
  /** Stage times of the median run, ms. */
  stages: Record<string, number>;
  runsMs: number[];
  rejected: IngestMeasurement['rejected'];
}

export const ingestFormatsSuite: Suite = {
  name: 'ingest.formats',
  description: 'ingestion throughput per format (studio ingestion, in process, fresh data dir per run)',
  async run(context) {
    const bytes = sizeOf(context, context.options.formatMb, DEFAULT_FORMAT_BYTES);
    await warmUp(context);
    const pool = await context.textPool();
    const rows: IngestFigures[] = [];
    for (const format of FORMATS) {
      const dir = context.tempDir(`kbs-bench-${format}-`);
      context.log(`ingest.formats: building ${mb(bytes)} MB of ${format}`);
      const rng = context.rng(`formats/${format}`);
      const corpus =
        format === 'jsonl'
          ? await jsonlCorpus(dir, bytes, context)
          : await buildCorpus(dir, { [format]: bytes }, rng, pool);
      // PDF copies are byte-identical, so after the first their chunks are embedding-cache hits:
      // measured both with the studio's cache and with a cache that always misses.
      const modes: CacheMode[] = format === 'pdf' ? ['shared', 'cold'] : ['shared'];
      for (const cache of modes) {
        const label = cache === 'cold' ? `${format} (cold cache)` : format;
        rows.push(await measure(context, label, corpus, cache));
      }
    }
    return result(
      { bytesPerFormat: bytes, formats: rows },
      [figuresTable('Per format', rows)],
      [
        'Text formats are perturbed copies (seeded: words replaced, rows and records shuffled, fixture prose added), so chunk texts differ; half of the Markdown, JSON, CSV and HTML bytes are in large files (about a quarter of the format size each), the rest in small ones.',
        'DOCX copies have the words of their runs replaced; PDF copies are identical apart from their names: "pdf" reuses embeddings after the first copy, "pdf (cold cache)" embeds every chunk.',
        'jsonl: pre-built embeddings of the offline model (100 dimensions), about 3 KB a line; nothing is parsed or embedded.',
        'Stages: reading = hashing (all of the work for jsonl), embedding includes writing to the staging database, storing = the commit into the knowledge base.',
      ],
      rows,
    );
  },
};

export const ingestMixedSuite: Suite = {
  name: 'ingest.mixed',
  description: 'ingestion throughput of a mixed corpus (studio ingestion, in process)',
  async run(context) {
    const bytes = sizeOf(context, context.options.mixedMb, DEFAULT_MIXED_BYTES);
    await warmUp(context);
    const plan: CorpusPlan = Object.fromEntries(
      Object.entries(MIXED_SHARES).map(([format, share]) => [format, Math.round(bytes * share)]),
    );
    const dir = context.tempDir('kbs-bench-mixed-');
    context.log(`ingest.mixed: building a ${mb(bytes)} MB mixed corpus`);
    const corpus = await buildCorpus(dir, plan, context.rng('mixed'), await context.textPool());
    const row = await measure(context, 'mixed', corpus, 'shared');
    const composition: Table = {
      title: 'Mixed corpus composition',
      columns: ['format', 'files', 'MB', 'largest MB'],
      rows: Object.entries(corpus.byFormat).map(([format, share]) => [
        format,
        share.files,
        mb(share.bytes, 2),
        mb(Math.max(...corpus.files.filter((f) => f.format === format).map((f) => f.bytes)), 2),
      ]),
    };
    return result(
      { bytes: corpus.bytes, composition: corpus.byFormat, mixed: row },
      [figuresTable('Mixed corpus', [row]), composition],
      [
        'One ingestion of the whole folder into one knowledge base (non-atomic, studio limits: 500 MB per knowledge base).',
      ],
      [row],
    );
  },
};

function sizeOf(context: BenchContext, explicitMb: number | undefined, defaultBytes: number): number {
  return explicitMb !== undefined
    ? Math.round(explicitMb * MB)
    : Math.round(defaultBytes * context.options.scale);
}

/** Loads the parsers, the pdfjs worker code and the offline model before anything is timed. */
export function warmUp(context: BenchContext): Promise<void> {
  return context.once('ingest-warm-up', async () => {
    context.log('warming up: one fixture of each format');
    const studio = new ScratchStudio();
    try {
      const fixtures = fixturesByFormat();
      await measureIngestion(
        studio,
        Object.values(fixtures).map((list) => ({ path: list[0]!.path })),
      );
    } finally {
      studio.close();
    }
  });
}

async function jsonlCorpus(dir: string, bytes: number, context: BenchContext): Promise<Corpus> {
  const folder = join(dir, 'jsonl');
  await mkdir(folder, { recursive: true });
  const corpus: Corpus = { dir, files: [], bytes: 0, byFormat: {} };
  const rng = context.rng('formats/jsonl');
  const pool = await context.textPool();
  for (let i = 0; i < 4; i++) {
    const path = join(folder, `part-${i}.jsonl`);
    const written = await writeEmbeddingsFile(path, bytes / 4, rng.fork(), pool);
    corpus.files.push({ path, bytes: written.bytes, format: 'jsonl' });
    corpus.bytes += written.bytes;
  }
  corpus.byFormat.jsonl = { files: corpus.files.length, bytes: corpus.bytes };
  return corpus;
}

async function measure(
  context: BenchContext,
  label: string,
  corpus: Corpus,
  cache: CacheMode,
): Promise<IngestFigures> {
  const runs: (IngestMeasurement & { embedded: number })[] = [];
  for (let i = 0; i < context.options.repeat; i++) {
    context.log(
      `  ${label}: run ${i + 1}/${context.options.repeat} (${corpus.files.length} files, ${mb(corpus.bytes)} MB)`,
    );
    const studio = new ScratchStudio(cache);
    try {
      const measured = await measureIngestion(studio, [{ path: corpus.dir, name: 'corpus' }]);
      const embedded = cache === 'cold' ? measured.chunks : studio.embeddedTexts();
      runs.push({ ...measured, embedded });
    } finally {
      studio.close();
    }
  }
  const typical = medianRun(runs);
  const ms = median(runs.map((r) => r.ms));
  return {
    label,
    cache,
    files: typical.files,
    bytes: corpus.bytes,
    chunks: typical.chunks,
    embedded: typical.embedded,
    ms: Math.round(ms),
    mbPerSecond: perSecond(corpus.bytes / MB, ms),
    chunksPerSecond: perSecond(typical.chunks, ms, 0),
    filesPerSecond: perSecond(typical.files, ms, 1),
    stages: typical.stages,
    runsMs: runs.map((r) => Math.round(r.ms)),
    rejected: typical.rejected,
  };
}

function figuresTable(title: string, rows: IngestFigures[]): Table {
  return {
    title,
    columns: [
      'corpus',
      'files',
      'MB',
      'chunks',
      'embedded',
      's',
      'MB/s',
      'chunks/s',
      'files/s',
      'time by stage',
    ],
    rows: rows.map((r) => [
      r.label,
      r.files,
      mb(r.bytes, r.bytes < MB ? 2 : 1),
      r.chunks,
      r.embedded,
      seconds(r.ms),
      r.mbPerSecond,
      r.chunksPerSecond,
      r.filesPerSecond,
      stageShares(r.stages),
    ]),
  };
}

/** "parsing 61% · chunking 12% · …", stages under 1% left out. */
function stageShares(stages: Record<string, number>): string {
  const total = Object.values(stages).reduce((a, b) => a + b, 0);
  return Object.entries(stages)
    .map(([stage, ms]) => [stage, Math.round((ms * 100) / total)] as const)
    .filter(([, share]) => share >= 1)
    .map(([stage, share]) => `${stage} ${share}%`)
    .join(' · ');
}

function result(
  figures: Record<string, unknown>,
  tables: Table[],
  notes: string[],
  rows: IngestFigures[],
): SuiteResult {
  const checks: Check[] = rows.map((r) => ({
    name: `${r.label}: every file ingested`,
    ok: r.rejected.length === 0 && r.chunks > 0,
    detail:
      r.rejected.length === 0
        ? `${r.files} files, ${r.chunks} chunks`
        : `${r.rejected.length} rejected, e.g. ${r.rejected[0]!.source}: ${r.rejected[0]!.message}`,
  }));
  return { figures, tables, notes, checks };
}
