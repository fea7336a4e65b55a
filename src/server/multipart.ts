import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve as resolvePath, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import type { Request } from 'express';
import { InvalidInput } from '../core/errors';
import { PayloadTooLarge } from '../core/ingest/errors';
import { formatBytes } from '../core/ingest/zipLimits';
import { storageFailure } from '../core/uploads/storageErrors';

export interface MultipartLimits {
  /** The largest file part taken (a file of exactly this size is taken). */
  maxFileBytes: number;
  /**
   * What maxFileBytes bounds, as the refusal names it: "per document" (the studio's preview), "per bulk
   * archive" (POST /v1/upload). Default "per file".
   */
  fileLimitName?: string;
  maxFiles: number;
  maxFieldBytes: number;
}

export interface MultipartAccept {
  fileField: string;
  textFields: string[];
  /**
   * Checks a text field the moment it arrives: what it throws refuses the request there, before the
   * files after it are received (a bad upload `config` sent first is answered at once, not after 10 GB).
   */
  onField?: (field: string, value: string) => void;
}

export interface ReceivedForm {
  fields: Record<string, string>;
  files: { path: string; name: string; bytes: number }[];
}

/**
 * Streams a multipart body to disk under `dir` (never into memory). Only the named file and text
 * fields are accepted; a file over the limit stops the upload with 413, and on any failure what was
 * written is removed and the rest of the body is not waited for (the answer closes the connection).
 * A full or read-only disk is reported as such (storageFailure), naming `dataDir` (by default the
 * folder holding the `tmp` folder `dir` is in).
 */
export async function receiveMultipart(
  req: Request,
  dir: string,
  accept: MultipartAccept,
  limits: MultipartLimits,
  dataDir = dataDirOf(dir),
): Promise<ReceivedForm> {
  if (!req.is('multipart/form-data')) {
    throw new InvalidInput(
      'body: send multipart/form-data with a `files` part (a ZIP archive) and, optionally, a `config` part.',
    );
  }
  const form: ReceivedForm = { fields: {}, files: [] };
  const writes: Promise<void>[] = [];
  const sinks: WriteStream[] = [];
  try {
    await mkdir(dir, { recursive: true });
    await new Promise<void>((resolve, reject) => {
      let bb: busboy.Busboy;
      try {
        bb = busboy({
          headers: req.headers,
          limits: {
            // busboy stops a file once it reaches its limit: one byte more lets the limit itself in.
            fileSize: limits.maxFileBytes + 1,
            files: limits.maxFiles,
            fieldSize: limits.maxFieldBytes,
            fields: 20,
            parts: limits.maxFiles + 20,
          },
          defParamCharset: 'utf8',
        });
      } catch (err) {
        return reject(new InvalidInput(`body: ${(err as Error).message}.`));
      }
      let failed: Error | undefined;
      const fail = (err: Error) => {
        failed ??= err;
        req.unpipe(bb);
        req.resume();
        reject(err);
      };
      bb.on('file', (field, stream, info) => {
        // Parts busboy had already buffered when the request failed are not written.
        if (failed) return stream.resume();
        if (field !== accept.fileField) {
          stream.resume();
          return fail(
            new InvalidInput(`${field}: unexpected file field; send files in \`${accept.fileField}\`.`),
          );
        }
        if (!info.filename) {
          stream.resume();
          return fail(
            new InvalidInput(
              `${field}: part ${form.files.length + 1} has no file name; send each file with its name (curl: -F ${field}=@archive.zip).`,
            ),
          );
        }
        const name = safeName(info.filename);
        if (name.length > MAX_FILE_NAME_CHARS) {
          stream.resume();
          return fail(
            new InvalidInput(
              `${field}: part ${form.files.length + 1}'s file name has ${name.length} characters ('${[...name].slice(0, 40).join('')}…'); a name may have at most ${MAX_FILE_NAME_CHARS.toLocaleString('en-US')}.`,
            ),
          );
        }
        // Stored by its number, never its name: a name of 120 CJK characters is 360 bytes, past the
        // file system's 255 (ENAMETOOLONG, a 500), and the name is the part's, not the disk's.
        const path = join(dir, String(form.files.length));
        const entry = { path, name, bytes: 0 };
        form.files.push(entry);
        stream.on('data', (d: Buffer) => (entry.bytes += d.length));
        stream.on('limit', () =>
          fail(
            new PayloadTooLarge(
              `${field}: '${name}' exceeds ${formatBytes(limits.maxFileBytes)}, the limit ${limits.fileLimitName ?? 'per file'}.`,
            ),
          ),
        );
        const sink = createWriteStream(path);
        sinks.push(sink);
        writes.push(pipeline(stream, sink).catch((err: Error) => fail(err)));
      });
      bb.on('field', (field, value, info) => {
        if (failed) return;
        if (field === accept.fileField) {
          // `-F files=archive.zip` (no @): the archive's name sent as text, not the archive.
          return fail(
            new InvalidInput(
              `${field}: expected a file, got a text field; attach the archive as a file (curl: -F ${field}=@archive.zip).`,
            ),
          );
        }
        if (!accept.textFields.includes(field))
          return fail(new InvalidInput(`${field}: unexpected form field.`));
        if (info.valueTruncated)
          return fail(
            new PayloadTooLarge(`${field}: the field exceeds ${formatBytes(limits.maxFieldBytes)}.`, {
              planLimit: false,
            }),
          );
        // The last of two would silently win.
        if (field in form.fields)
          return fail(new InvalidInput(`${field}: given more than once; send it once.`));
        form.fields[field] = value;
        try {
          accept.onField?.(field, value);
        } catch (err) {
          fail(err as Error);
        }
      });
      bb.on('filesLimit', () =>
        fail(
          new PayloadTooLarge(
            `files: at most ${limits.maxFiles} file parts per upload; put the documents in ZIP archives (an archive may hold any number of files).`,
            { planLimit: false },
          ),
        ),
      );
      bb.on('error', (err: Error) =>
        fail(new InvalidInput(`body: malformed multipart data (${err.message}).`)),
      );
      bb.on('close', () => {
        void Promise.all(writes).then(() => (failed ? undefined : resolve()));
      });
      // A cut connection ends the request without `complete`; it may already have been cut while
      // the route was still getting ready (then no 'aborted' event follows).
      const interrupted = () => fail(new InvalidInput('body: the upload was interrupted.'));
      if (req.destroyed && !req.complete) return interrupted();
      req.on('aborted', interrupted);
      req.on('close', () => {
        if (!req.complete) interrupted();
      });
      req.pipe(bb);
    });
    return form;
  } catch (err) {
    // The answer comes before the rest of the body (up to 10 GB per file): Node closes the connection
    // once it is sent, instead of reading what is left to keep the connection alive.
    if (!req.complete && !req.res?.headersSent) req.res?.setHeader('Connection', 'close');
    // Files still being opened would be created again inside the folder being removed (and keep it):
    // every file is closed first.
    for (const sink of sinks) sink.destroy();
    await Promise.allSettled(writes);
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    throw storageFailure(err, dataDir) ?? err;
  }
}

/** The parent of the last `tmp` folder in `dir` (uploads are received in `<dataDir>/tmp/<id>`). */
function dataDirOf(dir: string): string {
  const parts = resolvePath(dir).split(sep);
  const tmp = parts.lastIndexOf('tmp');
  return tmp > 0 ? parts.slice(0, tmp).join(sep) || sep : dirname(resolvePath(dir));
}

/**
 * The longest file name a part may have, as a studio drop's relative paths (options.paths): kept whole,
 * never cut (a cut name was stored under a name nobody sent, once beginning with half an emoji).
 */
export const MAX_FILE_NAME_CHARS = 1000;

/** A received file's name, reduced to a plain file name (no folders, nothing odd). */
function safeName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? 'upload';
  // eslint-disable-next-line no-control-regex
  const cleaned = base.replace(/[\u0000-\u001f<>:"|?*]/g, '_');
  return cleaned && cleaned !== '.' && cleaned !== '..' ? cleaned : 'upload';
}
