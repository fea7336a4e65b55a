/**
 * The process the fuzzer drives (started with `node --import tsx`): it reads one input per IPC message,
 * runs it through a parser's public entry point and replies with the outcome. A hang or a crash here
 * cannot take the test runner with it; the parent kills and restarts this process. Each reply carries the
 * parser code this input covered for the first time in this process (coverage.ts): the parent keeps
 * inputs that reach new code as mutation bases.
 */
import { mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { DocumentFormat } from '../../src/core/ingest/types';
import { CoverageProbe } from './coverage';
import type { ChildOutcome, ChildReply, ChildRequest, FuzzTargetName } from './protocol';

export const JSONL_MODEL = 'kbs-offline-hybrid-v1';
/** Made and removed by the parent, which may kill this process at any moment. */
const scratch = process.env.KBS_FUZZ_SCRATCH!;

// Coverage is on before the parsers load: code compiled earlier would not be measured block by block.
const probe = new CoverageProbe();
await probe.start();
const { DomainError } = await import('../../src/core/errors');
const { readEmbeddingsJsonl } = await import('../../src/core/ingest/embeddingsJsonl');
const { parseDocument } = await import('../../src/core/ingest/parse');
const { extractZip } = await import('../../src/core/ingest/zip');

async function runTarget(target: FuzzTargetName, bytes: Uint8Array, source: string): Promise<number> {
  if (target === 'jsonl') {
    const file = join(scratch, 'input.jsonl');
    writeFileSync(file, bytes);
    let records = 0;
    for await (const _record of readEmbeddingsJsonl(file, JSONL_MODEL, source)) records++;
    return records;
  }
  if (target === 'zip') return runZip(bytes, source);
  const parsed = await parseDocument(target as DocumentFormat, { bytes, source });
  return parsed.sections.length;
}

/** Extracts under a fresh folder of a fresh parent, then checks nothing landed outside that folder. */
async function runZip(bytes: Uint8Array, source: string): Promise<number> {
  const parent = mkdtempSync(join(scratch, 'zip-'));
  const archive = join(parent, 'input.zip');
  const dest = join(parent, 'out');
  writeFileSync(archive, bytes);
  const outcome = await extractZip(archive, dest, {
    source,
    maxEntries: 2_000,
    maxFileBytes: 8 * 1024 * 1024,
    maxEmbeddingsFileBytes: 8 * 1024 * 1024,
    maxTotalBytes: 32 * 1024 * 1024,
  }).then(
    (extracted) => ({ extracted }),
    (error: unknown) => ({ error }),
  );
  // Whatever the outcome, nothing may have been written beside the destination folder.
  const strays = readdirSync(parent).filter((n) => n !== 'input.zip' && n !== 'out');
  const files = 'extracted' in outcome ? outcome.extracted.files : [];
  const outside = files.filter((f) => {
    const rel = relative(realpathSync(dest), realpathSync(f.path));
    return rel.startsWith('..') || rel.startsWith(sep);
  });
  rmSync(parent, { recursive: true, force: true });
  if (strays.length > 0) throw new Error(`wrote outside the destination: ${strays.join(', ')}`);
  if (outside.length > 0) throw new Error(`extracted outside: ${outside.map((f) => f.path).join(', ')}`);
  if ('error' in outcome) throw outcome.error;
  return files.length;
}

/** Anything left in the scratch folder besides the JSONL input file is a leak of a previous input. */
const leftovers = () => readdirSync(scratch).filter((n) => n !== 'input.jsonl').length;

process.on('message', (message: ChildRequest) => {
  const bytes = new Uint8Array(Buffer.from(message.bytes, 'base64'));
  const started = performance.now();
  const reply = async (r: ChildOutcome) => {
    const ms = Math.round(performance.now() - started);
    // A failed take costs this input its coverage, not its verdict.
    const coverage = await probe.take().catch(() => ({ covered: [], blocks: [] }));
    process.send!({
      ...r,
      id: message.id,
      ms,
      rss: process.memoryUsage().rss,
      scratchEntries: leftovers(),
      coverage,
    } as ChildReply);
  };
  runTarget(message.target, bytes, message.source).then(
    (sections) => reply({ status: 'ok', sections }),
    (err: unknown) => {
      if (err instanceof DomainError) reply({ status: 'refused', code: err.code, message: err.message });
      else {
        const e = err instanceof Error ? err : new Error(String(err));
        reply({ status: 'crash', name: e.name, message: e.message, stack: e.stack ?? '' });
      }
    },
  );
});

process.on('disconnect', () => process.exit(0));
process.send!({ ready: true });
