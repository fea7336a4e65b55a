import type { Command } from 'commander';
import { SingleBar } from 'cli-progress';
import { InvalidInput } from '../../core/errors';
import { DEFAULT_CHUNK_SIZE } from '../../core/ingest/chunkers/options';
import { STUDIO_LIMITS } from '../../core/ingest/limits';
import type { IngestProgress, IngestResult } from '../../core/ingest/pipeline';
import { parseOrThrow } from '../../core/validation';
import { UploadConfigSchema, type FileOutcome } from '../../shared/uploads';
import { Interrupted, table } from '../output';
import { listFlag, numberFlag, withServices } from '../context';
import { abortOnStopSignals, exitCodeOf } from '../interrupt';

interface IngestFlags {
  listing: string;
  chunking?: string;
  chunkSize?: number;
  chunkOverlap?: number;
  requiredColumns?: string[];
}

export function ingestCommand(program: Command): void {
  program
    .command('ingest')
    .description("ingest files, folders and ZIP archives into a listing's knowledge base")
    .requiredOption('--listing <id>', 'listing id')
    .argument('<paths...>', 'files, folders or .zip archives')
    .option('--chunking <strategy>', 'recursive | fixed | sentence | markdown', 'recursive')
    .option('--chunk-size <tokens>', 'chunk size in cl100k tokens (default 512)', numberFlag)
    .option('--chunk-overlap <tokens>', 'overlap in tokens (default 64)', numberFlag)
    .option(
      '--required-columns <a,b>',
      'CSV columns that must be non-empty (default: all named columns)',
      listFlag,
    )
    .action((paths: string[], flags: IngestFlags, cmd: Command) =>
      withServices(cmd, async ({ services, out }) => {
        // The same schema as the upload config, so the CLI and the API refuse the same things.
        const config = parseOrThrow(
          UploadConfigSchema,
          {
            chunking: flags.chunking,
            chunk_size: flags.chunkSize,
            chunk_overlap: flags.chunkOverlap,
            required_columns: flags.requiredColumns,
          },
          'options',
        );
        const chunking = {
          strategy: config.chunking,
          chunkSize: config.chunk_size,
          chunkOverlap: config.chunk_overlap,
        };
        checkChunkOverlap(config.chunk_size, config.chunk_overlap);
        const bar = !out.json && process.stderr.isTTY ? progressBar() : undefined;
        // Ctrl-C (or a SIGTERM) cancels the ingestion, as push does; the bar is stopped at once.
        const stop = abortOnStopSignals(() => bar?.stop());
        let result: IngestResult;
        try {
          result = await services.ingestion.run({
            listingId: flags.listing,
            inputs: paths.map((path) => ({ path })),
            chunking,
            csvRequiredColumns: config.required_columns,
            atomic: false,
            limits: STUDIO_LIMITS,
            signal: stop.signal,
            onProgress: bar?.update,
          });
        } catch (err) {
          // The copies of the originals this ingestion kept are referenced by nothing now: without a
          // studio (whose start prunes them) a CLI user would keep them for good (9 MB for 2,062 files).
          await services.pruneSources().catch(() => 0);
          // The one commit comes last: an ingestion cancelled before it has written nothing, not even
          // the files already processed.
          const interruptedBy = stop.interruptedBy();
          if (interruptedBy)
            throw new Interrupted(interruptedBy, 'Interrupted: nothing of this ingestion was stored.');
          throw err;
        } finally {
          stop.dispose();
          bar?.stop();
        }
        // DESIGN §6: `chunks` beside this run's `documents` and `durationMs` is this run's: the chunks it
        // stored (unchanged files store none). What the knowledge base holds now is `knowledgeBase`.
        const stored = result.documents.filter((d) => d.status === 'ingested');
        const chunks = stored.reduce((n, d) => n + d.chunks, 0);
        const summary = {
          listingId: result.listingId,
          documents: result.documents,
          chunks,
          durationMs: result.durationMs,
          knowledgeBase: { documents: result.documentCount, chunks: result.chunkCount },
        };
        out.result(summary, () =>
          [
            table(
              ['SOURCE', 'FORMAT', 'STATUS', 'CHUNKS', 'NOTES'],
              result.documents.map((d) => [
                d.source,
                d.format,
                d.status,
                d.chunks,
                d.error?.message ?? documentNotes(d),
              ]),
            ),
            ...warningLines(result.documents),
            `\nStored ${plural(chunks, 'chunk')} from ${plural(stored.length, 'file')} in ${(result.durationMs / 1000).toFixed(1)} s. The knowledge base now holds ${plural(result.documentCount, 'document')}, ${plural(result.chunkCount, 'chunk')}.`,
          ].join('\n'),
        );
        const interruptedBy = stop.interruptedBy();
        if (interruptedBy) {
          // The signal came once the commit was under way, which a cancel does not stop: it was kept.
          out.info('Interrupted while the ingestion was being stored: it was stored in full, as shown.');
          process.exitCode = exitCodeOf(interruptedBy);
        } else if (result.documents.some((d) => d.status === 'rejected')) process.exitCode = 1;
      }),
    );
}

const plural = (n: number, noun: string): string =>
  `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;

/** A file's note in the table: a JSON file's documents, its skipped rows, how many warnings follow it. */
function documentNotes(d: FileOutcome): string {
  const notes: string[] = [];
  if (d.documents !== undefined)
    notes.push(`${d.documents} document${d.documents === 1 ? '' : 's'} (JSON items)`);
  if (d.skippedRows?.length) {
    const rows = d.skippedRows.length > 1 ? 'rows' : 'row';
    notes.push(
      `${d.skippedRows.length} ${rows} skipped (${rows} ${d.skippedRows.map((r) => r.row).join(', ')})`,
    );
  }
  const warnings = d.warnings?.length ?? 0;
  if (warnings > 0) notes.push(`${warnings} warning${warnings > 1 ? 's' : ''}, below`);
  return notes.join('; ');
}

/**
 * The parsers' warnings (a PDF page of images left out, a CSV title row, JSON items skipped), under the
 * table: a document ingested with part of it left out must not read as a clean ingest.
 */
function warningLines(documents: FileOutcome[]): string[] {
  const lines = documents.flatMap((d) =>
    (d.warnings ?? []).map(
      (w) => `  ${d.source}: ${w.startsWith(`${d.source}: `) ? w.slice(d.source.length + 2) : w}`,
    ),
  );
  return lines.length > 0 ? ['\nWarnings:', ...lines] : [];
}

/**
 * The flags' chunk overlap against their chunk size (its default when not given), before any file is
 * read: an overlap not below the size would reject every file. The schema has checked each on its own.
 */
function checkChunkOverlap(chunkSize: number | undefined, chunkOverlap: number | undefined): void {
  const size = chunkSize ?? DEFAULT_CHUNK_SIZE;
  if (chunkOverlap !== undefined && chunkOverlap >= size) {
    throw new InvalidInput(
      `--chunk-overlap: must be smaller than --chunk-size (${size} tokens${chunkSize === undefined ? ', the default' : ''}); got ${chunkOverlap}.`,
    );
  }
}

function progressBar() {
  const bar = new SingleBar({
    format: '{stage} |{bar}| {percentage}% | {filesDone}/{filesTotal} files | {file}',
    stream: process.stderr,
    hideCursor: true,
    clearOnComplete: true,
  });
  let started = false;
  let stopped = false;
  return {
    update: (p: IngestProgress) => {
      // Progress still reported while a cancel is under way must not draw the bar again.
      if (stopped) return;
      if (!started) {
        bar.start(Math.max(p.bytesTotal, 1), 0, payloadOf(p));
        started = true;
      }
      bar.update(p.bytesDone, payloadOf(p));
    },
    stop: () => {
      stopped = true;
      bar.stop();
    },
  };
}

const payloadOf = (p: IngestProgress) => ({
  stage: p.stage.padEnd(9),
  filesDone: p.filesDone,
  filesTotal: p.filesTotal,
  file: p.file ?? '',
});
