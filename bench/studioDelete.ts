import { hash } from 'node:crypto';
import { copyFileSync, cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BULK_LIMITS } from '../src/core/ingest/limits';
import type { StagedChunk } from '../src/core/ingest/store';
import { DATABASE_FILE, openDatabase, type Db } from '../src/db/open';
import { deleteDocumentRows, deleteDraftListingRows } from '../src/db/repositories/deleteRows.mjs';
import { openServices } from '../src/db/services';
import { ClusteredVectors, MODEL_OF_DIMENSIONS } from './denseData';
import { readMemoryStatus } from './rss';
import { startServerProcess } from './serverProcess';
import { median, round } from './stats';
import { untilIdle } from './threadCpu';
import type { BenchContext, Suite } from './suite';

/** Chunks of the knowledge base at --scale 1; --scale 5 gives the spec's 500,000. */
const CHUNKS = 100_000;
/** The share of them in the document deleted: an import that is most of its knowledge base. */
const LARGE_SHARE = 0.9;

interface Built {
  dataDir: string;
  listingId: string;
  largeId: string;
  chunks: number;
  large: number;
}

/**
 * A draft listing of `chunks` chunks with vectors (first.jsonl 5%, large.jsonl 90%, last.jsonl 5%), texts of
 * the fixtures' sentences, committed through the store as a JSONL import does. Closed when it returns.
 */
async function build(context: BenchContext, chunks: number, dimensions: number): Promise<Built> {
  const dataDir = context.tempDir('kbs-bench-delete-');
  const services = openServices(dataDir);
  const rng = context.rng('studio.delete');
  const { sentences } = await context.textPool();
  const vectors = new ClusteredVectors(rng, dimensions, 20);
  const large = Math.round(chunks * LARGE_SHARE);
  const side = Math.floor((chunks - large) / 2);
  const documents = [
    ['first.jsonl', side],
    ['large.jsonl', large],
    ['last.jsonl', chunks - large - side],
  ] as const;
  try {
    const wallet = services.wallets.defaultWallet().address;
    const listingId = services.listings.create(
      { title: 'Deletion benchmark', accessModel: 'one_time', price: 0 },
      wallet,
    ).id;
    const staging = services.knowledgeBase.createStaging(join(dataDir, 'tmp'));
    try {
      let n = 0;
      for (const [source, size] of documents) {
        const writer = staging.open({
          source,
          format: 'jsonl',
          contentHash: hash('sha256', source, 'hex'),
          bytes: 0,
          metadata: {},
        });
        for (let at = 0; at < size; at += 1_000) {
          const batch: StagedChunk[] = Array.from({ length: Math.min(1_000, size - at) }, () => {
            const text = [0, 1, 2].map(() => sentences[rng.int(sentences.length)]!).join(' ');
            n++;
            return {
              text,
              tokenCount: text.split(' ').length,
              contentHash: `c${n}`,
              metadata: {},
              vector: vectors.next(),
            };
          });
          writer.add(batch);
        }
        writer.finish();
      }
      await services.knowledgeBase.commit(listingId, staging, {
        model: MODEL_OF_DIMENSIONS[dimensions] ?? `bench-${dimensions}`,
        dimensions,
        maxChunks: BULK_LIMITS.maxChunks,
        maxKnowledgeBaseBytes: null,
      });
    } finally {
      staging.dispose();
    }
    const largeId = services.db
      .prepare(`SELECT id FROM documents WHERE source = 'large.jsonl'`)
      .pluck()
      .get() as string;
    // The commit's worker checkpoints after it answers: at 500,000 chunks × 1,024 that outlasted
    // settle()'s 10 s of tries ("the database stayed busy after the build").
    await services.knowledgeBase.settled();
    return { dataDir, listingId, largeId, chunks, large };
  } finally {
    services.close();
  }
}

/**
 * Everything in the database file, its WAL emptied: the commit's worker may still be closing its
 * connection after the services closed, and a copy taken during its checkpoint would not be whole.
 */
async function settle(built: Built): Promise<void> {
  const db = openDatabase(join(built.dataDir, DATABASE_FILE));
  try {
    for (let tries = 0; ; tries++) {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      if (result?.busy === 0) return;
      if (tries === 100) throw new Error('the database stayed busy after the build');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    db.close();
  }
}

/** A copy of the built database (settled: its WAL empty) to delete from, opened as the store opens it. */
function copyOf(built: Built): { db: Db; remove(): void } {
  const file = join(built.dataDir, DATABASE_FILE);
  const copy = join(built.dataDir, 'copy.db');
  const remove = () => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${copy}${suffix}`, { force: true });
  };
  remove();
  copyFileSync(file, copy);
  return { db: openDatabase(copy), remove };
}

interface Outcome {
  ms: number;
  /** Chunks, vectors and full-text matches of "the" left (FTS5's own check ran before). */
  left: { chunks: number; vectors: number; fullText: number };
}

function measure(built: Built, remove: (db: Db) => void): Outcome {
  const copy = copyOf(built);
  try {
    const db = copy.db;
    const started = performance.now();
    db.transaction(() => remove(db))();
    const ms = performance.now() - started;
    // Throws on a full-text index that does not match the chunks table.
    db.exec(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`);
    const count = (sql: string) => db.prepare(sql).pluck().get() as number;
    const table = db.prepare(`SELECT table_name FROM vector_indexes`).pluck().get() as string | undefined;
    return {
      ms,
      left: {
        chunks: count(`SELECT count(*) FROM chunks`),
        vectors: table ? count(`SELECT count(*) FROM ${table}`) : 0,
        fullText: count(`SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'the'`),
      },
    };
  } finally {
    copy.db.close();
    copy.remove();
  }
}

/** Full-text queries a creator might try in the playground: words of the fixtures' sentences. */
const LEXICAL_QUERIES = ['history of the city', 'river', 'music album', 'football club player', 'population'];

interface ServerMemory {
  /** The server's resident memory (VmRSS), MB: idle with the postings read, then idle after the deletion. */
  beforeMb: number;
  afterMb: number;
  deleteMs: number;
}

/**
 * The large document deleted from the studio (DELETE /studio/documents/:id) of `kbstudio serve` on a
 * copy of the data directory, after lexical queries over /v1 (the server reads the full-text postings
 * of 20,000 chunks or more at its warm-up and first query). Its resident memory is read idle before the
 * deletion, and idle after it, once queries have had the postings of what stays read: the postings
 * let go of must not stay resident (docs/performance.md, "Memory after a large deletion").
 */
async function serverMemory(context: BenchContext, built: Built): Promise<ServerMemory> {
  const dir = context.tempDir('kbs-bench-delete-server-');
  cpSync(built.dataDir, dir, { recursive: true });
  const server = await startServerProcess(dir);
  const deadline = () => performance.now() + 120_000;
  const residentMb = () => {
    const status = readMemoryStatus(server.pid);
    if (!status) throw new Error(`the server's memory cannot be read (/proc/${server.pid}/status)`);
    return round(status.rss / 2 ** 20, 0);
  };
  const ask = async () => {
    for (const query of LEXICAL_QUERIES) {
      const res = await fetch(`${server.url}/v1/retrieve`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${server.apiKey}` },
        body: JSON.stringify({ listingId: built.listingId, query, mode: 'lexical', topK: 5 }),
      });
      if (res.status !== 200)
        throw new Error(`POST /v1/retrieve answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  try {
    // Idle: the warm-up (search codes, postings) done; then queries, as a creator would try.
    await untilIdle(server.pid, deadline());
    await ask();
    await untilIdle(server.pid, deadline());
    const beforeMb = residentMb();
    const started = performance.now();
    const res = await fetch(`${server.url}/studio/documents/${built.largeId}`, {
      method: 'DELETE',
      headers: { 'X-Studio-Token': server.studioToken },
    });
    if (res.status !== 200)
      throw new Error(`DELETE /studio/documents answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
    const deleteMs = performance.now() - started;
    // The first query sees the change and starts the read of what stays; the second is answered from it.
    await ask();
    await untilIdle(server.pid, deadline());
    await ask();
    await untilIdle(server.pid, deadline());
    return { beforeMb, afterMb: residentMb(), deleteMs: round(deleteMs, 0) };
  } finally {
    await server.stop();
  }
}

/**
 * Deleting most of a knowledge base, in process, on copies of one database: the document that holds 90% of
 * it, and the draft listing whole, each with its indexes made again from what stays (deleteRows.mjs)
 * against row by row (`rebuildIndexes: false`) in the same run.
 */
export const studioDeleteSuite: Suite = {
  name: 'studio.delete',
  description:
    'Deleting a document that holds 90% of a knowledge base (100k chunks × 1024; --scale 5 → 500k), and its draft listing: indexes made again from what stays, against row by row',
  async run(context) {
    const chunks = Math.max(1_000, Math.round(CHUNKS * context.options.scale));
    const dimensions = context.options.smoke ? 64 : 1024;
    context.log(`studio.delete: building ${chunks} chunks × ${dimensions}`);
    const built = await build(context, chunks, dimensions);
    await settle(built);
    const now = new Date().toISOString();
    const cases = [
      {
        name: `the ${built.large.toLocaleString('en-US')}-chunk document`,
        remove: (rebuildIndexes: boolean) => (db: Db) =>
          void deleteDocumentRows(db, built.largeId, now, { rebuildIndexes }),
      },
      {
        name: `the draft listing (${chunks.toLocaleString('en-US')} chunks)`,
        remove: (rebuildIndexes: boolean) => (db: Db) =>
          void deleteDraftListingRows(db, built.listingId, { rebuildIndexes }),
      },
    ];
    const rows: (string | number)[][] = [];
    const figures: Record<string, unknown> = { chunks, dimensions, large: built.large };
    const checks = [];
    for (const { name, remove } of cases) {
      const runs = { rowByRow: [] as Outcome[], rebuilt: [] as Outcome[] };
      for (let r = 0; r < context.options.repeat; r++) {
        context.log(`studio.delete: ${name}, run ${r + 1}`);
        runs.rowByRow.push(measure(built, remove(false)));
        runs.rebuilt.push(measure(built, remove(true)));
      }
      const rowByRow = median(runs.rowByRow.map((o) => o.ms));
      const rebuilt = median(runs.rebuilt.map((o) => o.ms));
      rows.push([name, round(rowByRow / 1000, 2), round(rebuilt / 1000, 2), round(rowByRow / rebuilt, 1)]);
      figures[name] = { rowByRowMs: round(rowByRow, 1), rebuiltMs: round(rebuilt, 1) };
      const same = JSON.stringify(runs.rowByRow[0]!.left) === JSON.stringify(runs.rebuilt[0]!.left);
      checks.push({
        name: `${name}: both ways leave the same rows, full text checked by FTS5`,
        ok: same,
        detail: `row by row ${JSON.stringify(runs.rowByRow[0]!.left)}, rebuilt ${JSON.stringify(runs.rebuilt[0]!.left)}`,
      });
    }
    context.log('studio.delete: the large document deleted from a server, its memory read');
    const memory = await serverMemory(context, built);
    figures.serverMemory = memory;
    return {
      figures,
      tables: [
        {
          title: `Deleting most of a knowledge base (${chunks.toLocaleString('en-US')} chunks × ${dimensions}; median of ${context.options.repeat}, s)`,
          columns: ['deletion', 'row by row', 'indexes made again', 'ratio'],
          rows,
        },
        {
          title: 'The server around the deletion (kbstudio serve, its full-text postings read)',
          columns: ['RSS before MB', 'RSS after MB', 'change MB', 'DELETE s'],
          rows: [
            [
              memory.beforeMb,
              memory.afterMb,
              memory.afterMb - memory.beforeMb,
              round(memory.deleteMs / 1000, 2),
            ],
          ],
        },
      ],
      notes: [
        'In process, each run on a fresh copy of the same database, the deletion and its commit timed in one transaction; FTS5 integrity-check afterwards. "Row by row": every vec0 row and full-text row deleted one at a time, as before deleteRows.mjs made the indexes again from what stays.',
        `The server: \`kbstudio serve\` on a copy of the data directory; ${LEXICAL_QUERIES.length} lexical queries over /v1; its resident memory (VmRSS) read once it is idle (under 50 ms of CPU in a second), before the deletion through the studio API and after it, once queries have had the full-text postings of what stays read (from 20,000 chunks; fewer, and FTS5 answers). "DELETE s" is the request, the deletion's transaction on a worker included.`,
      ],
      checks,
    };
  },
};
