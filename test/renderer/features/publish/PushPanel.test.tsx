import { MantineProvider } from '@mantine/core';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { PushPanel } from '../../../../src/renderer/src/features/publish/PushPanel';
import type { PushJob, PushPart } from '../../../../src/shared/push';

const part: PushPart = {
  index: 1,
  state: 'completed',
  fileCount: 1500,
  bytes: 4_000_000,
  archiveBytes: 1_000_000,
  chunking: { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 },
  packing: { filesDone: 1500, bytesDone: 4_000_000 },
  sending: { loaded: 1_000_000, total: 1_000_000 },
  remote: null,
  attempts: 1,
  uploadId: 'upl_1',
  error: null,
  files: [{ source: 'big.md', format: 'markdown', bytes: 9, status: 'accepted', chunks: 1234 }],
};

const job: PushJob = {
  id: 'push_1',
  listingId: 'lst_1',
  target: 'https://kb.example/v1',
  remoteListingId: 'rl_1',
  state: 'completed',
  parts: [part],
  missing: [],
  totals: {
    files: 3504,
    bytes: 8_000_000,
    accepted: 1500,
    unchanged: 0,
    rejected: 0,
    not_stored: 2002,
    unconfirmed: 0,
    missing: 2,
  },
  remoteDocumentCount: 1500,
  remoteChunkCount: 18006,
  error: null,
  startedAt: '2026-12-01T10:00:00.000Z',
  finishedAt: '2026-12-01T10:05:00.000Z',
} as PushJob;

const render = (j: PushJob) =>
  renderToStaticMarkup(
    <MantineProvider>
      <PushPanel job={j} onCancel={() => undefined} cancelling={false} />
    </MantineProvider>,
  )
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<!-- -->/g, '');

describe('PushPanel', () => {
  it('writes every count of the report as the rest of the studio does: 2,002, not 2002', () => {
    const html = render(job);
    expect(html).toMatch(/>1,500 accepted</);
    expect(html).toMatch(/>2,002 not stored</);
    expect(html).toContain('1 part, 3,504 files');
    expect(html).toContain('· 1,500 files,');
    expect(html).toContain('The remote knowledge base holds 1,500 documents, 18,006 chunks.');
    expect(html).toMatch(/>1,234<\/td>/);
    expect(html).not.toMatch(/1500|2002|3504|18006|1234/);
  });
});
