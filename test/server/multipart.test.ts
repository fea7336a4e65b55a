import { existsSync, type WriteStream } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { receiveMultipart } from '../../src/server/multipart';
import { tempDir } from '../helpers/studio';

// Every file the receiver writes, opened slowly: a refusal then arrives while files are still being
// opened, the moment at which removing the folder used to race the open (which could create the file,
// and so keep the folder, after the folder's entries were read).
const opened = vi.hoisted(() => [] as WriteStream[]);
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const slowOpen = (...args: unknown[]) => {
    setTimeout(() => (fs.open as (...a: unknown[]) => void)(...args), 150);
  };
  return {
    ...fs,
    createWriteStream: (path: string) => {
      const stream = fs.createWriteStream(path, {
        fs: { open: slowOpen, write: fs.write, writev: fs.writev, close: fs.close },
      } as Parameters<typeof fs.createWriteStream>[1]);
      opened.push(stream);
      return stream;
    },
  };
});

const scratch = tempDir();
let url: string;
let close: () => void;

beforeAll(async () => {
  const app = express();
  app.post('/upload/:id', async (req, res) => {
    try {
      const form = await receiveMultipart(
        req,
        join(scratch.path, 'tmp', req.params.id),
        { fileField: 'files', textFields: ['config'] },
        { maxFileBytes: 1024 * 1024, maxFiles: 10, maxFieldBytes: 1024 },
      );
      res.json({ files: form.files.length });
    } catch (err) {
      res.status(400).json({ message: (err as Error).message });
    }
  });
  // A route whose file part is `file`, of at most 1 KB, a document's limit.
  app.post('/preview/:id', async (req, res) => {
    try {
      const form = await receiveMultipart(
        req,
        join(scratch.path, 'tmp', req.params.id),
        { fileField: 'file', textFields: [] },
        { maxFileBytes: 1024, fileLimitName: 'per document', maxFiles: 1, maxFieldBytes: 1024 },
      );
      res.json({ bytes: form.files[0]?.bytes });
    } catch (err) {
      res.status(413).json({ message: (err as Error).message });
    }
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => {
  close();
  scratch.remove();
});

describe('receiveMultipart', () => {
  it('closes every file before it removes the folder of a refused form, so nothing is left', async () => {
    for (let i = 0; i < 5; i++) {
      opened.length = 0;
      const body = new FormData();
      body.append('files', new Blob(['# A\n\ntext']), 'a.md');
      body.append('files', new Blob(['# B\n\ntext']), 'b.md');
      body.append('unexpected', 'a field the route does not take');
      const res = await fetch(`${url}/upload/upl_${i}`, { method: 'POST', body });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(/^unexpected: /);
      expect(opened.length).toBeGreaterThan(0);
      // Answered only once every file is closed and the folder is gone.
      expect(opened.map((s) => s.closed)).toEqual(opened.map(() => true));
      expect(existsSync(join(scratch.path, 'tmp', `upl_${i}`))).toBe(false);
    }
    // Nothing comes back later either.
    await new Promise((resolve) => setTimeout(resolve, 400));
    for (let i = 0; i < 5; i++) expect(existsSync(join(scratch.path, 'tmp', `upl_${i}`))).toBe(false);
  });

  it('keeps the files of a form received whole', async () => {
    const body = new FormData();
    body.append('files', new Blob(['# A\n\ntext']), 'a.md');
    body.append('config', '{}');
    const res = await fetch(`${url}/upload/upl_ok`, { method: 'POST', body });
    expect(await res.json()).toEqual({ files: 1 });
    // Stored by number, not by the part's name (which may be longer than the disk allows).
    expect(existsSync(join(scratch.path, 'tmp', 'upl_ok', '0'))).toBe(true);
  });

  it("names the route's file field and the limit it applies when a file is too large", async () => {
    const send = async (bytes: number) => {
      const body = new FormData();
      body.append('file', new Blob([Buffer.alloc(bytes, 'a')]), 'big.md');
      const res = await fetch(`${url}/preview/pre_${bytes}`, { method: 'POST', body });
      return (await res.json()) as { bytes?: number; message?: string };
    };
    expect((await send(1025)).message).toBe(
      "file: 'big.md' exceeds 1 KB, the limit per document. Larger knowledge bases require a creator plan upgrade or contacting support.",
    );
    // The limit itself is taken.
    expect(await send(1024)).toEqual({ bytes: 1024 });
  });

  it('calls the limit one per file when the route does not name it', async () => {
    const body = new FormData();
    body.append('files', new Blob([Buffer.alloc(1024 * 1024 + 1)]), 'kb.zip');
    const res = await fetch(`${url}/upload/upl_big`, { method: 'POST', body });
    expect(((await res.json()) as { message: string }).message).toMatch(
      /^files: 'kb\.zip' exceeds 1 MB, the limit per file\. /,
    );
  });
});
