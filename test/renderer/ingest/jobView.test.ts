import { describe, expect, it } from 'vitest';
import {
  afterJobShown,
  ingestErrorText,
  lostNoticeShown,
} from '../../../src/renderer/src/features/ingest/jobView';

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

describe('an ingestion lost, then reported interrupted', () => {
  it('says it lost track only until the studio shows that same job again', () => {
    // The stream was cut: the page says it lost track of job_1.
    let lost = { id: 'job_1', reported: false };
    expect(lostNoticeShown(true, lost)).toBe(true);
    // Another job shown (an older listing's) changes nothing.
    lost = afterJobShown(lost, { id: 'job_0' })!;
    expect(lostNoticeShown(true, lost)).toBe(true);
    // The studio, started again, reports job_1 interrupted: its report alone is shown, and still not the
    // lost notice once that report is dismissed.
    lost = afterJobShown(lost, { id: 'job_1' })!;
    expect(lostNoticeShown(true, lost)).toBe(false);
    expect(afterJobShown(lost, { id: 'job_1' })).toBe(lost);
  });

  it('is no lost notice when nothing was lost', () => {
    expect(lostNoticeShown(false, undefined)).toBe(false);
    expect(afterJobShown(undefined, { id: 'job_1' })).toBeUndefined();
  });
});
