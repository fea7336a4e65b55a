import { once } from 'node:events';
import {
  appendFileSync,
  closeSync,
  cpSync,
  createWriteStream,
  openSync,
  readSync,
  statSync,
  truncateSync,
} from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { availableParallelism } from 'node:os';
import { OFFLINE_MODEL } from '../src/core/embed/offlineGlove';
import type { DocumentFormat } from '../src/core/ingest/types';
import { BULK_LIMITS, type IngestLimits } from '../src/core/ingest/limits';
import type { IngestInput } from '../src/core/ingest/sources';
import { buildCorpus, type Corpus, type CorpusPlan } from './corpus';
import { countTokensOffThread } from '../src/core/ingest/chunkers/tokenCounter';
import { fixturesByFormat, type TextPool } from './fixtures';
import { measureIngestion, ScratchStudio, type IngestMeasurement } from './ingestRun';
import { prose } from './perturb';
import type { Rng } from './prng';
import { mb, median, medianRun, perSecond, seconds } from './stats';
import type { BenchContext, Check, Suite, SuiteResult, Table } from './suite';
import { writeEmbeddingsFile } from './uploadArchive';

const MB = 1024 * 1024;

/** Default bytes per format, and of the mixed corpus (before --scale). */
export const DEFAULT_FORMAT_BYTES = 5 * MB;
export const DEFAULT_MIXED_BYTES = 100 * MB;
/** Pre-built embedding lines of the import measurement (before --scale): `--scale 10` gives the 500k. */
export const DEFAULT_IMPORT_LINES = 50_000;

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
  files: number;
  bytes: number;
  chunks: number;
  /** Median wall time over the runs. */
  ms: number;
  mbPerSecond: number;
  chunksPerSecond: number;
  filesPerSecond: number;
  /** Stage times of the median run, ms. */
  stages: Record<string, number>;
  runsMs: number[];
  rejected: IngestMeasurement['rejected'];
  /** The median run's time until its commit worker had checkpointed too, ms. */
  settledMs: number;
  /** The median run's longest hold of the event loop, ms. */
  longestStallMs: number;
  /** The median run's CPU time, ms: every thread of the process, and the ingesting thread alone (null off Linux). */
  cpuMs: number;
  mainCpuMs: number | null;
  /** The median run's write lock held by its commit, ms (null without a commit). */
  writeLockMs: number | null;
}

/** What the CPU columns of the ingestion tables say. */
const CPU_NOTE = `"CPU s": CPU time of every thread of the process during the ingestion (the ingesting thread, the parser workers, the commit's worker, V8's compiler and garbage collector, libuv's file work); with ${availableParallelism()} cores, no schedule of the same work takes less than CPU s / ${availableParallelism()}. "main s": the ingesting thread's own (reading and hashing, chunking, token counts, embedding, staging); while that work stays on one thread, no number of cores makes the ingestion shorter than main s. "stall ms": the longest the ingesting thread's event loop was held at once (a server would answer nothing meanwhile). "lock s": how long the commit held the database's write lock (the server's other writes wait for it meanwhile; reads do not).`;

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
      rows.push(await measure(context, format, corpus));
    }
    const { figures: imported, corpus: importCorpus } = await measureImport(context);
    const again = await measureReimport(context, imported, importCorpus);
    return result(
      { bytesPerFormat: bytes, formats: rows, import: imported, importAgain: again },
      [figuresTable('Per format', rows), importTable([imported, again])],
      [
        'Text formats are perturbed copies (seeded: words replaced, rows and records shuffled, fixture prose added), so chunk texts differ; half of the Markdown, JSON, CSV and HTML bytes are in large files (about a quarter of the format size each), the rest in small ones.',
        'DOCX copies have the words of their runs replaced; PDF copies are identical apart from their names (the offline model keeps no embedding cache: every chunk is embedded).',
        'jsonl: pre-built embeddings of the offline model (100 dimensions), about 3 KB a line; nothing is parsed or embedded.',
        'Stages: reading = reading and hashing the file (for jsonl: all of the staging), parsing = waiting for the parse (PDF, DOCX, HTML and Markdown files are parsed ahead on worker threads), embedding includes writing to the staging database, storing = the commit into the knowledge base (for jsonl, its end: the lines were written into it while they were read).',
        CPU_NOTE,
        `Import: ${imported.lines.toLocaleString('en')} pre-built embedding lines (offline model, 100 dimensions, 1.5–2.5 KB of text a line) in one JSONL file, imported without the studio's 500 MB cap (as a bulk upload would); read + written = reading, checking and counting the tokens of the lines while the commit's worker writes them into its transaction; commit end = from the last line to the transaction's end (limits checked, COMMIT); checkpointed = until that worker had also copied the WAL into the database file, after the import was done; longest stall = the longest the ingesting thread's event loop was held at once (a server would answer nothing meanwhile). The issue's target is 500,000 lines in 60 s (8,333 lines/s): --scale 10.`,
        'Import again: the same file with one line added, imported into the knowledge base that holds its first version (imported just before, not timed), as a creator imports a new version of their embeddings: every chunk of the old version is replaced in the one commit.',
      ],
      [...rows, imported, again],
    );
  },
};

export const ingestMixedSuite: Suite = {
  name: 'ingest.mixed',
  description: 'ingestion throughput of a mixed corpus (studio ingestion, in process)',
  async run(context) {
    const bytes = sizeOf(context, context.options.mixedMb, DEFAULT_MIXED_BYTES);
    await warmUp(context);
    const corpus = await buildMixedCorpus(context, 'ingest.mixed', bytes);
    // The whole corpus once first, not timed: a process's first large ingestion costs more (10 MB: about
    // 2 s more CPU, 3.9-4.1 s instead of 3.2-3.6 s; a tenth of the files as warm-up was not enough), which
    // fell on whichever row was measured first. Even so the first row is 0.2-0.5 s slower at 10 MB:
    // compare the rows at 100 MB or with --repeat.
    // Its knowledge base is kept for the last row, the folder ingested again after some of it changed.
    context.log('  mixed: one untimed ingestion first');
    const warm = new ScratchStudio();
    const warmListing = warm.newListing();
    let row: IngestFigures;
    let dropped: IngestFigures;
    let again: { figures: IngestFigures; changed: number };
    try {
      await measureIngestion(warm, [{ path: corpus.dir, name: 'corpus' }], undefined, false, warmListing);
      row = await measure(context, 'mixed', corpus);
      dropped = await measure(context, 'mixed, dropped', corpus, undefined, true);
      again = await measureChangedFolder(context, warm, warmListing, corpus);
    } finally {
      await warm.close();
    }
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
    const outcome = result(
      {
        bytes: corpus.bytes,
        composition: corpus.byFormat,
        mixed: row,
        dropped,
        ingestedAgain: again.figures,
      },
      [figuresTable('Mixed corpus', [row, dropped, again.figures]), composition],
      [
        'One ingestion of the whole folder into one knowledge base (non-atomic, studio limits: 500 MB per knowledge base).',
        '"mixed, ingested again": the folder once more into the knowledge base of the untimed first ingestion, after a line was added to each of its Markdown files, as a creator adds a folder again after editing part of it: those files replace their old versions (files = those ingested; MB and chunks are those of the whole folder and knowledge base), the others are read, hashed and left unchanged. Measured once (the edit is made once).',
        '"mixed": the folder as `kbstudio ingest` is given it (the source store copies each file). "mixed, dropped": the same files as the studio receives a drop (copied into a scratch folder first, not timed), ingested as disposable inputs that the source store moves instead, by the studio\'s job queue, its progress followed as a page follows it (the event stream\'s own code, its events written nowhere instead of to a socket).',
        CPU_NOTE,
      ],
      [row, dropped, again.figures],
    );
    outcome.checks.push({
      name: 'mixed, ingested again: the changed files ingested, the others unchanged',
      ok: again.figures.files === again.changed,
      detail: `${again.figures.files} ingested of ${again.changed} changed`,
    });
    return outcome;
  },
};

/**
 * The corpus ingested again into `listingId`, which holds it, after a line was added to each of its
 * Markdown files: each replaces its old version (its vectors and full-text rows deleted in the commit)
 * while the other files are found unchanged.
 */
async function measureChangedFolder(
  context: BenchContext,
  studio: ScratchStudio,
  listingId: string,
  corpus: Corpus,
): Promise<{ figures: IngestFigures; changed: number }> {
  const edited = corpus.files.filter((f) => f.format === 'markdown');
  const line = '\n\nEdited after the first ingestion.\n';
  for (const f of edited) appendFileSync(f.path, line);
  const bytes = corpus.bytes + edited.length * Buffer.byteLength(line);
  context.log(`  mixed, ingested again: ${edited.length} Markdown files changed`);
  const run = await measureIngestion(
    studio,
    [{ path: corpus.dir, name: 'corpus' }],
    undefined,
    false,
    listingId,
  );
  return { figures: figuresOf('mixed, ingested again', bytes, [run]), changed: edited.length };
}

/** The mixed corpus of about `bytes` (MIXED_SHARES), the same files for the same size and seed. */
export async function buildMixedCorpus(context: BenchContext, suite: string, bytes: number): Promise<Corpus> {
  const plan: CorpusPlan = Object.fromEntries(
    Object.entries(MIXED_SHARES).map(([format, share]) => [format, Math.round(bytes * share)]),
  );
  const dir = context.tempDir(`kbs-bench-${suite.replace(/\W/g, '-')}-`);
  context.log(`${suite}: building a ${mb(bytes)} MB mixed corpus`);
  return buildCorpus(dir, plan, context.rng('mixed'), await context.textPool());
}

function sizeOf(context: BenchContext, explicitMb: number | undefined, defaultBytes: number): number {
  return explicitMb !== undefined
    ? Math.round(explicitMb * MB)
    : Math.round(defaultBytes * context.options.scale);
}

/** Loads the parsers, the worker threads (pdfjs, mammoth, token counting) and the offline model before anything is timed. */
export function warmUp(context: BenchContext): Promise<void> {
  return context.once('ingest-warm-up', async () => {
    context.log('warming up: one fixture of each format');
    const studio = new ScratchStudio();
    try {
      const fixtures = fixturesByFormat();
      // The token-counting workers of pre-built embedding lines start once per process.
      await countTokensOffThread(['warm up']);
      await measureIngestion(
        studio,
        Object.values(fixtures).map((list) => ({ path: list[0]!.path })),
      );
    } finally {
      await studio.close();
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

/**
 * The corpus's folder as `kbstudio ingest` is given it; or with `drop`, as the studio receives a drop:
 * each file received into a scratch folder (copied there first, not timed) and ingested as a disposable
 * input under the same source name, so the source store moves it rather than copying it.
 */
function inputsOf(context: BenchContext, corpus: Corpus, drop: boolean): IngestInput[] {
  if (!drop) return [{ path: corpus.dir, name: 'corpus' }];
  const received = context.tempDir('kbs-bench-drop-');
  cpSync(corpus.dir, received, { recursive: true });
  return corpus.files.map((f) => {
    const rel = relative(corpus.dir, f.path);
    return { path: join(received, rel), name: `corpus/${rel.split(sep).join('/')}`, disposable: true };
  });
}

async function measure(
  context: BenchContext,
  label: string,
  corpus: Corpus,
  limits?: IngestLimits,
  drop = false,
): Promise<IngestFigures> {
  const runs: IngestMeasurement[] = [];
  for (let i = 0; i < context.options.repeat; i++) {
    context.log(
      `  ${label}: run ${i + 1}/${context.options.repeat} (${corpus.files.length} files, ${mb(corpus.bytes)} MB)`,
    );
    const inputs = inputsOf(context, corpus, drop);
    const studio = new ScratchStudio();
    try {
      runs.push(await measureIngestion(studio, inputs, limits, drop));
    } finally {
      await studio.close();
    }
  }
  return figuresOf(label, corpus.bytes, runs);
}

/** The figures of `runs` of one ingestion of `bytes`: the median run's, with the median wall time. */
function figuresOf(label: string, bytes: number, runs: IngestMeasurement[]): IngestFigures {
  const typical = medianRun(runs);
  const ms = median(runs.map((r) => r.ms));
  return {
    label,
    files: typical.files,
    bytes,
    chunks: typical.chunks,
    ms: Math.round(ms),
    mbPerSecond: perSecond(bytes / MB, ms),
    chunksPerSecond: perSecond(typical.chunks, ms, 0),
    filesPerSecond: perSecond(typical.files, ms, 1),
    stages: typical.stages,
    runsMs: runs.map((r) => Math.round(r.ms)),
    rejected: typical.rejected,
    settledMs: Math.round(typical.settledMs),
    longestStallMs: typical.longestStallMs,
    cpuMs: typical.cpuMs,
    mainCpuMs: typical.mainCpuMs,
    writeLockMs: typical.writeLockMs,
  };
}

export interface ImportFigures extends IngestFigures {
  lines: number;
  linesPerSecond: number;
  /** Until the last line was written into the commit (reading, checking, counting, writing overlap). */
  stagingMs: number;
  /** From then to the commit's end. */
  commitMs: number;
}

/** Pre-built embeddings at scale: one JSONL file of DEFAULT_IMPORT_LINES × scale lines, imported whole. */
async function measureImport(context: BenchContext): Promise<{ figures: ImportFigures; corpus: Corpus }> {
  const lines = Math.max(100, Math.round(DEFAULT_IMPORT_LINES * context.options.scale));
  const dir = context.tempDir('kbs-bench-import-');
  context.log(`ingest.formats: writing ${lines.toLocaleString('en')} pre-built embedding lines`);
  const path = join(dir, 'import.jsonl');
  const bytes = await writeEmbeddingLines(path, lines, context.rng('import'), await context.textPool());
  const corpus: Corpus = {
    dir,
    files: [{ path, bytes, format: 'jsonl' }],
    bytes,
    byFormat: { jsonl: { files: 1, bytes } },
  };
  // Without the studio's 500 MB per knowledge base: 500,000 lines are 1.4 GB, a bulk upload's size.
  const label = `jsonl import (${lines.toLocaleString('en')} lines)`;
  return { figures: importFigures(await measure(context, label, corpus, BULK_LIMITS), lines), corpus };
}

function importFigures(figures: IngestFigures, lines: number): ImportFigures {
  const commitMs = figures.stages.storing ?? 0;
  return {
    ...figures,
    lines,
    linesPerSecond: perSecond(lines, figures.ms, 0),
    stagingMs: Math.max(0, figures.ms - commitMs),
    commitMs,
  };
}

/**
 * The import's file changed (its last line taken off: a line more would cross the 500,000-chunk limit
 * at --scale 10) and imported again into the knowledge base holding the version before: each run in a
 * fresh data directory, that version imported first, not timed. The old version is the whole knowledge
 * base, and every one of its chunks is replaced.
 */
async function measureReimport(
  context: BenchContext,
  first: ImportFigures,
  corpus: Corpus,
): Promise<ImportFigures> {
  const path = corpus.files[0]!.path;
  const runs: IngestMeasurement[] = [];
  let lines = first.lines;
  for (let i = 0; i < context.options.repeat; i++) {
    const replacing = `${(lines - 1).toLocaleString('en')} lines replacing ${lines.toLocaleString('en')}`;
    context.log(`  jsonl import again (${replacing}): run ${i + 1}/${context.options.repeat}`);
    const studio = new ScratchStudio();
    try {
      const listingId = studio.newListing();
      const inputs = [{ path }];
      await measureIngestion(studio, inputs, BULK_LIMITS, false, listingId);
      await studio.services.knowledgeBase.settled();
      removeLastLine(path);
      lines--;
      runs.push(await measureIngestion(studio, inputs, BULK_LIMITS, false, listingId));
    } finally {
      await studio.close();
    }
  }
  const label = `jsonl import again (${lines.toLocaleString('en')} lines)`;
  return importFigures(figuresOf(label, statSync(path).size, runs), lines);
}

/** Truncates a file of newline-ended lines before its last line (lines are under 1 MB). */
function removeLastLine(path: string): void {
  const size = statSync(path).size;
  const tail = Buffer.alloc(Math.min(size, 1 << 20));
  const fd = openSync(path, 'r');
  try {
    readSync(fd, tail, 0, tail.length, size - tail.length);
  } finally {
    closeSync(fd);
  }
  // The newline before the last one ends the line before it.
  truncateSync(path, size - tail.length + tail.lastIndexOf(10, tail.length - 2) + 1);
}

/** The ingesting thread's CPU seconds, or 'n/a' where they cannot be read. */
function mainSeconds(row: IngestFigures): number | string {
  return row.mainCpuMs === null ? 'n/a' : seconds(row.mainCpuMs);
}

function importTable(rows: ImportFigures[]): Table {
  return {
    title: 'Pre-built embeddings import',
    columns: [
      'import',
      'lines',
      'MB',
      's',
      'lines/s',
      'MB/s',
      'read + written s',
      'commit end s',
      'checkpointed s',
      'longest stall ms',
      'CPU s',
      'main s',
    ],
    rows: rows.map((row, at) => [
      at === 0 ? 'first' : 'again',
      row.lines,
      mb(row.bytes),
      seconds(row.ms),
      row.linesPerSecond,
      row.mbPerSecond,
      seconds(row.stagingMs),
      seconds(row.commitMs),
      seconds(row.settledMs),
      row.longestStallMs,
      seconds(row.cpuMs),
      mainSeconds(row),
    ]),
  };
}

/** Exactly `lines` JSONL lines, assembled from a few thousand distinct texts and vectors (fast to write). */
export async function writeEmbeddingLines(
  path: string,
  lines: number,
  rng: Rng,
  pool: TextPool,
): Promise<number> {
  const variants = 4096;
  const texts = Array.from({ length: variants }, () => {
    let text = prose(rng, pool, 8, 14);
    while (text.length < 1500) text += ` ${prose(rng, pool, 2, 4)}`;
    return JSON.stringify(text.slice(0, 2500));
  });
  const vectors = Array.from({ length: variants }, () => {
    const vector = Array.from({ length: OFFLINE_MODEL.dimensions }, () => rng.next() * 2 - 1);
    const norm = Math.hypot(...vector);
    return JSON.stringify(vector.map((x) => Number((x / norm).toFixed(6))));
  });
  const out = createWriteStream(path);
  let bytes = 0;
  for (let line = 1; line <= lines; line += 1000) {
    const batch: string[] = [];
    for (let i = line; i < Math.min(lines + 1, line + 1000); i++) {
      batch.push(`{"text":${rng.pick(texts)},"embedding":${rng.pick(vectors)},"metadata":{"item":${i}}}\n`);
    }
    const chunk = batch.join('');
    bytes += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return bytes;
}

function figuresTable(title: string, rows: IngestFigures[]): Table {
  return {
    title,
    columns: [
      'corpus',
      'files',
      'MB',
      'chunks',
      's',
      'MB/s',
      'chunks/s',
      'files/s',
      'CPU s',
      'main s',
      'stall ms',
      'lock s',
      'time by stage',
    ],
    rows: rows.map((r) => [
      r.label,
      r.files,
      mb(r.bytes, r.bytes < MB ? 2 : 1),
      r.chunks,
      seconds(r.ms),
      r.mbPerSecond,
      r.chunksPerSecond,
      r.filesPerSecond,
      seconds(r.cpuMs),
      mainSeconds(r),
      r.longestStallMs,
      r.writeLockMs === null ? '-' : seconds(r.writeLockMs),
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
    // A file ingested (not left `unchanged`), none rejected.
    ok: r.rejected.length === 0 && r.chunks > 0 && r.files > 0,
    detail:
      r.rejected.length === 0
        ? `${r.files} files, ${r.chunks} chunks`
        : `${r.rejected.length} rejected, e.g. ${r.rejected[0]!.source}: ${r.rejected[0]!.message}`,
  }));
  return { figures, tables, notes, checks };
}
