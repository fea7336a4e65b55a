/**
 * V8 block coverage of the parsers, measured inside the fuzz child (see docs/reliability.md, Fuzzing).
 * The child's main isolate and every worker thread (pdfjs, mammoth, micromark and parse5 run in the
 * parser worker pools) get precise binary block coverage through the inspector; worker threads are
 * reached with the NodeWorker domain, so the worker scripts run unchanged.
 *
 * V8 resets the block counts at each take, and reports a block that ran inside a function that ran by
 * leaving it out (merged into the enclosing range): what ran is the set of source positions whose
 * innermost reported range has a non-zero count. The probe paints those positions per script, keeps the
 * union of what this process has covered, and answers only what is new.
 */
import { Session } from 'node:inspector/promises';
import type { Profiler } from 'node:inspector';

/** A covered span, or a block's span: [script url, start offset, end offset]. */
export type Span = [string, number, number];

export interface CoverageDelta {
  /** Source spans covered by this input and by none before it in this process. */
  covered: Span[];
  /** Ranges V8 reported for the first time in this process (the blocks and functions seen so far). */
  blocks: Span[];
}

/** Parser code and its libraries; not the test harness, tsx or Node's internals. */
export function isParserCode(url: string): boolean {
  if (url.includes('/src/core/ingest/')) return true;
  return (
    url.includes('/node_modules/') &&
    !/\/node_modules\/(tsx|esbuild|get-tsconfig|fast-check|vitest)\//.test(url)
  );
}

/** The answer a worker has to give before its coverage counts as lost (it may be terminating). */
const WORKER_TAKE_MS = 5_000;

export class CoverageProbe {
  private readonly session = new Session();
  private readonly workers = new Set<string>();
  private readonly pending = new Map<number, { sessionId: string; resolve(result: unknown): void }>();
  private nextId = 1;
  private readonly union = new Map<string, Uint8Array>();
  private readonly seen = new Set<string>();

  async start(): Promise<void> {
    this.session.connect();
    this.session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
      const message = JSON.parse(params.message) as { id?: number; result?: unknown; error?: unknown };
      const waiter = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id!);
      waiter.resolve(message.error ? undefined : message.result);
    });
    // A worker is held at its start until its coverage is on, so its first file is measured too.
    this.session.on('NodeWorker.attachedToWorker', ({ params }) => {
      const { sessionId } = params;
      this.workers.add(sessionId);
      void (async () => {
        await this.toWorker(sessionId, 'Profiler.enable');
        await this.toWorker(sessionId, 'Profiler.startPreciseCoverage', { detailed: true, callCount: false });
        await this.toWorker(sessionId, 'Runtime.runIfWaitingForDebugger');
      })();
    });
    this.session.on('NodeWorker.detachedFromWorker', ({ params }) => {
      this.workers.delete(params.sessionId);
      for (const [id, waiter] of this.pending) {
        if (waiter.sessionId !== params.sessionId) continue;
        this.pending.delete(id);
        waiter.resolve(undefined);
      }
    });
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.startPreciseCoverage', { detailed: true, callCount: false });
    await this.session.post('NodeWorker.enable', { waitForDebuggerOnStart: true });
  }

  private toWorker(sessionId: string, method: string, params: object = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(undefined);
      }, WORKER_TAKE_MS);
      this.pending.set(id, {
        sessionId,
        resolve: (result) => {
          clearTimeout(timer);
          resolve(result);
        },
      });
      void this.session
        .post('NodeWorker.sendMessageToWorker', {
          sessionId,
          message: JSON.stringify({ id, method, params }),
        })
        .catch(() => undefined);
    });
  }

  /** Coverage since the previous take, in this thread and in every live worker; only what is new. */
  async take(): Promise<CoverageDelta> {
    const scripts: Profiler.ScriptCoverage[] = [];
    scripts.push(...(await this.session.post('Profiler.takePreciseCoverage')).result);
    for (const sessionId of [...this.workers]) {
      const taken = (await this.toWorker(sessionId, 'Profiler.takePreciseCoverage')) as
        Profiler.TakePreciseCoverageReturnType | undefined;
      if (taken) scripts.push(...taken.result);
    }
    const delta: CoverageDelta = { covered: [], blocks: [] };
    for (const script of scripts) {
      if (!isParserCode(script.url)) continue;
      this.addScript(script, delta);
    }
    return delta;
  }

  private addScript(script: Profiler.ScriptCoverage, delta: CoverageDelta): void {
    const ranges = script.functions.flatMap((f) => f.ranges);
    if (ranges.length === 0) return;
    for (const r of ranges) {
      const key = `${script.url}\0${r.startOffset}\0${r.endOffset}`;
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      delta.blocks.push([script.url, r.startOffset, r.endOffset]);
    }
    // Ranges nest; painted outermost first, the innermost range decides each position.
    ranges.sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
    const length = Math.max(...ranges.map((r) => r.endOffset));
    const taken = new Uint8Array(length);
    for (const r of ranges) taken.fill(r.count > 0 ? 1 : 0, r.startOffset, r.endOffset);
    let union = this.union.get(script.url);
    if (!union || union.length < length) {
      const grown = new Uint8Array(length);
      if (union) grown.set(union);
      union = grown;
      this.union.set(script.url, union);
    }
    // Only the spans of ranges that ran can hold newly covered positions (a script can be megabytes).
    let scanned = 0;
    for (const r of ranges) {
      if (r.count === 0 || r.endOffset <= scanned) continue;
      let start = -1;
      const from = Math.max(r.startOffset, scanned);
      for (let i = from; i <= r.endOffset; i++) {
        const fresh = i < r.endOffset && taken[i] === 1 && union[i] === 0;
        if (fresh && start < 0) start = i;
        if (!fresh && start >= 0) {
          delta.covered.push([script.url, start, i]);
          union.fill(1, start, i);
          start = -1;
        }
      }
      scanned = r.endOffset;
    }
  }
}
