import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { countTokens } from '../../../../src/core/ingest/chunkers';
import { countTokensOffThread } from '../../../../src/core/ingest/chunkers/tokenCounter';

describe('countTokens', () => {
  it('counts cl100k tokens', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('tiktoken is great!')).toBe(6);
    expect(countTokens('Grüße aus Köln')).toBeGreaterThan(3);
  });

  it('counts special-token text as plain text instead of throwing', () => {
    expect(countTokens('<|endoftext|>')).toBeGreaterThan(1);
  });

  it('counts long whitespace-free runs quickly, like cl100k', () => {
    const started = performance.now();
    expect(countTokens('ab'.repeat(200_000))).toBe(200_000);
    expect(countTokens('x'.repeat(400_000))).toBe(50_000);
    expect(performance.now() - started).toBeLessThan(5000);
    // Counted directly, cl100k gives 625 tokens for 5,000 x's and 1,000 for this run of kanji.
    expect(countTokens('x'.repeat(5000))).toBe(625);
    expect(countTokens('日本語'.repeat(300))).toBeGreaterThanOrEqual(1000);
  });
});

describe('countTokensOffThread', () => {
  it('gives the same counts as countTokens, in order, for every kind of text', async () => {
    const texts = [
      'hello world',
      '',
      'Grüße aus Köln',
      '<|endoftext|>',
      'x'.repeat(5000),
      `${' '.repeat(300)}word${'\u3000'.repeat(400)}`,
      '日本語'.repeat(300),
      '😀'.repeat(200),
    ];
    const [first, second] = await Promise.all([
      countTokensOffThread(texts),
      countTokensOffThread(texts.slice().reverse()),
    ]);
    expect(first).toEqual(texts.map((text) => countTokens(text)));
    expect(second).toEqual(first.slice().reverse());
    expect(first.slice(0, 2)).toEqual([2, 0]);
    expect(first[4]).toBe(625);
  });

  it('splits a large call across its counters and keeps the order', async () => {
    const words = ['alpha', 'Köln', '日本', '😀', '<|endoftext|>', '\n\n', '   ', 'x'.repeat(300), '42'];
    const texts = Array.from({ length: 1_000 }, (_, i) =>
      Array.from({ length: 1 + (i % 37) }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' '),
    );
    const counts = await countTokensOffThread(texts);
    expect(counts).toEqual(texts.map((text) => countTokens(text)));
    expect(await countTokensOffThread([])).toEqual([]);
  });

  it('lets the process exit once the counts are in, counters used or not', () => {
    const counter = fileURLToPath(
      new URL('../../../../src/core/ingest/chunkers/tokenCounter.ts', import.meta.url),
    );
    const script = `const { countTokensOffThread } = await import(${JSON.stringify(counter)});
      console.log((await countTokensOffThread(['hello world'])).join());`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(child.signal, child.stderr).toBeNull();
    expect(child.stdout.trim()).toBe('2');
  }, 30_000);
});
