import { describe, expect, it } from 'vitest';
import {
  chunkSections,
  chunkSectionsPausing,
  MAX_PART_CHARS,
  resolveChunkingOptions,
  sectionParts,
} from '../../../../src/core/ingest/chunkers';
import { InvalidInput } from '../../../../src/core/errors';

describe('chunkSections', () => {
  it('never joins sections, gives each chunk a copy of its section metadata, drops blank text', () => {
    const metadata = { page: 2, source: 'a.pdf' };
    const chunks = chunkSections([
      { text: 'Page two text.', metadata },
      { text: '  \n\t ', metadata: { page: 3 } },
      { text: 'Page four.', metadata: { page: 4 } },
    ]);
    expect(chunks).toEqual([
      { text: 'Page two text.', tokenCount: 4, metadata: { page: 2, source: 'a.pdf' } },
      { text: 'Page four.', tokenCount: 3, metadata: { page: 4 } },
    ]);
    chunks[0]!.metadata.chunkIndex = 0;
    expect(metadata).toEqual({ page: 2, source: 'a.pdf' });
  });

  it('makes exactly one chunk of an atomic section, however long', () => {
    const row = `name: Ada\nbio: ${'word '.repeat(300)}`;
    const chunks = chunkSections(
      [
        { text: row, metadata: { row: 1 }, atomic: true },
        { text: '   ', metadata: { row: 2 }, atomic: true },
      ],
      { chunkSize: 16 },
    );
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.text).toBe(row.trim());
    expect(chunks[0]!.tokenCount).toBeGreaterThan(300);
    expect(chunks[0]!.metadata).toEqual({ row: 1 });
  });

  it('uses recursive, 512 tokens and 64 overlap by default', () => {
    expect(resolveChunkingOptions()).toEqual({ strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 });
    expect(resolveChunkingOptions({ chunkSize: 32 })).toEqual({
      strategy: 'recursive',
      chunkSize: 32,
      chunkOverlap: 4,
    });
    const text = Array.from({ length: 400 }, (_, i) => `Fact ${i} holds.`).join(' ');
    const chunks = chunkSections([{ text, metadata: {} }]);
    expect(chunks.length).toBeGreaterThan(1);
    expect(Math.max(...chunks.map((c) => c.tokenCount))).toBeLessThanOrEqual(512);
    expect(chunks[0]!.tokenCount).toBeGreaterThan(448);
  });

  it.each([
    [{ chunkSize: 15 }, 'chunkSize must be an integer from 16 to 8192 tokens (got 15).'],
    [{ chunkSize: 8193 }, 'chunkSize must be an integer from 16 to 8192 tokens (got 8193).'],
    [{ chunkSize: 100.5 }, 'chunkSize must be an integer'],
    [
      { chunkSize: 100, chunkOverlap: 100 },
      'chunkOverlap must be an integer from 0 to less than chunkSize (100) tokens (got 100).',
    ],
    [{ chunkOverlap: -1 }, 'chunkOverlap must be an integer'],
    [
      { strategy: 'semantic' },
      'strategy must be one of recursive, fixed, sentence, markdown (got "semantic").',
    ],
  ])('refuses invalid options %j, naming the field', (options, message) => {
    let thrown: unknown;
    try {
      chunkSections([{ text: 'x', metadata: {} }], options as never);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidInput);
    expect((thrown as InvalidInput).code).toBe('invalid_request');
    expect((thrown as Error).message).toContain(message);
  });
});

describe('chunkSectionsPausing', () => {
  it('gives the same chunks as chunkSections, pausing between sections', async () => {
    const sections = Array.from({ length: 200 }, (_, i) => ({
      text: `Row ${i}: the ferry leaves pier ${i % 7} at ${i % 24}:00. `.repeat(1 + (i % 90)),
      metadata: { row: i },
      atomic: i % 3 === 0,
    }));
    const options = { strategy: 'recursive' as const, chunkSize: 64, chunkOverlap: 8 };
    let pauses = 0;
    const paused = await chunkSectionsPausing(sections, options, async () => {
      pauses++;
      await new Promise((resolve) => setImmediate(resolve));
    });
    expect(paused).toEqual(chunkSections(sections, options));
    expect(paused.length).toBeGreaterThan(sections.length);
    // Every 32 sections.
    expect(pauses).toBe(6);
  });
});

describe('a section longer than MAX_PART_CHARS', () => {
  const paragraph = (i: number) => `Paragraph ${i} tells the ferry timetable of pier ${i % 7}, line by line.`;

  it('is cut at paragraph breaks, else line breaks, else spaces, else hard, never inside a surrogate pair', () => {
    const cover = (text: string) => {
      const parts = sectionParts({ text, metadata: {} });
      expect(parts[0]![0]).toBe(0);
      expect(parts.at(-1)![1]).toBe(text.length);
      parts.forEach(([start, end], k) => {
        expect(end - start).toBeLessThanOrEqual(MAX_PART_CHARS);
        if (k > 0) expect(start).toBe(parts[k - 1]![1]);
      });
      return parts;
    };
    const paragraphs = Array.from({ length: 3000 }, (_, i) => paragraph(i)).join('\n\n');
    const byParagraph = cover(paragraphs);
    expect(byParagraph.length).toBeGreaterThan(5);
    for (const [, end] of byParagraph.slice(0, -1)) expect(paragraphs.slice(end - 2, end)).toBe('\n\n');
    const lines = paragraphs.replaceAll('\n\n', '\n');
    for (const [, end] of cover(lines).slice(0, -1)) expect(lines[end - 1]).toBe('\n');
    const words = paragraphs.replaceAll('\n\n', ' ');
    for (const [, end] of cover(words).slice(0, -1)) expect(words[end - 1]).toBe(' ');
    const emoji = '🎉'.repeat(MAX_PART_CHARS);
    for (const [, end] of cover(emoji).slice(0, -1)) expect(end % 2).toBe(0);
    // Short and atomic sections stay whole.
    expect(sectionParts({ text: paragraphs, metadata: {}, atomic: true })).toEqual([[0, paragraphs.length]]);
    expect(sectionParts({ text: paragraph(1), metadata: {} })).toEqual([[0, paragraph(1).length]]);
  });

  it('is chunked part by part, pausing between parts, every word in a chunk', async () => {
    const text = Array.from({ length: 3000 }, (_, i) => paragraph(i)).join('\n\n');
    const sections = [{ text, metadata: { page: 1 } }];
    let pauses = 0;
    const chunks = await chunkSectionsPausing(sections, undefined, async () => {
      pauses++;
    });
    expect(pauses).toBe(sectionParts(sections[0]!).length);
    expect(chunks).toEqual(chunkSections(sections));
    for (const chunk of chunks) {
      expect(text).toContain(chunk.text);
      expect(chunk.metadata).toEqual({ page: 1 });
    }
    const covered = new Set(chunks.flatMap((c) => c.text.match(/Paragraph \d+/g) ?? []));
    expect(covered.size).toBe(3000);
  });
});
