import type { LexicalPostingsData, TermWeight } from './lexicalPostings';

/** Slots (Int32 each) of the control block LexicalThread shares with its thread. */
export const CONTROL = {
  /** Bumped by the caller after each message. */
  REQUEST: 0,
  /** Set by the thread to the request it has handled every message up to. */
  DONE: 1,
  /** Hits the last search wrote (-1: it failed, or its postings are not held there). */
  COUNT: 2,
  /** 1 once the thread waits for requests. */
  READY: 3,
  SLOTS: 4,
} as const;

/** What the caller posts to the thread, followed by a bump of REQUEST. */
export type LexicalThreadMessage =
  /** Postings whose arrays are SharedArrayBuffer-backed, to be searched as snapshot `id`. */
  | { kind: 'install'; id: number; data: LexicalPostingsData }
  | { kind: 'drop'; id: number }
  | {
      kind: 'search';
      id: number;
      weights: TermWeight[];
      listing: number;
      limit: number;
      /** The rows a filter allows (a view of shared memory), when the search is filtered. */
      mask?: Uint8Array;
    };
