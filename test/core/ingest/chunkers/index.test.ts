import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CHUNKING_STRATEGIES,
  chunkSections,
  chunkSectionsPausing,
  MAX_PART_CHARS,
  partEndOf,
  resolveChunkingOptions,
} from '../../../../src/core/ingest/chunkers';
import { markdownChunker } from '../../../../src/core/ingest/chunkers/markdown';
import { recursiveChunker } from '../../../../src/core/ingest/chunkers/recursive';
import { sentenceChunker } from '../../../../src/core/ingest/chunkers/sentence';
import type { Section } from '../../../../src/core/ingest/types';
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
  /** Where the parts of a section would be cut, each part starting where the last one ended. */
  const sectionParts = (section: Section) => {
    const parts: [number, number][] = [];
    for (let start = 0; start < section.text.length;) {
      const end = partEndOf(section, start);
      parts.push([start, end]);
      start = end;
    }
    return parts;
  };

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
    // A part each, and a little more: each part after the first starts at its forerunner's last chunk.
    const cuts = sectionParts(sections[0]!).length;
    expect(pauses).toBeGreaterThanOrEqual(cuts);
    expect(pauses).toBeLessThanOrEqual(cuts + Math.ceil(cuts / 8));
    expect(chunks).toEqual(chunkSections(sections));
    for (const chunk of chunks) {
      expect(text).toContain(chunk.text);
      expect(chunk.metadata).toEqual({ page: 1 });
    }
    const covered = new Set(chunks.flatMap((c) => c.text.match(/Paragraph \d+/g) ?? []));
    expect(covered.size).toBe(3000);
  });

  const long = (i: number) => `${paragraph(i)} ${'More words follow here. '.repeat(i % 5)}`;
  const paragraphs = Array.from({ length: 3000 }, (_, i) => long(i)).join('\n\n');
  const texts = [paragraphs, paragraphs.replaceAll('\n\n', '\n'), paragraphs.replaceAll('\n\n', ' ')];

  it('gives the chunks one chunker call over the whole section would, overlaps included', () => {
    const chunkers = { recursive: recursiveChunker, markdown: markdownChunker, sentence: sentenceChunker };
    for (const strategy of ['recursive', 'markdown', 'sentence'] as const) {
      for (const [chunkSize, chunkOverlap] of [
        [512, 64],
        [128, 32],
      ] as const) {
        for (const text of texts) {
          const label = `${strategy} ${chunkSize}/${chunkOverlap} ${JSON.stringify(text.slice(95, 115))}`;
          expect(sectionParts({ text, metadata: {} }).length, label).toBeGreaterThan(2);
          const whole = chunkers[strategy](text, { chunkSize, chunkOverlap }).map((span) =>
            text.slice(span.start, span.end),
          );
          const parted = chunkSections([{ text, metadata: {} }], { strategy, chunkSize, chunkOverlap });
          expect(
            parted.map((c) => c.text),
            label,
          ).toEqual(whole);
        }
      }
    }
  });

  it('gives full, overlapping chunks across every cut: fixed windows, and text without a space (base64)', () => {
    // Letters from SHA-256 blocks: one pre-token for the tokenizer, so parts are cut hard, and chunks
    // made again after a cut (as fixed windows restarted inside a number) may sit a token off one
    // chunker call's. None is cut short, and none is lost.
    const letters = Array.from({ length: (3 * MAX_PART_CHARS) / 32 }, (_, block) =>
      [...createHash('sha256').update(String(block)).digest()]
        .map((b) => String.fromCharCode(97 + (b % 26)))
        .join(''),
    ).join('');
    const cases = [
      ...CHUNKING_STRATEGIES.map((strategy) => ({ strategy, text: letters })),
      ...texts.map((text) => ({ strategy: 'fixed' as const, text })),
    ];
    for (const { strategy, text } of cases) {
      const label = `${strategy} ${JSON.stringify(text.slice(95, 115))}`;
      expect(sectionParts({ text, metadata: {} }).length, label).toBeGreaterThan(2);
      const chunks = chunkSections([{ text, metadata: {} }], { strategy, chunkSize: 512, chunkOverlap: 64 });
      let previous = -1;
      let coveredTo = 0;
      chunks.forEach((chunk, k) => {
        const at = text.indexOf(chunk.text, previous + 1);
        expect(at, `${label} chunk ${k} not found after the one before`).toBeGreaterThan(previous);
        // No gap after the chunk before (the first at the start); fixed windows overlap it.
        if (k === 0) expect(at, label).toBe(0);
        else if (strategy === 'fixed')
          expect(at, `${label} chunk ${k} does not overlap`).toBeLessThan(coveredTo);
        else expect(at, `${label} chunk ${k} leaves a gap`).toBeLessThanOrEqual(coveredTo);
        previous = at;
        coveredTo = at + chunk.text.length;
        expect(chunk.tokenCount).toBeLessThanOrEqual(512);
        // (The sentence chunker makes shorter chunks of such text in one call too: its own limit on a
        // "sentence" of thousands of letters.)
        if (k < chunks.length - 1 && strategy !== 'sentence') {
          expect(chunk.tokenCount, `${label} chunk ${k}`).toBeGreaterThan(460);
        }
      });
      expect(coveredTo, label).toBe(text.trimEnd().length);
    }
  });
});
