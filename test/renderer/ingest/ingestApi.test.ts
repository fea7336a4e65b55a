import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { validIngestSettings } from '../../../src/renderer/src/features/ingest/csvRows';
import { previewFile, startIngest } from '../../../src/renderer/src/features/ingest/ingestApi';
import type { IngestSettings } from '../../../src/renderer/src/features/ingest/types';
import { FilesChangedError } from '../../../src/renderer/src/lib/studioFetch';

const chunking = { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 } as const;

/** The requests the page sends, answered as the studio answers them. */
function recordingFetch(answer: unknown) {
  const bodies: unknown[] = [];
  vi.stubGlobal('document', { querySelector: () => ({ content: 'tok' }) });
  vi.stubGlobal(
    'fetch',
    vi.fn(async (_url: string, init: RequestInit) => {
      bodies.push(init.body);
      return new Response(JSON.stringify({ data: answer }), { status: 200 });
    }),
  );
  return bodies;
}

/** The JSON `options` part of a multipart body built by multipartBody. */
async function optionsPart(body: unknown): Promise<unknown> {
  const text = await (body as Blob).text();
  const match = /name="options"\r\n\r\n(.*?)\r\n/s.exec(text);
  return JSON.parse(match![1]!);
}

const file = (path: string, text = 'name,notes\nAda,\nBob,kept\n') => ({
  path,
  file: new File([text], path.split('/').pop()!),
});

describe('the CSV row rule sent with an ingestion and its preview', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('sends the required columns the creator chose to both', async () => {
    const settings = validIngestSettings(chunking, { rule: 'listed', columns: ['name', ' name', ''] })!;
    expect(settings).toEqual({ ...chunking, csvRequiredColumns: ['name'] });

    const bodies = recordingFetch({ jobId: 'job_1', job: { id: 'job_1' } });
    await startIngest('lst_1', [file('people.csv'), file('a.md', '# A')], settings);
    expect(await optionsPart(bodies[0])).toEqual({
      ...chunking,
      csvRequiredColumns: ['name'],
      paths: ['people.csv', 'a.md'],
    });

    await previewFile(file('people.csv'), settings, 20);
    const form = bodies[1] as FormData;
    expect(JSON.parse(String(form.get('options')))).toEqual({
      ...chunking,
      csvRequiredColumns: ['name'],
      limit: 20,
    });
  });

  it('keeps every row with "none", and leaves the default to the server', async () => {
    const bodies = recordingFetch({});
    const none = validIngestSettings(chunking, { rule: 'none', columns: ['ignored'] })!;
    await previewFile(file('people.csv'), none, 5);
    expect(JSON.parse(String((bodies[0] as FormData).get('options')))).toMatchObject({
      csvRequiredColumns: [],
    });
    const byDefault = validIngestSettings(chunking, { rule: 'named', columns: [] })!;
    await previewFile(file('people.csv'), byDefault, 5);
    expect(JSON.parse(String((bodies[1] as FormData).get('options')))).not.toHaveProperty(
      'csvRequiredColumns',
    );
    // Only a CSV's preview carries the rule: another document's is not asked again when it changes.
    await previewFile(file('a.md', '# A'), none, 5);
    expect(JSON.parse(String((bodies[2] as FormData).get('options')))).toEqual({ ...chunking, limit: 5 });
  });

  it('sends nothing while "Only the columns listed" lists none', () => {
    expect(validIngestSettings(chunking, { rule: 'listed', columns: [' '] })).toBeUndefined();
  });
});

/** A queued file as the browser holds it once it changed on disk: any read of it is refused. */
function changedOnDisk(name: string): File {
  const unreadable = () =>
    Promise.reject(new DOMException('The requested file could not be read.', 'NotReadableError'));
  return Object.assign(new File(['Version ONE'], name), {
    arrayBuffer: unreadable,
    slice: () => Object.assign(new Blob(['V']), { arrayBuffer: unreadable }),
  });
}

describe('a queued file changed on disk', () => {
  beforeEach(() => {
    vi.stubGlobal('document', { querySelector: () => ({ content: 'tok' }) });
    // What Chromium does with a body holding a file changed since it was picked (ERR_UPLOAD_FILE_CHANGED).
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => {
        throw new TypeError('Failed to fetch');
      }),
    );
  });
  afterEach(() => vi.unstubAllGlobals());

  it('is named by its queue path when Ingest or its preview fails to send it', async () => {
    const queuedFile = { path: 'handbook/policy.md', file: changedOnDisk('policy.md') };
    const other = file('notes.md', '# Notes');
    const settings: IngestSettings = { ...chunking };

    const ingest = await startIngest('lst_1', [other, queuedFile], settings).catch((e) => e);
    expect(ingest).toBeInstanceOf(FilesChangedError);
    expect(ingest.names).toEqual(['handbook/policy.md']);
    expect(ingest.message).toBe(
      "'handbook/policy.md' changed (or was removed) on disk after it was added: remove it from the queue and add it again.",
    );
    const preview = await previewFile(queuedFile, settings, 20).catch((e) => e);
    expect(preview).toBeInstanceOf(FilesChangedError);
    expect(preview.message).toBe(ingest.message);
  });
});
