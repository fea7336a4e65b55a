import { describe, expect, it } from 'vitest';
import {
  FILE_STATUS_LABEL,
  partCutShort,
  partPercents,
  resumeNote,
  resumeTargetOf,
} from '../../../../src/renderer/src/features/publish/pushView';
import type { PushJob, PushPart, PushTarget } from '../../../../src/shared/push';

const target = (id: string, baseUrl: string, label: string | null = null): PushTarget => ({
  id,
  label,
  baseUrl,
  maskedKey: 'kbs_••••Vxbm',
  encryptedAtRest: false,
  createdAt: '2026-11-28T09:00:00.000Z',
  updatedAt: '2026-11-28T09:00:00.000Z',
});

const job = (state: PushJob['state'], to: string): PushJob => ({
  id: 'push_1',
  listingId: 'lst_1',
  target: to,
  remoteListingId: null,
  state,
  parts: [],
  missing: [],
  totals: {
    files: 8,
    bytes: 800,
    accepted: 0,
    unchanged: 6,
    rejected: 0,
    not_stored: 2,
    unconfirmed: 0,
    missing: 0,
  },
  remoteDocumentCount: null,
  remoteChunkCount: null,
  error: state === 'interrupted' ? { code: 'interrupted', message: 'The studio stopped…' } : null,
  startedAt: '2026-11-28T09:00:00.000Z',
  finishedAt: null,
});

const hosted = target('tgt_hosted', 'https://api.example.com/v1', 'Hosted');
const local = target('tgt_local', 'http://127.0.0.1:7534/v1');

describe('resuming an interrupted push from Publish', () => {
  it('picks the saved target the interrupted push went to, whichever is chosen', () => {
    expect(resumeTargetOf(job('interrupted', local.baseUrl), [hosted, local])).toBe(local);
    // Only an interrupted push is resumed; another push does not move the choice.
    expect(resumeTargetOf(job('failed', local.baseUrl), [hosted, local])).toBeUndefined();
    expect(resumeTargetOf(undefined, [hosted, local])).toBeUndefined();
  });

  it('says when Push would not resume it: another target chosen, or its address not saved', () => {
    const interrupted = job('interrupted', local.baseUrl);
    expect(resumeNote(interrupted, [hosted, local], local.id)).toBeUndefined();
    expect(resumeNote(interrupted, [hosted, local], hosted.id)).toBe(
      'The interrupted push went to http://127.0.0.1:7534/v1: choose it as the target to resume it there; Push sends to the chosen target.',
    );
    expect(resumeNote(interrupted, [hosted], hosted.id)).toBe(
      'The interrupted push went to http://127.0.0.1:7534/v1, which is not a saved target: add it (with its API key) to resume the push there.',
    );
    expect(resumeNote(job('completed', local.baseUrl), [hosted], hosted.id)).toBeUndefined();
  });
});

describe('a part the service was still processing when the push stopped', () => {
  const part: PushPart = {
    index: 6,
    state: 'failed',
    fileCount: 2,
    bytes: 200,
    archiveBytes: 150,
    chunking: { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 },
    packing: { filesDone: 2, bytesDone: 200 },
    sending: { loaded: 150, total: 150 },
    remote: { stage: 'embedding', filesDone: 1, filesTotal: 2, chunks: 3 },
    attempts: 1,
    uploadId: 'upl_6',
    error: { code: 'unconfirmed', message: 'Sent: …' },
    files: [],
  };

  it('is shown unconfirmed, with the remote progress last seen, not as failed on the remote', () => {
    expect(partCutShort(part)).toBe('unconfirmed');
    expect(partPercents(part)).toEqual({ packing: 100, sending: 100, remote: 50 });
    expect(FILE_STATUS_LABEL.unconfirmed).toBe('unconfirmed');
    // A part the remote failed is its own failure, processed to the end.
    const refused = { ...part, error: { code: 'no_text_layer', message: 'x' } };
    expect(partCutShort(refused)).toBeUndefined();
    expect(partPercents(refused).remote).toBe(100);
  });
});
