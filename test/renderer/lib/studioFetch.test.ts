import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  FilesChangedError,
  filesChangedMessage,
  studioFetch,
} from '../../../src/renderer/src/lib/studioFetch';
import { StudioApiError } from '../../../src/renderer/src/lib/studioApi';

/** A page with a studio token, whose fetch fails as Chromium's does for an unreachable server. */
function failingFetch() {
  vi.stubGlobal('document', { querySelector: () => ({ content: 'tok' }) });
  vi.stubGlobal(
    'fetch',
    vi.fn(async () => {
      throw new TypeError('Failed to fetch');
    }),
  );
}

/**
 * A picked file as a browser holds it once the file on disk changed or was removed: any read of it
 * rejects with NotReadableError (as a Blob from Node's fs.openAsBlob does too).
 */
function changedOnDisk(name: string): File {
  const unreadable = () =>
    Promise.reject(new DOMException('The requested file could not be read.', 'NotReadableError'));
  const file = new File(['Version ONE'], name);
  return Object.assign(file, {
    arrayBuffer: unreadable,
    slice: () => Object.assign(new Blob(['V']), { arrayBuffer: unreadable }),
  });
}

describe('studioFetch, when a request gets no answer', () => {
  beforeEach(() => failingFetch());
  afterEach(() => vi.unstubAllGlobals());

  it('names a file changed on disk since it was added instead of blaming the server', async () => {
    const policy = changedOnDisk('policy.md');
    const kept = new File(['Unchanged'], 'kept.md');
    const uploads = {
      files: [
        { name: 'docs/kept.md', file: kept },
        { name: 'docs/policy.md', file: policy },
      ],
      keptIn: 'the queue',
    };
    const error = await studioFetch('/preview', { method: 'POST', body: 'x' }, uploads).catch((e) => e);
    expect(error).toBeInstanceOf(FilesChangedError);
    expect(error.names).toEqual(['docs/policy.md']);
    expect(error.message).toBe(
      "'docs/policy.md' changed (or was removed) on disk after it was added: remove it from the queue and add it again.",
    );
  });

  it('checks the files of a FormData body by their names', async () => {
    const gone = changedOnDisk('gone.csv');
    const form = new FormData();
    form.append('file', gone);
    const error = await studioFetch('/preview', { method: 'POST', body: form }).catch((e) => e);
    expect(error).toBeInstanceOf(FilesChangedError);
    expect(error.message).toBe(
      "'gone.csv' changed (or was removed) on disk after it was added: choose it again.",
    );
  });

  it('says the server cannot be reached only when every file still reads', async () => {
    const fine = new File(['Still the same'], 'fine.md');
    const error = await studioFetch(
      '/preview',
      { method: 'POST', body: 'x' },
      { files: [{ name: 'fine.md', file: fine }], keptIn: 'the queue' },
    ).catch((e) => e);
    expect(error).toBeInstanceOf(StudioApiError);
    expect(error).not.toBeInstanceOf(FilesChangedError);
    expect(error.code).toBe('network_error');
    expect(error.message).toBe('Cannot reach the studio server (Failed to fetch). Is it still running?');
  });
});

describe('filesChangedMessage', () => {
  it('names several files, then counts the rest', () => {
    expect(filesChangedMessage(['a.md', 'b.md'], 'the queue')).toBe(
      "'a.md' and 'b.md' changed (or were removed) on disk after they were added: remove them from the queue and add them again.",
    );
    expect(filesChangedMessage(['1', '2', '3', '4', '5', '6', '7'])).toBe(
      "'1', '2', '3', '4', '5' and 2 more files changed (or were removed) on disk after they were added: choose them again.",
    );
  });
});
