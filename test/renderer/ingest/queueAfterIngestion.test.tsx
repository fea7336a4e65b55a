import { MantineProvider } from '@mantine/core';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { queueAfterIngestion } from '../../../src/renderer/src/features/ingest/queueAfterIngestion';
import { RejectedFilesAlert } from '../../../src/renderer/src/features/ingest/RejectedFilesAlert';
import type { FileOutcome, QueuedFile } from '../../../src/renderer/src/features/ingest/types';

const queued = (path: string): QueuedFile => ({ path, file: new File(['x'], path) });

/** How the server reports the second file of a name (src/core/ingest/sources.ts). */
const duplicate = (origin: string, taker: string, name: string): FileOutcome => {
  const archive = origin === name ? undefined : origin.slice(0, -name.length - 1);
  const as = taker === name ? '' : ` as "${name}"`;
  const fix = archive
    ? `rename the entry inside ${archive} to keep both, or leave ${archive} out to keep only ${taker}`
    : 'rename one of them to keep both';
  return {
    source: origin,
    format: 'markdown',
    status: 'rejected',
    chunks: 0,
    error: {
      code: 'invalid_document',
      message: `${origin}: not ingested: the name appears twice in this ingestion, and ${taker} took it first${as}; ${fix}.`,
    },
  };
};
const ingested = (source: string): FileOutcome => ({
  source,
  format: 'markdown',
  status: 'ingested',
  chunks: 1,
});

const render = (queue: QueuedFile[]) =>
  renderToStaticMarkup(
    <MantineProvider>
      <RejectedFilesAlert queue={queue} />
    </MantineProvider>,
  )
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<!-- -->/g, '');

describe('the queue after an ingestion', () => {
  it('keeps an archive whose entry lost its name to a stored file, saying a retry replaces that file', () => {
    const a = queued('a.md');
    const zip = queued('x.zip');
    const after = queueAfterIngestion(
      [a, zip],
      [a, zip],
      [ingested('a.md'), duplicate('x.zip/a.md', 'a.md', 'a.md')],
    );
    expect(after.map((f) => f.path)).toEqual(['x.zip']);
    expect(after[0]!.rejected).toMatch(/^1 entry not ingested: a\.md: the name appears twice/);
    expect(after[0]!.clashes).toEqual([{ file: 'x.zip › a.md', storedFrom: 'a.md', name: 'a.md' }]);

    // The row says how to keep both: an archive's entry is renamed inside the archive.
    expect(after[0]!.rejected).toBe(
      '1 entry not ingested: a.md: the name appears twice in this ingestion, and a.md took it first; rename the entry inside x.zip to keep both, or leave x.zip out to keep only a.md.',
    );

    const html = render(after);
    expect(html).toContain('1 file was not ingested');
    const sentence =
      'x.zip › a.md has the same name as a.md, which was stored: ingesting x.zip again replaces the stored a.md. To keep both, rename a.md inside x.zip; to keep only the stored one, remove x.zip from the queue.';
    expect(html).toContain(sentence);
    // The replacement is the news: told first, with no promise of a plain retry before it.
    const lead =
      'Ingested again as it is, a file refused for its name replaces the file stored under that name';
    expect(html).toContain(lead);
    expect(html).not.toContain('tries it again');
    expect(html).not.toContain('rename one of them');
  });

  it('tells the replacement before the retry of the other rejected files', () => {
    const zip = queued('x.zip');
    const pdf = queued('scan.pdf');
    const a = queued('a.md');
    const after = queueAfterIngestion(
      [a, zip, pdf],
      [a, zip, pdf],
      [
        ingested('a.md'),
        duplicate('x.zip/a.md', 'a.md', 'a.md'),
        {
          source: 'scan.pdf',
          format: 'pdf',
          status: 'rejected',
          chunks: 0,
          error: { code: 'no_text_layer', message: 'scan.pdf: no text layer (OCR it first).' },
        },
      ],
    );
    const html = render(after);
    expect(html).toContain('2 files were not ingested');
    const replaces = html.indexOf('replaces the file stored under that name');
    const retry = html.indexOf(
      'The other stays queued, marked with the reason: once that is fixed, Ingest tries it again.',
    );
    expect(replaces).toBeGreaterThan(-1);
    expect(retry).toBeGreaterThan(replaces);
  });

  it('says the same of a file whose name an archive’s entry took first', () => {
    const a = queued('a.md');
    const zip = queued('docs.zip');
    // The archive's entry came first and took the name; the file sent by itself was refused.
    const after = queueAfterIngestion(
      [a, zip],
      [a, zip],
      [ingested('a.md'), duplicate('a.md', 'docs.zip/a.md', 'a.md')],
    );
    expect(after.map((f) => f.path)).toEqual(['a.md']);
    expect(after[0]!.clashes).toEqual([{ file: 'a.md', storedFrom: 'docs.zip › a.md', name: 'a.md' }]);
    expect(render(after)).toContain(
      'a.md has the same name as docs.zip › a.md, which was stored as a.md: ingesting a.md again replaces the stored a.md. To keep both, rename one of them; to keep only the stored one, remove a.md from the queue.',
    );
  });

  it('promises a plain retry for other rejections, and no clash when the name’s taker was refused too', () => {
    const pdf = queued('scan.pdf');
    const after = queueAfterIngestion(
      [pdf],
      [pdf],
      [
        {
          source: 'scan.pdf',
          format: 'pdf',
          status: 'rejected',
          chunks: 0,
          error: { code: 'no_text_layer', message: 'scan.pdf: no text layer (OCR it first).' },
        },
      ],
    );
    expect(after[0]!.clashes).toBeUndefined();
    const html = render(after);
    expect(html).toContain(
      'It stays queued, marked with the reason: once that is fixed, Ingest tries it again.',
    );
    expect(html).not.toContain('replaces');

    const a = queued('a.md');
    const zip = queued('x.zip');
    const bothRefused = queueAfterIngestion(
      [a, zip],
      [a, zip],
      [
        {
          ...ingested('a.md'),
          status: 'rejected',
          error: { code: 'invalid_document', message: 'a.md: binary' },
        },
        duplicate('x.zip/a.md', 'a.md', 'a.md'),
      ],
    );
    expect(bothRefused.map((f) => f.clashes)).toEqual([undefined, undefined]);
  });
});
