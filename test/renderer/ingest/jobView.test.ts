import { describe, expect, it } from 'vitest';
import {
  ingestErrorText,
  startErrorAfterQueueChange,
} from '../../../src/renderer/src/features/ingest/jobView';
import type { QueuedFile } from '../../../src/renderer/src/features/ingest/types';
import { FilesChangedError } from '../../../src/renderer/src/lib/studioFetch';
import { JobLostError } from '../../../src/renderer/src/lib/useJobRun';

describe('ingestion errors as shown', () => {
  it('adds where the studio sets a missing provider key', () => {
    const message =
      "The embedding model 'text-embedding-3-small' is unavailable: no OpenAI API key is set. Set one with `kbstudio settings set openai.apiKey <key>` or the OPENAI_API_KEY environment variable.";
    expect(ingestErrorText({ code: 'embedding_provider_unavailable', message })).toBe(
      `${message} (in the studio: Settings → Embedding providers)`,
    );
  });

  it('leaves other errors as the server wrote them', () => {
    const other = { code: 'embedding_provider_unavailable', message: 'The provider answered 500.' };
    expect(ingestErrorText(other)).toBe(other.message);
    const rejected = { code: 'unsupported_file_type', message: 'notes.xyz: unsupported file type.' };
    expect(ingestErrorText(rejected)).toBe(rejected.message);
  });
});

describe('the error of a start once the queue changed', () => {
  const queued = (path: string, changed?: boolean): QueuedFile => ({
    path,
    file: new File(['x'], path),
    ...(changed ? { changed } : {}),
  });
  const refused = new FilesChangedError(['gone.md', 'policy.md'], 'the queue');

  it('stops naming a file refused as changed once it is added again, and goes with the last one', () => {
    const marked = [queued('gone.md', true), queued('policy.md', true), queued('a.md')];
    // The rows marked as the error was shown: the same error.
    expect(startErrorAfterQueueChange(refused, marked)).toBe(refused);
    // policy.md added again (its row no longer marked): only gone.md is named.
    const readded = [queued('gone.md', true), queued('a.md'), queued('policy.md')];
    const after = startErrorAfterQueueChange(refused, readded);
    expect(after).toBeInstanceOf(FilesChangedError);
    expect((after as FilesChangedError).message).toBe(
      "'gone.md' changed (or was removed) on disk after it was added: remove it from the queue and add it again.",
    );
    // gone.md removed: nothing left to say.
    expect(startErrorAfterQueueChange(after, [queued('a.md'), queued('policy.md')])).toBeUndefined();
  });

  it('drops another refusal of the files sent, and keeps a lost ingestion’s notice', () => {
    expect(startErrorAfterQueueChange(new Error('413'), [queued('a.md')])).toBeUndefined();
    const lost = new JobLostError(new Error('stream cut'), 'Ingest again.');
    expect(startErrorAfterQueueChange(lost, [])).toBe(lost);
    expect(startErrorAfterQueueChange(undefined, [])).toBeUndefined();
  });
});

describe('what the live region says when an ingestion ends', () => {
  it('gives the outcome in numbers, or that it was cancelled', async () => {
    const { jobEndAnnouncement } = await import('../../../src/renderer/src/features/ingest/jobView');
    const documents = [
      { source: 'a.md', status: 'ingested', chunks: 2 },
      { source: 'b.pdf', status: 'rejected', chunks: 0 },
    ];
    const job = { state: 'done', result: { documents } } as unknown as Parameters<
      typeof jobEndAnnouncement
    >[0];
    expect(jobEndAnnouncement(job)).toBe('Ingestion finished: 1 ingested, 0 unchanged, 1 rejected.');
    expect(jobEndAnnouncement({ ...job, state: 'cancelled' })).toBe('Ingestion cancelled.');
  });
});
