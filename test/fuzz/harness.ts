import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ERROR_STATUS } from '../../src/shared/errors';
import { REPO_ROOT } from '../helpers/studio';
import { CoverageMap } from './coverageMap';
import { buildInput, fuzzCase, tokensFor, type Corpus } from './mutate';
import type { ChildOutcome, ChildReply, FuzzTargetName } from './protocol';
import { archiveEntriesFor, seedsFor, SOURCE_NAMES } from './seeds';

/** Set by `npm run test:stress`: the long runs. */
export const STRESS = process.env.KBSTUDIO_STRESS === '1';
/** KBSTUDIO_FUZZ_GUIDED=0: the corpus stays the seeds (coverage still measured), for comparison. */
const GUIDED = process.env.KBSTUDIO_FUZZ_GUIDED !== '0';
export const FINDINGS_DIR = join(REPO_ROOT, 'test-results', 'fuzz-findings');
const STATS_FILE = join(REPO_ROOT, 'test-results', 'fuzz-stats.jsonl');
/** Inputs slower than this are saved (as slow-*) even when they pass. */
const SLOW_MS = 10_000;
/** Inputs that reach new code join the corpus up to this size (or the largest seed's). */
const MAX_BASE_BYTES = 64 * 1024;

export interface ChildLimits {
  /** Longest time one input may take before it counts as a hang and the child is killed. */
  timeoutMs: number;
  /** The child's V8 heap limit; running out counts as a memory finding. */
  maxOldSpaceMb: number;
  /** Resident set size above which an input counts as unbounded memory use. */
  maxRssBytes: number;
}

export type Verdict =
  | { kind: 'ok'; reply: ChildReply }
  | {
      kind: 'finding';
      problem: 'crash' | 'hang' | 'died' | 'unclear-error' | 'memory' | 'leak';
      detail: string;
    };

/** A child process running parsers on demand; killed and restarted after a hang or a death. */
export class FuzzChild {
  private child: ChildProcess | undefined;
  private ready: Promise<void> | undefined;
  private stderr = '';
  private nextId = 1;
  private scratch: string | undefined;

  constructor(private readonly limits: ChildLimits) {}

  private start(): Promise<void> {
    this.stderr = '';
    this.scratch = mkdtempSync(join(tmpdir(), 'kbs-fuzz-'));
    const child = fork(join(REPO_ROOT, 'test', 'fuzz', 'fuzzChild.ts'), [], {
      cwd: REPO_ROOT,
      env: { ...process.env, KBS_FUZZ_SCRATCH: this.scratch },
      execArgv: ['--import', 'tsx', `--max-old-space-size=${this.limits.maxOldSpaceMb}`],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    child.stderr!.on('data', (c: Buffer) => (this.stderr = (this.stderr + c.toString()).slice(-4000)));
    this.child = child;
    return new Promise((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`fuzz child exited (${code}) at start: ${this.stderr}`)));
    });
  }

  async run(target: FuzzTargetName, bytes: Uint8Array, source: string): Promise<Verdict> {
    this.ready ??= this.start();
    await this.ready;
    const child = this.child!;
    const id = this.nextId++;
    const outcome = await new Promise<ChildReply | { exit: string } | 'timeout'>((resolve) => {
      const timer = setTimeout(() => done('timeout'), this.limits.timeoutMs);
      const onMessage = (m: ChildReply) => m.id === id && done(m);
      const onExit = (code: number | null, signal: string | null) => done({ exit: `${code ?? signal}` });
      const done = (value: ChildReply | { exit: string } | 'timeout') => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(value);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({ id, target, bytes: Buffer.from(bytes).toString('base64'), source });
    });
    if (outcome === 'timeout') {
      this.kill();
      return { kind: 'finding', problem: 'hang', detail: `no answer within ${this.limits.timeoutMs} ms` };
    }
    if ('exit' in outcome) {
      const stderr = this.stderr;
      this.kill();
      const oom = /heap out of memory|Allocation failed/i.test(stderr);
      return {
        kind: 'finding',
        problem: oom ? 'memory' : 'died',
        detail: `the child exited (${outcome.exit}): ${stderr.slice(-600)}`,
      };
    }
    return judge(outcome, source, this.limits);
  }

  private kill(): void {
    this.child?.kill('SIGKILL');
    this.child = undefined;
    this.ready = undefined;
    if (this.scratch) rmSync(this.scratch, { recursive: true, force: true });
    this.scratch = undefined;
  }

  /** The child may be deep in a slow input; it holds nothing worth a graceful exit. */
  close(): void {
    this.kill();
  }
}

/** Success, or a DomainError with a wire code and a message naming the file; anything else is a finding. */
export function judge(reply: ChildReply, source: string, limits: Pick<ChildLimits, 'maxRssBytes'>): Verdict {
  if (reply.rss > limits.maxRssBytes)
    return { kind: 'finding', problem: 'memory', detail: `RSS ${Math.round(reply.rss / 2 ** 20)} MB` };
  if (reply.scratchEntries > 0)
    return { kind: 'finding', problem: 'leak', detail: `${reply.scratchEntries} files left in scratch` };
  if (reply.status === 'crash')
    return { kind: 'finding', problem: 'crash', detail: `${reply.name}: ${reply.message}\n${reply.stack}` };
  if (reply.status === 'refused') {
    // An unsupported-type refusal names the archive's entries, which are the files at fault.
    const namesFile = reply.message.includes(source) || reply.code === 'unsupported_file_type';
    if (!(reply.code in ERROR_STATUS) || !namesFile) {
      return { kind: 'finding', problem: 'unclear-error', detail: `${reply.code}: ${reply.message}` };
    }
  }
  return { kind: 'ok', reply };
}

export interface FuzzRun {
  target: FuzzTargetName;
  seed: number;
  numRuns: number;
  limits: ChildLimits;
}

export interface FuzzStats {
  target: FuzzTargetName;
  seed: number;
  /** Seeds run first (their coverage is the starting point), then mutated inputs. */
  seeds: number;
  inputs: number;
  /** The corpus: seeds plus inputs that reached new parser code. */
  corpusStart: number;
  corpusEnd: number;
  /** Blocks covered / blocks known after the seeds, and at the end. */
  blocksStart: { covered: number; known: number };
  blocksEnd: { covered: number; known: number };
  accepted: number;
  refused: Record<string, number>;
  findings: number;
  slowestMs: number;
  maxRssMb: number;
  elapsedMs: number;
}

/**
 * Coverage-guided mutation fuzzing of one parser, fast-check drawing the mutations (seeded, so a run is
 * reproducible). The seeds run first; an input that reaches parser code no earlier input reached joins
 * the corpus and becomes a mutation base. The first finding stops the run; its input is saved under
 * test-results/fuzz-findings.
 */
export async function fuzzParser(run: FuzzRun): Promise<FuzzStats> {
  const seeds = await seedsFor(run.target);
  const corpus: Corpus = {
    seeds: [...seeds],
    initial: seeds.length,
    tokens: tokensFor(run.target),
    entries: await archiveEntriesFor(run.target),
  };
  const sources = SOURCE_NAMES[run.target];
  const child = new FuzzChild(run.limits);
  const coverage = new CoverageMap();
  // Larger finds are not kept as bases: repeats of repeats would grow every input toward the 8 MB cap
  // and slow the run tenfold, with little new code to show for it.
  const maxBase = Math.max(MAX_BASE_BYTES, ...seeds.map((s) => s.length));
  const stats: FuzzStats = {
    target: run.target,
    seed: run.seed,
    seeds: 0,
    inputs: 0,
    corpusStart: seeds.length,
    corpusEnd: seeds.length,
    blocksStart: { covered: 0, known: 0 },
    blocksEnd: { covered: 0, known: 0 },
    accepted: 0,
    refused: {},
    findings: 0,
    slowestMs: 0,
    maxRssMb: 0,
    elapsedMs: 0,
  };
  const started = performance.now();
  const failed = (problem: string, detail: string, source: string, bytes: Uint8Array) => {
    stats.findings++;
    const file = saveFinding(run.target, source, bytes);
    return new Error(`${run.target} ${problem} on ${file}: ${detail}`);
  };
  try {
    for (const [i, bytes] of seeds.entries()) {
      const source = sources[i % sources.length]!;
      const verdict = await child.run(run.target, bytes, source);
      stats.seeds++;
      if (verdict.kind === 'finding') throw failed(verdict.problem, verdict.detail, source, bytes);
      record(stats, verdict.reply);
      coverage.add(verdict.reply.coverage);
    }
    stats.blocksStart = coverage.blockCount();
    await fc.assert(
      fc.asyncProperty(fuzzCase, async (c) => {
        const bytes = await buildInput(c, corpus);
        const source = sources[c.source % sources.length]!;
        const verdict = await child.run(run.target, bytes, source);
        stats.inputs++;
        if (verdict.kind === 'finding') throw failed(verdict.problem, verdict.detail, source, bytes);
        record(stats, verdict.reply);
        if (coverage.add(verdict.reply.coverage) && GUIDED && bytes.length <= maxBase)
          corpus.seeds.push(bytes);
        // Slow but within the limit: kept for a look, since a slow parse blocks an ingestion.
        if (verdict.reply.ms > SLOW_MS) saveFinding(run.target, source, bytes, 'slow');
      }),
      { seed: run.seed, numRuns: run.numRuns, endOnFailure: true },
    );
  } finally {
    child.close();
    stats.corpusEnd = corpus.seeds.length;
    stats.blocksEnd = coverage.blockCount();
    stats.elapsedMs = Math.round(performance.now() - started);
    mkdirSync(join(REPO_ROOT, 'test-results'), { recursive: true });
    appendFileSync(
      STATS_FILE,
      JSON.stringify({ ...stats, stress: STRESS, guided: GUIDED, at: new Date().toISOString() }) + '\n',
    );
  }
  return stats;
}

function record(stats: FuzzStats, reply: ChildReply & ChildOutcome): void {
  if (reply.status === 'ok') stats.accepted++;
  else if (reply.status === 'refused') stats.refused[reply.code] = (stats.refused[reply.code] ?? 0) + 1;
  stats.slowestMs = Math.max(stats.slowestMs, reply.ms);
  stats.maxRssMb = Math.max(stats.maxRssMb, Math.round(reply.rss / 2 ** 20));
}

function saveFinding(target: FuzzTargetName, source: string, bytes: Uint8Array, kind = 'finding'): string {
  mkdirSync(FINDINGS_DIR, { recursive: true });
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
  const name = `${kind === 'slow' ? 'slow-' : ''}${target}-${hash}${source.slice(source.lastIndexOf('.'))}`;
  const file = join(FINDINGS_DIR, name);
  writeFileSync(file, bytes);
  return file;
}
