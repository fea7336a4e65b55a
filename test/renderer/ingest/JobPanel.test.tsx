import { MantineProvider } from '@mantine/core';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { JobPanel } from '../../../src/renderer/src/features/ingest/JobPanel';
import type { IngestJob } from '../../../src/renderer/src/features/ingest/types';

const running = (progress: IngestJob['progress']): IngestJob => ({
  id: 'job_1',
  listingId: 'lst_1',
  kind: 'ingest',
  state: 'running',
  startedAt: '2026-12-01T10:00:00.000Z',
  finishedAt: null,
  progress,
  files: [],
  result: null,
  error: null,
});

/** The line under the progress bar: the text of the element read out as it changes. */
function progressLine(job: IngestJob): string {
  const html = renderToStaticMarkup(
    <MantineProvider>
      <JobPanel job={job} onCancel={() => undefined} cancelling={false} />
    </MantineProvider>,
  );
  const line = /aria-live="polite"[^>]*>([^<]*)</.exec(html)?.[1];
  return (line ?? '').replace(/&amp;/g, '&');
}

describe('JobPanel', () => {
  it('says which archive is being unpacked and how far, not that files are being received', () => {
    const line = progressLine(
      running({
        stage: 'reading',
        filesDone: 0,
        filesTotal: 0,
        bytesDone: 0,
        bytesTotal: 0,
        chunks: 0,
        unpacking: { archive: 'x.zip', filesDone: 1200, filesTotal: 8000 },
      }),
    );
    expect(line).toBe('Unpacking x.zip… 1,200 of 8,000 files');
  });

  it('says the received files are being got ready before the first progress, not still received', () => {
    expect(progressLine(running(null))).toBe('Preparing the files…');
  });

  it('reads a file’s stage as before once files are read', () => {
    const line = progressLine(
      running({
        stage: 'chunking',
        file: 'docs/a.md',
        filesDone: 1500,
        filesTotal: 8000,
        bytesDone: 10,
        bytesTotal: 100,
        chunks: 12,
      }),
    );
    expect(line).toBe('Chunking docs/a.md · 1,500 of 8,000 files · 12 chunks');
  });

  it('writes every count of an outcome as the file pages do: 3,004, not 3004', () => {
    const documents = Array.from({ length: 3004 }, (_, i) => ({
      source: `d${i}.md`,
      format: 'markdown',
      status: 'ingested' as const,
      chunks: i === 0 ? 1200 : 6,
    }));
    const html = renderToStaticMarkup(
      <MantineProvider>
        <JobPanel
          job={{
            ...running(null),
            state: 'done',
            result: { documents, committed: true, documentCount: 3004, chunkCount: 18006, durationMs: 9000 },
          }}
          onCancel={() => undefined}
          cancelling={false}
        />
      </MantineProvider>,
    ).replace(/<!-- -->/g, '');
    expect(html).toMatch(/>3,004 ingested</);
    expect(html).toContain('The knowledge base now holds 3,004 documents, 18,006 chunks (9.0 s).');
    expect(html).toMatch(/>1,200<\/td>/);
    expect(html).not.toMatch(/3004|18006|>1200</);
  });
});
