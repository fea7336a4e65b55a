import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { waitForRequest } from '../workers/waitForRequest';

/**
 * A second thread for the Hamming scan of large code sets (docs/performance.md, "Dense retrieval at
 * scale"): the scan of 500,000 codes is bound by one core's memory bandwidth, so the helper scans one
 * half of the codes while the calling thread scans the other. Both threads run the same kernel over the
 * same shared WebAssembly memory; they meet through Atomics on a small shared control block, so a
 * request costs microseconds, not a message round trip through the event loop.
 *
 * The helper thread blocks in Atomics.wait between requests (it runs nothing else) and is unref'd, so
 * it never keeps a process alive. When it cannot be started, or misses a deadline, it is given up and
 * callers scan alone: the results are the same, only slower.
 */

/** Control block slots (Int32 each). */
const REQUEST = 0; // bumped by the caller for each request
const DONE = 1; // set to the request's number by the helper when done
const SPACE = 2; // 0: no work (the helper only reads its messages)
const CODES = 3;
const COUNT = 4;
const PAIRS = 5;
const QUERY = 6;
const OUT = 7;
const HISTOGRAM = 8; // 0: no histogram
const BUCKETS = 9;
const SLOTS = 10;

/** The helper thread, plain JavaScript evaluated as a worker (no file to locate in bundles). */
const HELPER_SOURCE = `
const { workerData, receiveMessageOnPort } = require('node:worker_threads');
const control = new Int32Array(workerData.control);
const port = workerData.port;
const spaces = new Map();
let seen = 0;
for (;;) {
  Atomics.wait(control, ${REQUEST}, seen);
  seen = Atomics.load(control, ${REQUEST});
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    const { id, module, memory } = m.message;
    if (module) spaces.set(id, { scan: new WebAssembly.Instance(module, { env: { memory } }).exports.scan, memory });
    else spaces.delete(id);
  }
  const space = spaces.get(control[${SPACE}]);
  if (space) {
    const count = control[${COUNT}];
    space.scan(control[${CODES}], count, control[${PAIRS}], control[${QUERY}], control[${OUT}]);
    if (control[${HISTOGRAM}] !== 0) {
      const distances = new Uint16Array(space.memory.buffer, control[${OUT}], count);
      const histogram = new Uint32Array(space.memory.buffer, control[${HISTOGRAM}], control[${BUCKETS}]);
      histogram.fill(0);
      for (let i = 0; i < count; i++) histogram[distances[i]]++;
    }
  }
  Atomics.store(control, ${DONE}, seen);
  Atomics.notify(control, ${DONE});
}
`;

/** What the helper scans for one request: byte offsets into the space's memory. */
export interface ScanRequest {
  codes: number;
  count: number;
  pairs: number;
  query: number;
  out: number;
  /** Where the helper writes the histogram of its distances (0: none), and its length. */
  histogram: number;
  buckets: number;
}

/** The longest the caller waits for the helper's half before giving the helper up (it is then stuck). */
const DEADLINE_MS = 5_000;

export class ScanHelper {
  private readonly control = new Int32Array(new SharedArrayBuffer(SLOTS * 4));
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private nextId = 1;
  private request = 0;
  private broken = false;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(HELPER_SOURCE, {
      eval: true,
      workerData: { control: this.control.buffer, port: port2 },
      transferList: [port2],
    });
    this.worker.unref();
    this.port.unref();
    this.worker.on('error', () => (this.broken = true));
    this.worker.on('exit', () => (this.broken = true));
  }

  get usable(): boolean {
    return !this.broken;
  }

  /** Hands the helper a space's module and shared memory; the id names it in requests. */
  attach(module: object, memory: object): number {
    const id = this.nextId++;
    this.port.postMessage({ id, module, memory });
    return id;
  }

  /** The helper drops the space at once (an empty request), so its memory can be freed. */
  detach(id: number): void {
    if (this.broken) return;
    this.port.postMessage({ id });
    this.start(0, { codes: 0, count: 0, pairs: 0, query: 0, out: 0, histogram: 0, buckets: 0 });
    this.finish();
  }

  /**
   * Starts the helper on `work` over space `id`; `finish()` must follow before the next start (one
   * request at a time: the caller's thread waits for each).
   */
  start(id: number, work: ScanRequest): void {
    const c = this.control;
    c[SPACE] = id;
    c[CODES] = work.codes;
    c[COUNT] = work.count;
    c[PAIRS] = work.pairs;
    c[QUERY] = work.query;
    c[OUT] = work.out;
    c[HISTOGRAM] = work.histogram;
    c[BUCKETS] = work.buckets;
    this.request = (this.request + 1) | 0;
    Atomics.store(c, REQUEST, this.request);
    Atomics.notify(c, REQUEST);
  }

  /** Waits for the request started last; false (and the helper given up) when it missed the deadline. */
  finish(): boolean {
    return waitForRequest(this.control, DONE, this.request, DEADLINE_MS, () => this.broken) || this.giveUp();
  }

  /** Stops the helper thread; spaces attached to it scan alone from then on. */
  async close(): Promise<void> {
    this.broken = true;
    await this.worker.terminate();
  }

  private giveUp(): false {
    this.broken = true;
    void this.worker.terminate();
    return false;
  }
}

let shared: ScanHelper | null | undefined;

/** The process's scan helper, started on first use; null where worker threads are unavailable. */
export function scanHelper(): ScanHelper | null {
  if (shared === undefined) {
    try {
      shared = new ScanHelper();
    } catch {
      shared = null;
    }
  }
  return shared?.usable ? shared : null;
}
