import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/core/errors';
import { parseDocument } from '../../src/core/ingest/parse';
import { createMarkdownParser } from '../../src/core/ingest/parsers/markdown';

/**
 * What the parser fuzzing found, kept as tests. Inputs are built here (they are short repetitions).
 * See docs/reliability.md, Fuzzing.
 */
const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

describe('parser fuzzing findings', () => {
  it('Markdown: runs of setext headings parse into one section per heading, with its text', async () => {
    const doc = await parseDocument('markdown', {
      bytes: bytes(Array.from({ length: 300 }, (_, i) => `Title ${i}\n---\nBody ${i}\n\n`).join('')),
      source: 'setext.md',
    });
    expect(doc.sections).toHaveLength(300);
    expect(doc.sections[7]).toMatchObject({ metadata: { headings: ['Title 7'] } });
    expect(doc.sections[7]!.text).toContain('Body 7');
  });

  it('Markdown: repeated front-matter fences are read as one front matter and refused clearly when it is cyclic', async () => {
    const input = '---\na: &x [*x]\n---\n'.repeat(50);
    const refusal = await parseDocument('markdown', { bytes: bytes(input), source: 'fences.md' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).toMatchObject({ code: 'invalid_document' });
    expect((refusal as Error).message).toMatch(/^fences\.md: front matter/);
  });

  it('Markdown: MDX with an unterminated tag is refused with the file name, line and column', async () => {
    const err = await parseDocument('markdown', {
      bytes: bytes('# T\n\nText <Comp prop={\n'),
      source: 'broken.mdx',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as Error).message).toMatch(/^broken\.mdx: invalid MDX at line \d+, column \d+/);
  });

  it('JSON: invalid JSON nested 50,000 deep is refused with a clear error, not a stack overflow', async () => {
    // V8 names no position for an unexpected token; jsonc-parser, asked to locate it, used to recurse
    // once per level and throw RangeError (found by the long fuzz run, a 1.2 MB mutated fixture).
    const input = '{"a":'.repeat(50_000) + ',';
    const err = await parseDocument('json', { bytes: bytes(input), source: 'deep.json' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'invalid_document' });
    expect((err as Error).message).toMatch(
      /^deep\.json: invalid JSON at line 1, column \d+: Unexpected token/,
    );
  });

  it('CSV: a header of 30,000 equal names gets suffixed keys in linear time', async () => {
    // uniqueName tried name_2, name_3, ... from 2 for every duplicate: O(N²), 8-11 s for the 90-300 KB
    // headers the long fuzz run made (found as slow inputs). Now it resumes where it stopped.
    const header = Array.from({ length: 30_000 }, () => 'Team').join(',');
    const row = Array.from({ length: 30_000 }, (_, i) => `v${i}`).join(',');
    const started = performance.now();
    const doc = await parseDocument('csv', { bytes: bytes(`${header}\n${row}\n`), source: 'wide.csv' });
    const elapsed = performance.now() - started;
    expect(doc.sections).toHaveLength(1);
    const metadata = doc.sections[0]!.metadata;
    expect(metadata).toMatchObject({ Team: 'v0', Team_2: 'v1', Team_3: 'v2', Team_30000: 'v29999' });
    expect(elapsed).toBeLessThan(5_000);
  });

  // micromark (4.0.3, upstream) does work quadratic in some constructs: it resolves each setext heading by
  // splicing the whole event list (3,000 "a\n---\n", 18 KB: 7.4 s; 6,000: 28.6 s), and nested list
  // markers on one line ("- " x 10,800, 21 KB, as .mdx) took 112 s before the stack overflowed. Such text
  // is one piece, so a check between pieces could not stop it: micromark now runs in a worker thread,
  // terminated when the document's budget runs out. A short budget keeps these tests fast.
  const shortBudget = { baseMs: 1_500, msPerMb: 0 };

  it('Markdown: 36 KB of setext headings is parsed or refused within the parse budget', async () => {
    const parse = createMarkdownParser({ budget: shortBudget });
    const input = 'a\n---\n'.repeat(6_000);
    const started = performance.now();
    const result = await parse({ bytes: bytes(input), source: 'setext-run.md' }).catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(shortBudget.baseMs + 3_000);
    if (result instanceof Error) {
      expect(result).toBeInstanceOf(DomainError);
      expect(result).toMatchObject({ code: 'invalid_document' });
      expect(result.message).toMatch(/^setext-run\.md: reading the Markdown took too long .* was stopped/);
    } else {
      expect(result).toMatchObject({
        sections: expect.arrayContaining([{ text: 'a', metadata: { headings: ['a'] } }]),
      });
    }
    // The pool replaced the terminated worker: the next document parses normally.
    const next = await parse({ bytes: bytes('# After\n\nStill read.\n'), source: 'next.md' });
    expect(next.sections).toEqual([{ text: 'After\n\nStill read.', metadata: { headings: ['After'] } }]);
  });

  it('MDX: 21 KB of nested list markers on one line is refused within the parse budget', async () => {
    const parse = createMarkdownParser({ budget: shortBudget });
    const started = performance.now();
    const err = await parse({ bytes: bytes(`${'- '.repeat(10_800)}x\n`), source: 'lists.mdx' }).catch(
      (e: unknown) => e,
    );
    expect(performance.now() - started).toBeLessThan(shortBudget.baseMs + 3_000);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'invalid_document' });
    expect((err as Error).message).toMatch(
      /^lists\.mdx: (reading the Markdown took too long|the document nests too deeply)/,
    );
  });

  it('Markdown: [^1] repeated 16,000 times on one line is parsed or refused within the parse budget', async () => {
    const parse = createMarkdownParser({ budget: shortBudget });
    const started = performance.now();
    const result = await parse({ bytes: bytes(`Text ${'[^1]'.repeat(16_000)}\n`), source: 'refs.md' }).catch(
      (e: unknown) => e,
    );
    expect(performance.now() - started).toBeLessThan(shortBudget.baseMs + 3_000);
    if (result instanceof Error) {
      expect(result.message).toMatch(/^refs\.md: reading the Markdown took too long/);
    } else {
      expect((result as { sections: { text: string }[] }).sections[0]!.text).toContain('[^1][^1]');
    }
  });
});
