import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { countTokens } from '../../../../src/core/ingest/chunkers';
import { countTokensOffThread } from '../../../../src/core/ingest/chunkers/tokenCounter';

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [Number(fields[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

describe('countTokensOffThread', () => {
  it('gives the counts of countTokens, in order, for a call split across the counters', async () => {
    const texts = Array.from({ length: 300 }, (_, i) => `Text ${i}: ${'token '.repeat(i % 17)}ends here.`);
    expect(await countTokensOffThread(texts)).toEqual(texts.map(countTokens));
  });

  it.skipIf(!existsSync('/proc/thread-self'))(
    'runs its counters below the priority of the other threads (Linux)',
    async () => {
      const before = threadNiceValues().filter((n) => n === 10).length;
      await countTokensOffThread(Array.from({ length: 200 }, (_, i) => `text ${i}`));
      // This thread keeps its priority; the counters (started by the first call, in this file or
      // before it) run at nice 10.
      expect(threadNiceValues().filter((n) => n === 10).length).toBeGreaterThanOrEqual(Math.max(before, 1));
      expect(threadNiceValues()[0]).toBe(0);
    },
  );
});
