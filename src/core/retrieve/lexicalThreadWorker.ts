// The thread of LexicalThread (lexicalThread.ts): full-text searches over postings the calling thread
// shares with it (SharedArrayBuffer-backed arrays), run while the calling thread does the dense search.
// It blocks in Atomics.wait between requests and reads its messages synchronously, so a search starts
// within microseconds of being asked, not after a turn of an event loop.
import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { LexicalPostings, type LexicalPostingsData, type TermWeight } from './lexicalPostings';
import { collectGarbage } from '../workers/collectGarbage';
import { CONTROL, type LexicalThreadMessage } from './lexicalThreadProtocol';

const control = new Int32Array(workerData.control as SharedArrayBuffer);
const results = new Float64Array(workerData.results as SharedArrayBuffer);
const port = workerData.port as MessagePort;
const held = new Map<number, LexicalPostings>();

function search(id: number, weights: TermWeight[], listing: number, limit: number, mask?: Uint8Array) {
  const postings = held.get(id);
  if (!postings) return -1;
  const hits = postings.searchWeighted(weights, listing, limit, mask);
  hits.forEach((hit, i) => {
    results[2 * i] = hit.id;
    results[2 * i + 1] = hit.bm25;
  });
  return hits.length;
}

/**
 * Handles every message waiting; true when postings were let go of. A function of its own: the messages
 * it handled stay in its frame until it returns, and the collection after it must not find them there
 * (an install and a drop handled in one call, then a collection in it, kept the postings).
 */
function handleMessages(): boolean {
  let dropped = false;
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    const message = m.message as LexicalThreadMessage;
    if (message.kind === 'install')
      held.set(message.id, new LexicalPostings(message.data as LexicalPostingsData));
    else if (message.kind === 'drop') dropped = held.delete(message.id) || dropped;
    else {
      let count: number;
      try {
        count = search(message.id, message.weights, message.listing, message.limit, message.mask);
      } catch {
        count = -1;
      }
      control[CONTROL.COUNT] = count;
    }
  }
  return dropped;
}

let seen = 0;
Atomics.store(control, CONTROL.READY, 1);
Atomics.notify(control, CONTROL.READY);
for (;;) {
  Atomics.wait(control, CONTROL.REQUEST, seen);
  seen = Atomics.load(control, CONTROL.REQUEST);
  const dropped = handleMessages();
  Atomics.store(control, CONTROL.DONE, seen);
  Atomics.notify(control, CONTROL.DONE);
  // This thread allocates next to nothing, so it might never collect on its own: until it does, postings
  // it dropped keep their shared memory (163 MB at 500,000 chunks). 7-16 ms, off the server's thread and
  // after the answer; searches meanwhile go to FTS5 (the postings dropped were stale).
  if (dropped) collectGarbage();
}
