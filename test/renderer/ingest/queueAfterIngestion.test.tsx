import { MantineProvider } from '@mantine/core';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { queueAfterIngestion } from '../../../src/renderer/src/features/ingest/queueAfterIngestion';
import { RejectedFilesAlert } from '../../../src/renderer/src/features/ingest/RejectedFilesAlert';
import type { FileOutcome, QueuedFile } from '../../../src/renderer/src/features/ingest/types';

const queued = (path: string): QueuedFile => ({ path, file: new File(['x'], path) });

/** How the server reports the second file of a name (src/core/ingest/sources.ts). */
const duplicate = (origin: string, taker: string, name: string): FileOutcome => ({
  source: origin,
  format: 'markdown',
  status: 'rejected',
  chunks: 0,
  error: {
    code: 'invalid_document',
    message: `${origin}: not ingested: the name appears twice in this ingestion, and ${taker} took it first as "${name}"; rename one of them to keep both.`,
  },
});
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

    const html = render(after);
    expect(html).toContain('1 file was not ingested');
    expect(html).toContain(
      'x.zip › a.md has the same name as a.md, which was stored: ingesting x.zip again replaces the stored a.md.',
    );
    expect(html).toContain('Rename one of them to keep both.');
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
      'a.md has the same name as docs.zip › a.md, which was stored as a.md: ingesting a.md again replaces the stored a.md.',
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
