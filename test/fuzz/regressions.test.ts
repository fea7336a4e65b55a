import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/core/errors';
import { parseDocument } from '../../src/core/ingest/parse';

/**
 * What the parser fuzzing found, kept as tests. Inputs are built here (they are short repetitions).
 * Open findings are listed as todos with their measurements; see docs/reliability.md, Fuzzing.
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

  // Open: micromark (4.0.3, upstream) does work quadratic in some constructs: it resolves each setext
  // heading by splicing the whole event list (3,000 "a\n---\n", 18 KB: 7.4 s; 6,000: 28.6 s), and
  // nested list markers on one line ("- " x 10,800, 21 KB, as .mdx) took 112 s before the stack
  // overflowed; [^1] x 16,000 on one line, 6.8 s. The parse budget is checked between pieces, and such
  // text is one piece, so it cannot stop this. Fix: parse Markdown and HTML in a worker thread with a
  // hard deadline, as PDF is.
  it.todo('Markdown: 36 KB of setext headings is parsed or refused within the parse budget');
  it.todo('MDX: 21 KB of nested list markers on one line is refused within the parse budget');
});
