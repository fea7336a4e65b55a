import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunkSections } from '../../../../src/core/ingest/chunkers';
import {
  chunkText,
  expectLossless,
  expectWellFormed,
  fixtureTexts,
  fixturesDir,
  randomText,
} from './chunkProperties';

const paragraph = (n: number): string =>
  `Paragraph ${n} explains ${Array.from({ length: 10 }, (_, i) => `term${n}_${i}`).join(' ')}.`;

describe('markdown chunker', () => {
  it('starts a new chunk at every heading, even when both would fit together', () => {
    const text = '# Intro\n\nWelcome text.\n\n## Setup\n\nInstall it.\n\n### Details\n\nMore.';
    const chunks = chunkText(text, { strategy: 'markdown', chunkSize: 512 });
    expect(chunks.map((c) => c.text)).toEqual([
      '# Intro\n\nWelcome text.',
      '## Setup\n\nInstall it.',
      '### Details\n\nMore.',
    ]);
  });

  it('keeps a heading with nothing under it together with the heading that follows', () => {
    const chunks = chunkText('# Guide\n\n## Install\n\nRun the installer.', { strategy: 'markdown' });
    expect(chunks.map((c) => c.text)).toEqual(['# Guide\n\n## Install\n\nRun the installer.']);
  });

  it('keeps each code block of the fixture whole and under its heading', () => {
    const text = fs.readFileSync(path.join(fixturesDir, 'codeblock.md'), 'utf8');
    const chunks = chunkText(text, { strategy: 'markdown', chunkSize: 512 });
    expect(chunks).toHaveLength(2);
    expect(chunks[0]!.text.startsWith('## HTML Example\n\n```html\n<!DOCTYPE html>')).toBe(true);
    expect(chunks[0]!.text.endsWith('</html>\n```')).toBe(true);
    expect(chunks[1]!.text.startsWith('## XML Example\n```xml')).toBe(true);
    expect(chunks[1]!.text.match(/```xml/g)).toHaveLength(2);
    expectLossless(text, chunks);
  });

  it('never cuts inside a fenced block that fits, blank lines and # lines inside it included', () => {
    const code = '```python\n# not a heading\ndef f():\n\n    return 1\n```';
    const text = [paragraph(1), paragraph(2), code, paragraph(3), paragraph(4)].join('\n\n');
    const chunks = chunkText(text, { strategy: 'markdown', chunkSize: 64, chunkOverlap: 0 });
    expectWellFormed(chunks, 64);
    expectLossless(text, chunks);
    expect(chunks.filter((c) => c.text.includes(code))).toHaveLength(1);
    for (const chunk of chunks) expect((chunk.text.match(/```/g) ?? []).length % 2).toBe(0);
  });

  it('splits an oversized code block by lines, without mixing in the text around it', () => {
    const lines = Array.from({ length: 120 }, (_, i) => `    value_${i} = compute(${i}, "label ${i}")`);
    const code = ['```python', ...lines, '```'].join('\n');
    const text = [paragraph(1), code, paragraph(2)].join('\n\n');
    const chunks = chunkText(text, { strategy: 'markdown', chunkSize: 100, chunkOverlap: 10 });
    expectWellFormed(chunks, 100);
    expectLossless(text, chunks);
    const codeChunks = chunks.filter((c) => c.text.includes('compute('));
    expect(codeChunks.length).toBeGreaterThan(3);
    for (const chunk of codeChunks) {
      expect(chunk.text).not.toContain('Paragraph');
      expect(
        chunk.text
          .split('\n')
          .every(
            (line) => line === '```python' || line === '```' || /compute\(\d+, "label \d+"\)$/.test(line),
          ),
      ).toBe(true);
    }
  });

  it('packs paragraphs whole up to chunkSize and overlaps by whole paragraphs', () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `Short note ${i}.`);
    const text = paragraphs.join('\n\n');
    const chunks = chunkText(text, { strategy: 'markdown', chunkSize: 24, chunkOverlap: 8 });
    expectWellFormed(chunks, 24);
    expectLossless(text, chunks);
    for (const chunk of chunks)
      for (const part of chunk.text.split('\n\n')) expect(paragraphs).toContain(part);
    for (let i = 1; i < chunks.length; i++) {
      expect(chunks[i - 1]!.text.endsWith(chunks[i]!.text.split('\n\n')[0]!)).toBe(true);
    }
  });

  it('chunks Markdown parser sections (heading path in metadata) without crossing them', () => {
    const chunks = chunkSections(
      [
        { text: 'Guide\n\nIntro text.', metadata: { headings: ['Guide'] } },
        { text: 'Install\n\nSteps here.', metadata: { headings: ['Guide', 'Install'] } },
      ],
      { strategy: 'markdown' },
    );
    expect(chunks.map((c) => [c.text, c.metadata])).toEqual([
      ['Guide\n\nIntro text.', { headings: ['Guide'] }],
      ['Install\n\nSteps here.', { headings: ['Guide', 'Install'] }],
    ]);
  });

  it('loses nothing on the fixtures and random text, handles long runs, and is deterministic', () => {
    const long = `# Data\n\n${'Q'.repeat(60_000)}\n\nEnd.`;
    for (const text of [...fixtureTexts().map((f) => f.text), randomText(5, 20_000), long]) {
      const started = performance.now();
      const chunks = chunkText(text, { strategy: 'markdown', chunkSize: 64, chunkOverlap: 16 });
      expect(performance.now() - started).toBeLessThan(5000);
      expectWellFormed(chunks, 64);
      expectLossless(text, chunks);
      expect(chunkText(text, { strategy: 'markdown', chunkSize: 64, chunkOverlap: 16 })).toEqual(chunks);
    }
  });
});
