import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets a heap grow past what the last full collection kept while an ingestion that imports
 * pre-built embeddings runs: 1.5 times, instead of V8's own factor (up to 4 times for a thread that
 * allocates fast).
 *
 * An import reads hundreds of thousands of lines; each batch of records is held while its tokens are
 * counted and the commit takes it, so it outlives the young generation and dies in the old one. With V8's
 * own factor this thread's heap swung between about 110 and 306 MB for some 70 MB kept, and the 1 GB
 * upload benchmark's server peaked at 974-1,013 MB against its 1 GB bound; capped at 1.5 times, 797 MB
 * (1.25 times: 759 MB, but the 500,000-line import took 56.7 s against 54.5-54.7 s), the import as fast
 * (docs/performance.md, thirteenth pass). The cap is set for the whole ingestion, not only its pre-built
 * lines: limits computed before it, while the other files are read, would let the import's first swing
 * go as high. Ingestions without pre-built lines run without it: a cap cost the mixed corpus about 9%.
 */
const IMPORT_HEAP_GROWING_PERCENT = 50;

let holders = 0;

/**
 * Caps the heap growth until the returned release is called. The setting is the process's, for every
 * thread; Node warns that V8 flags changed after start may do nothing or worse, but this one is read
 * afresh whenever a heap's next limit is computed (V8's MemoryController), which is what is wanted
 * here. The cap is lifted when the last holder releases it; a release called twice counts once.
 */
export function capHeapGrowth(): () => void {
  if (holders++ === 0) setFlagsFromString(`--heap-growing-percent=${IMPORT_HEAP_GROWING_PERCENT}`);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    // 0 is V8's default: its own factor again.
    if (--holders === 0) setFlagsFromString('--heap-growing-percent=0');
  };
}
