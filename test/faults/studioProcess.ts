import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { getLoadablePath } from 'sqlite-vec';
import { FIXTURES, runCli, startServer, stopServer } from '../helpers/e2e';
import { writeZip } from '../helpers/zip';
import type { ChildProcess } from 'node:child_process';

/** A real `kbstudio serve` child on a data directory, with the credentials a test needs. */
export interface ServeChild {
  child: ChildProcess;
  url: string;
  studioToken: string;
  /** /v1 with the API key. */
  v1(path: string, init?: RequestInit): Promise<Response>;
  /** /studio with this launch's token. */
  studio(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
  /** SIGKILL, as a power cut or the OOM killer would. */
  kill(): Promise<void>;
  /**
   * SIGSTOP, resolved once every thread has stopped: whatever the database shows then stays so until
   * `thaw()` or `kill()`, so a test can look, then kill, with no race in between.
   */
  freeze(): Promise<void>;
  thaw(): void;
}

export async function serve(dataDir: string, apiKey: string): Promise<ServeChild> {
  const { child, url, token: studioToken } = await startServer(dataDir);
  const withHeader =
    (name: string, value: string) =>
    (path: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set(name, value);
      return fetch(url + path, { ...init, headers });
    };
  return {
    child,
    url,
    studioToken,
    v1: withHeader('Authorization', `Bearer ${apiKey}`),
    studio: withHeader('X-Studio-Token', studioToken),
    stop: () => stopServer(child),
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    freeze: async () => {
      child.kill('SIGSTOP');
      await waitFor(async () => (processStopped(child.pid!) ? true : undefined), 5_000, 'the server to stop');
    },
    thaw: () => void child.kill('SIGCONT'),
  };
}

/** Whether every thread of the process is stopped (state T in /proc; Linux, where these tests run). */
function processStopped(pid: number): boolean {
  const tasks = readdirSync(`/proc/${pid}/task`);
  return tasks.every((t) => {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
    } catch {
      return true; // A thread that ended since the folder was read.
    }
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
  });
}

export interface Seeded {
  listingId: string;
  apiKey: string;
}

/** A listing and an API key of its creator, made with the CLI as a user would. */
export async function seedStudio(dataDir: string, title = 'Fault KB'): Promise<Seeded> {
  const listing = JSON.parse(
    await runCli(dataDir, [
      'listings',
      'create',
      '--title',
      title,
      '--access-model',
      'one_time',
      '--price',
      '1',
    ]),
  ) as { id: string };
  const key = JSON.parse(await runCli(dataDir, ['keys', 'create', '--label', 'faults'])) as { key: string };
  return { listingId: listing.id, apiKey: key.key };
}

const WORDS =
  'archive ledger orbit harbor lantern quartz meadow cipher falcon glacier summit velvet ember canyon tidal prism beacon willow'.split(
    ' ',
  );

/** Deterministic prose: `paragraphs` paragraphs of about 60 words, different for every `seed`. */
export function prose(seed: number, paragraphs: number): string {
  let x = seed * 7919 + 17;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  const out: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const words = Array.from({ length: 60 }, () => WORDS[next() % WORDS.length]!);
    out.push(`${words.join(' ')} document ${seed} paragraph ${p}.`);
  }
  return out.join('\n\n');
}

/** A folder of `files` Markdown files, and a ZIP of the same files under `<name>/`. */
export async function writeCorpus(
  dir: string,
  name: string,
  files: number,
  paragraphs: number,
): Promise<{ folder: string; zip: string }> {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  const entries: Record<string, string> = {};
  for (let i = 0; i < files; i++) {
    const text = `# ${name} ${i}\n\n${prose(i + name.length * 1000, paragraphs)}\n`;
    const file = `doc-${String(i).padStart(4, '0')}.md`;
    writeFileSync(join(folder, file), text);
    // Entries under a folder of the corpus's name, so corpora never replace each other's documents.
    entries[`${name}/${file}`] = text;
  }
  const zip = await writeZip(join(dir, `${name}.zip`), entries);
  return { folder, zip };
}

export interface KbSnapshot {
  /** documentCount: 1, or a JSON array file's items (each one document, spec §2). */
  documents: { source: string; contentHash: string; chunkCount: number; documentCount: number }[];
  chunks: number;
  /** SHA-256 over every chunk's document, index, text hash and vector. */
  digest: string;
  listing: { documentCount: number; chunkCount: number };
}

function openReadOnly(dataDir: string): Database.Database {
  const db = new Database(join(dataDir, 'kbstudio.db'), { readonly: true, fileMustExist: true });
  db.loadExtension(getLoadablePath());
  return db;
}

/**
 * The push tests' studio: a listing holding every fixture the CLI ingests without a refusal
 * (simple.zip repeats two fixtures under the same names, loremipsum-flat.pdf has no text layer), and
 * the snapshot of its knowledge base.
 */
export async function seedFixtureKnowledgeBase(
  dataDir: string,
): Promise<{ seeded: Seeded; before: KbSnapshot }> {
  const seeded = await seedStudio(dataDir, 'Fixture KB');
  const files = readdirSync(FIXTURES)
    .filter((f) => f !== 'simple.zip' && f !== 'loremipsum-flat.pdf')
    .map((f) => join(FIXTURES, f));
  await runCli(dataDir, ['ingest', '--listing', seeded.listingId, ...files], 120_000);
  return { seeded, before: snapshot(dataDir, seeded.listingId) };
}

/** The knowledge base as stored, read straight from the database file. */
export function snapshot(dataDir: string, listingId: string): KbSnapshot {
  const db = openReadOnly(dataDir);
  try {
    const documents = db
      .prepare(
        `SELECT source, content_hash AS contentHash, chunk_count AS chunkCount, document_count AS documentCount
         FROM documents WHERE listing_id = ? ORDER BY source`,
      )
      .all(listingId) as KbSnapshot['documents'];
    const hash = createHash('sha256');
    let chunks = 0;
    for (const row of db
      .prepare(
        `SELECT d.source, c.chunk_index, c.content_hash FROM chunks c JOIN documents d ON d.id = c.document_id
         WHERE c.listing_id = ? ORDER BY d.source, c.chunk_index`,
      )
      .iterate(listingId) as Iterable<{ source: string; chunk_index: number; content_hash: string }>) {
      hash.update(`${row.source}\0${row.chunk_index}\0${row.content_hash}\n`);
      chunks++;
    }
    const listing = db
      .prepare(`SELECT document_count AS documentCount, chunk_count AS chunkCount FROM listings WHERE id = ?`)
      .get(listingId) as KbSnapshot['listing'];
    return { documents, chunks, digest: hash.digest('hex'), listing };
  } finally {
    db.close();
  }
}

/**
 * An upload's status and progress read from the database: polling GET /v1/upload/{id} would spend the
 * key's 100 requests a minute.
 */
export function storedUpload(
  dataDir: string,
  id: string,
): { status: string; progress: { chunks: number; stage?: string } } {
  const db = openReadOnly(dataDir);
  try {
    const row = db.prepare(`SELECT status, progress FROM uploads WHERE id = ?`).get(id) as
      { status: string; progress: string } | undefined;
    return { status: row?.status ?? 'missing', progress: JSON.parse(row?.progress ?? '{"chunks":0}') };
  } finally {
    db.close();
  }
}

export function integrityCheck(dataDir: string): string {
  const db = openReadOnly(dataDir);
  try {
    return (db.pragma('integrity_check') as { integrity_check: string }[])
      .map((r) => r.integrity_check)
      .join('; ');
  } finally {
    db.close();
  }
}

/** What is left in the scratch folder, besides the live-process markers. */
export function scratchLeft(dataDir: string): string[] {
  try {
    return readdirSync(join(dataDir, 'tmp')).filter((n) => n !== '.owners');
  } catch {
    return [];
  }
}

/** Retrieval results (chunk ids and scores, in order) for a few fixed queries. */
export async function retrievals(server: ServeChild, listingId: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const query of ['archive ledger orbit', 'falcon glacier summit', 'memo', 'Stanley cup']) {
    const res = await server.v1('/v1/retrieve', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ listingId, query, topK: 5 }),
    });
    const body = (await res.json()) as {
      chunks?: { text: string; score: number; sourceMetadata: unknown }[];
    };
    out.push({
      status: res.status,
      chunks: body.chunks?.map((c) => ({ text: c.text, score: c.score, meta: c.sourceMetadata })),
    });
  }
  return out;
}

/** Polls until `check` returns something, or fails after `ms`. */
export async function waitFor<T>(check: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`Timed out after ${ms} ms waiting for ${what}.`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** POST /v1/upload of one ZIP into a listing; resolves with the upload id. */
export async function uploadZip(s: ServeChild, zip: string, listingId: string): Promise<string> {
  const form = new FormData();
  form.append('files', new Blob([readFileSync(zip)]), 'bulk.zip');
  form.append('config', JSON.stringify({ listing_id: listingId, chunking: 'recursive' }));
  const res = await s.v1('/v1/upload', { method: 'POST', body: form });
  if (res.status !== 202) throw new Error(`upload refused: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: { uploadId: string } }).data.uploadId;
}

export async function uploadStatus(s: ServeChild, id: string): Promise<any> {
  return ((await (await s.v1(`/v1/upload/${id}`)).json()) as { data: unknown }).data;
}

/** Waits until the upload has ended, in the database and then as the API reports it, and returns the latter. */
export async function uploadSettled(s: ServeChild, dataDir: string, id: string): Promise<any> {
  // The database first (polling the API this often would meet its rate limit)...
  await waitFor(
    async () => (['completed', 'failed'].includes(storedUpload(dataDir, id).status) ? true : undefined),
    180_000,
    `upload ${id} to finish`,
  );
  // ...then the API, which answers 'processing' until the server has also given back the upload's
  // scratch space, a moment after its commit marked it completed.
  for (let polls = 0; ; polls++) {
    const upload = await uploadStatus(s, id);
    if (upload.status !== 'processing' || polls === 50) return upload;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every upload a data directory received, oldest first, as stored. */
export function storedUploads(dataDir: string): { id: string; status: string; listingId: string }[] {
  const db = openReadOnly(dataDir);
  try {
    return db
      .prepare(`SELECT id, status, listing_id AS listingId FROM uploads ORDER BY created_at, rowid`)
      .all() as { id: string; status: string; listingId: string }[];
  } finally {
    db.close();
  }
}

/** The ids of every listing of a data directory. */
export function listingIds(dataDir: string): string[] {
  const db = openReadOnly(dataDir);
  try {
    return db.prepare(`SELECT id FROM listings ORDER BY id`).pluck().all() as string[];
  } finally {
    db.close();
  }
}

export interface HoldingProxy {
  /** The proxy's `/v1` base URL: it stays the same when the server behind it restarts on another port. */
  url: string;
  /** `POST /v1/upload` requests seen so far. */
  uploads(): number;
  /** The ids of the uploads whose acceptance (202) has been passed back whole to the sender. */
  acceptedUploads(): string[];
  /** Resolves once the held upload's body has been passed on up to the chosen byte. */
  held: Promise<void>;
  /** Sends the next requests to another server (the same one restarted). */
  retarget(target: string): void;
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy in front of a `kbstudio serve`. With `hold`, it passes on only the first
 * `afterBytes` bytes of that upload's body and then stops reading: the sender is caught mid-send, the
 * server mid-receive. A client that goes away cuts its request to the server too, as a dead process's
 * closed socket would; a server that is down cuts the client's connection.
 */
export async function holdingProxy(
  target: string,
  hold?: { upload: number; afterBytes: number },
): Promise<HoldingProxy> {
  let upstream = new URL(target);
  let uploads = 0;
  const accepted: string[] = [];
  let onHeld = () => {};
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  const server: Server = createServer((req, res) => {
    const n = req.method === 'POST' && req.url === '/v1/upload' ? ++uploads : 0;
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        if (n > 0 && answer.statusCode === 202) {
          // Read beside the pipe: the sender knows the id once this body has reached it.
          const pieces: Buffer[] = [];
          answer.on('data', (piece: Buffer) => pieces.push(piece));
          res.on('finish', () => {
            try {
              const body = JSON.parse(Buffer.concat(pieces).toString('utf8')) as {
                data?: { upload_id?: unknown; uploadId?: unknown };
              };
              const id = body.data?.upload_id ?? body.data?.uploadId;
              if (typeof id === 'string') accepted.push(id);
            } catch {
              // Not an upload's envelope: nothing to record.
            }
          });
        }
      },
    );
    forward.on('error', () => req.socket.destroy());
    res.on('close', () => {
      if (!res.writableFinished) forward.destroy();
    });
    if (hold && n === hold.upload) {
      let seen = 0;
      req.on('data', (piece: Buffer) => {
        if (seen >= hold.afterBytes) return;
        const take = piece.subarray(0, hold.afterBytes - seen);
        seen += take.length;
        forward.write(take);
        // The rest of the body is read and dropped rather than paused: a paused socket is not read,
        // so a sender killed while held would go unnoticed and the receiver never see the cut.
        if (seen >= hold.afterBytes) onHeld();
      });
    } else {
      req.pipe(forward);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    uploads: () => uploads,
    acceptedUploads: () => [...accepted],
    held,
    retarget: (next) => (upstream = new URL(next)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The remote listing a data directory remembers for `listingId` on the push target `baseUrl` (normalised). */
export function rememberedRemoteListing(
  dataDir: string,
  baseUrl: string,
  listingId: string,
): string | undefined {
  const db = openReadOnly(dataDir);
  try {
    const value = db
      .prepare(`SELECT value FROM settings WHERE key = ?`)
      .pluck()
      .get(`push.remoteListing.${baseUrl}|${listingId}`) as string | undefined;
    // Stored as `<remote id>\t<fingerprint of the key that pushed>` (PushTargets.rememberRemoteListing).
    return value?.split('\t')[0] || undefined;
  } finally {
    db.close();
  }
}
