import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { StagedChunk } from '../src/core/ingest/store';
import type { DocumentFormat } from '../src/core/ingest/types';
import type { Corpus } from './corpus';
import { buildMixedCorpus, warmUp } from './ingest';
import { measureIngestion, ScratchStudio } from './ingestRun';
import { mb, median, round } from './stats';
import type { Check, Suite, Table } from './suite';
import { chunkTexts, timeOfflineEmbeddings, timeStoreSql, timeTokenCounts } from './workFloor';

const MB = 1024 * 1024;
/** The corpus's size before --scale: the mixed corpus's shares, at a tenth of its default size. */
const DEFAULT_FLOOR_BYTES = 10 * MB;
/** The ingestion target (#9). */
const TARGET_MB_S = 20;
/** The cores of the machine the targets are set for. */
const CORES = 2;

/** What floorParser.mjs times for each format (the library, as the pipeline calls it). */
const LIBRARIES: Record<DocumentFormat, string> = {
  csv: 'csv-parse',
  json: 'JSON.parse',
  markdown: 'markdown-it (tokens)',
  html: 'parse5',
  docx: "mammoth (the DOCX worker's call)",
  pdf: "pdfjs (the PDF worker's options, text of every page)",
};

/** The wall times (ms) of `rounds` passes of one format's parser over its files, on a thread of its own. */
async function timeParser(format: DocumentFormat, paths: string[], rounds: number): Promise<number[]> {
  const worker = new Worker(new URL('./floorParser.mjs', import.meta.url), {
    workerData: { format, paths, rounds },
  });
  try {
    const [answer] = (await once(worker, 'message')) as [{ times?: number[]; error?: string }];
    if (!answer.times) throw new Error(`ingest.floor: ${format}: ${answer.error}`);
    return answer.times;
  } finally {
    // The DOCX and PDF workers' modules keep a message listener: the thread is ended, not left to exit.
    await worker.terminate();
  }
}

/** The metadata keys the store sets on every chunk. */
const STORE_KEYS = ['source', 'format', 'documentId', 'chunkIndex'];

interface CommittedRow {
  doc: string;
  source: string;
  format: string;
  docHash: string;
  bytes: number;
  id: number;
  text: string;
  token_count: number;
  content_hash: string;
  metadata: string;
}

interface StoredDocument {
  source: string;
  format: string;
  contentHash: string;
  bytes: number;
  chunks: StagedChunk[];
}

/** What the pipeline committed for the corpus, read back to be committed again. */
function committedDocuments(studio: ScratchStudio, listingId: string) {
  const { db } = studio.services;
  const index = db
    .prepare(`SELECT model, dimensions FROM vector_indexes WHERE listing_id = ?`)
    .get(listingId) as { model: string; dimensions: number };
  const vectors = new Map(
    (
      db
        .prepare(
          `SELECT chunk_id, vector FROM embeddings e JOIN chunks c ON c.id = e.chunk_id WHERE listing_id = ?`,
        )
        .all(listingId) as { chunk_id: number; vector: Buffer }[]
    ).map((r) => [r.chunk_id, r.vector]),
  );
  const documents = new Map<string, StoredDocument>();
  const rows = db
    .prepare(
      `SELECT d.id AS doc, d.source, d.format, d.content_hash AS docHash, d.bytes, c.id, c.text, c.token_count,
        c.content_hash, c.metadata
      FROM documents d JOIN chunks c ON c.document_id = d.id WHERE d.listing_id = ? ORDER BY c.id`,
    )
    .iterate(listingId) as Iterable<CommittedRow>;
  for (const row of rows) {
    let doc = documents.get(row.doc);
    if (!doc) {
      doc = {
        source: row.source,
        format: row.format,
        contentHash: row.docHash,
        bytes: row.bytes,
        chunks: [],
      };
      documents.set(row.doc, doc);
    }
    // The keys the store sets itself are taken out, as they were when the pipeline staged the chunk.
    const metadata = JSON.parse(row.metadata) as Record<string, unknown>;
    for (const key of STORE_KEYS) delete metadata[key];
    const blob = vectors.get(row.id);
    doc.chunks.push({
      text: row.text,
      tokenCount: row.token_count,
      contentHash: row.content_hash,
      metadata,
      // A zero vector has no stored blob (it stays out of the vector index).
      vector: blob
        ? new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength))
        : new Float32Array(index.dimensions),
    });
  }
  return { model: index.model, dimensions: index.dimensions, documents: [...documents.values()] };
}

type Committed = ReturnType<typeof committedDocuments>;

/** Stages the committed documents again in a fresh studio and times the commit alone (wall ms). */
async function timeCommit(committed: Committed, workDir: string): Promise<{ ms: number; chunks: number }> {
  const studio = new ScratchStudio();
  const store = studio.services.knowledgeBase;
  const staging = store.createStaging(workDir);
  try {
    for (const doc of committed.documents) {
      const writer = staging.open({
        source: doc.source,
        format: doc.format as DocumentFormat,
        contentHash: doc.contentHash,
        bytes: doc.bytes,
        metadata: {},
      });
      for (let at = 0; at < doc.chunks.length; at += 256) writer.add(doc.chunks.slice(at, at + 256));
      writer.finish();
    }
    const listingId = studio.newListing();
    const started = performance.now();
    const result = await store.commit(listingId, staging, {
      model: committed.model,
      dimensions: committed.dimensions,
      maxChunks: Number.MAX_SAFE_INTEGER,
      maxKnowledgeBaseBytes: null,
    });
    return { ms: performance.now() - started, chunks: result.chunkCount };
  } finally {
    staging.dispose();
    await studio.close();
  }
}

export const ingestFloorSuite: Suite = {
  name: 'ingest.floor',
  description:
    "the least the mixed corpus's ingestion costs: its parsers, the store's SQL, a token count and an embedding per chunk, each alone",
  async run(context) {
    const bytes =
      context.options.mixedMb !== undefined
        ? Math.round(context.options.mixedMb * MB)
        : Math.round(DEFAULT_FLOOR_BYTES * context.options.scale);
    await warmUp(context);
    const corpus = await buildMixedCorpus(context, 'ingest.floor', bytes);
    const rounds = Math.max(3, context.options.repeat);

    context.log('  floor: the pipeline once, for the rows its commit writes');
    const ingested = new ScratchStudio();
    let committed: Committed;
    let pipeline: Awaited<ReturnType<typeof measureIngestion>>;
    try {
      pipeline = await measureIngestion(ingested, [{ path: corpus.dir, name: 'corpus' }]);
      const listingId = ingested.services.db.prepare(`SELECT id FROM listings`).pluck().get() as string;
      committed = committedDocuments(ingested, listingId);
    } finally {
      await ingested.close();
    }

    // On this thread, while nothing else runs.
    context.log('  floor: token counts and offline embeddings of every chunk once');
    const texts = chunkTexts(committed);
    const tokens = await timeTokenCounts(texts, rounds);
    const embeddings = await timeOfflineEmbeddings(texts, rounds);
    context.log(`  floor: each parser on its files, ${rounds} rounds`);
    const parsing = await timeParsers(corpus, rounds);
    context.log(`  floor: the commit of ${pipeline.chunks} chunks, ${rounds} rounds`);
    const commits: { ms: number; chunks: number }[] = [];
    for (let r = 0; r < rounds; r++)
      commits.push(await timeCommit(committed, context.tempDir('kbs-bench-floor-staging-')));

    context.log(`  floor: the store's SQL without staging, ${rounds} rounds each schema`);
    const storeSql = {
      design: [] as { ms: number; chunks: number }[],
      studio: [] as { ms: number; chunks: number }[],
    };
    for (let r = 0; r < rounds; r++) {
      storeSql.design.push(await timeStoreSql(committed, 'design'));
      storeSql.studio.push(await timeStoreSql(committed, 'studio'));
    }

    const parseMs = parsing.reduce((sum, p) => sum + p.ms, 0);
    const storeMs = median(commits.map((c) => c.ms));
    const designSqlMs = median(storeSql.design.map((c) => c.ms));
    const studioSqlMs = median(storeSql.studio.map((c) => c.ms));
    // What no pipeline can skip: the parsers, SQLite's work for what DESIGN.md stores, one cl100k count
    // and one offline embedding per chunk. Everything of the pipeline's own comes on top.
    const unavoidableMs = parseMs + designSqlMs + tokens.ms + embeddings.ms;
    const corpusMb = corpus.bytes / MB;
    const bound = (ms: number) => round((corpusMb * 1000) / ms, 1);
    const bounds = {
      cores: CORES,
      targetMbPerS: TARGET_MB_S,
      bothCoresMbPerS: bound((parseMs + storeMs) / CORES),
      commitAloneMbPerS: bound(storeMs),
      unavoidableMs: round(unavoidableMs, 1),
      unavoidableBothCoresMbPerS: bound(unavoidableMs / CORES),
      thirdPartyBothCoresMbPerS: bound((parseMs + designSqlMs) / CORES),
      pipelineMbPerS: bound(pipeline.ms),
    };
    const parsersTable: Table = {
      title: `The least the mixed corpus costs (${mb(corpus.bytes)} MB, one thread each, median of ${rounds})`,
      columns: ['part', 'files', 'MB', 'ms', 'MB/s'],
      rows: [
        ...parsing.map((p) => [
          p.label,
          p.files,
          mb(p.bytes, 2),
          Math.round(p.ms),
          round((p.bytes / MB) * (1000 / p.ms), 1),
        ]),
        ['all parsers', corpus.files.length, mb(corpus.bytes, 2), Math.round(parseMs), bound(parseMs)],
        [
          `the commit: ${pipeline.chunks} chunks into SQLite (wall ms)`,
          '',
          '',
          Math.round(storeMs),
          bound(storeMs),
        ],
        [
          "the store's SQL without staging: chunk rows, FTS5, vec0 (DESIGN.md)",
          '',
          '',
          Math.round(designSqlMs),
          bound(designSqlMs),
        ],
        [
          "the same with float blobs and sign codes (the studio's schema)",
          '',
          '',
          Math.round(studioSqlMs),
          bound(studioSqlMs),
        ],
        [
          `cl100k counts of every chunk once (${tokens.tokens} tokens)`,
          '',
          '',
          Math.round(tokens.ms),
          bound(tokens.ms),
        ],
        ['offline embeddings of every chunk once', '', '', Math.round(embeddings.ms), bound(embeddings.ms)],
      ],
    };
    const boundsTable: Table = {
      title: 'What that allows',
      columns: ['if nothing else ran', 'MB/s'],
      rows: [
        [`the parsers and the commit, shared by ${CORES} cores`, bounds.bothCoresMbPerS],
        ['the commit alone (one writer, one thread)', bounds.commitAloneMbPerS],
        [`the parsers and DESIGN.md's SQL, shared by ${CORES} cores`, bounds.thirdPartyBothCoresMbPerS],
        [
          `those, token counts and embeddings (${Math.round(unavoidableMs)} ms), shared by ${CORES} cores`,
          bounds.unavoidableBothCoresMbPerS,
        ],
        ['the whole pipeline, measured (this corpus, once)', bounds.pipelineMbPerS],
        ['target (#9)', TARGET_MB_S],
      ],
    };
    const checks: Check[] = [
      {
        name: 'floor: the pipeline ingested every file',
        ok: pipeline.rejected.length === 0 && pipeline.files === corpus.files.length,
        detail: `${pipeline.files} of ${corpus.files.length} files, ${pipeline.rejected.length} rejected`,
      },
      {
        name: 'floor: each timed commit wrote every chunk',
        ok: commits.every((c) => c.chunks === pipeline.chunks),
        detail: commits.map((c) => c.chunks).join(', ') + ` of ${pipeline.chunks}`,
      },
      {
        name: 'floor: each timed store SQL wrote every chunk',
        ok: [...storeSql.design, ...storeSql.studio].every((c) => c.chunks === pipeline.chunks),
        detail:
          [...storeSql.design, ...storeSql.studio].map((c) => c.chunks).join(', ') + ` of ${pipeline.chunks}`,
      },
    ];
    return {
      figures: {
        bytes: corpus.bytes,
        chunks: pipeline.chunks,
        parsers: parsing,
        commitMs: storeMs,
        commitRuns: commits.map((c) => round(c.ms, 1)),
        storeSqlMs: { design: round(designSqlMs, 1), studio: round(studioSqlMs, 1) },
        storeSqlRuns: {
          design: storeSql.design.map((c) => round(c.ms, 1)),
          studio: storeSql.studio.map((c) => round(c.ms, 1)),
        },
        tokenCountMs: round(tokens.ms, 1),
        tokens: tokens.tokens,
        embeddingMs: round(embeddings.ms, 1),
        pipelineMs: round(pipeline.ms, 1),
        bounds,
      },
      tables: [parsersTable, boundsTable],
      notes: [
        "A floor, not a forecast: each parser is timed alone on its format's files (on a thread of its own, wall time, nothing else running), and the commit alone is the store's SQL for the rows the pipeline wrote (full text, chunk rows, float vectors, sqlite-vec, sign codes), staged again and committed into a fresh database. Reading files, chunking, embedding, token counts, hashing and garbage collection come on top.",
        'The commit is one SQLite transaction, so it runs on one core whatever else is free.',
        "The store's SQL without staging is the same rows inserted straight from memory into a fresh studio database (rows, metadata and sign codes made before the clock starts): DESIGN.md's chunk rows, FTS5 and vec0, then also the float blobs and sign codes dense search reads. The token counts and embeddings are of every chunk's text once, warm, on this thread. The last bound sums what no pipeline can skip: the parsers, DESIGN.md's SQL, one count and one embedding per chunk; reading, hashing, sections, packing, staging, messages and garbage collection come on top.",
        "For a target in MB/s, the bound to compare is the one for this machine's cores: a pipeline can only be slower.",
      ],
      checks,
    };
  },
};

async function timeParsers(corpus: Corpus, rounds: number) {
  const byFormat = new Map<DocumentFormat, Corpus['files']>();
  for (const file of corpus.files) {
    if (file.format === 'jsonl') continue;
    const list = byFormat.get(file.format) ?? [];
    list.push(file);
    byFormat.set(file.format, list);
  }
  const results: { format: DocumentFormat; label: string; files: number; bytes: number; ms: number }[] = [];
  for (const [format, files] of byFormat) {
    const times = await timeParser(
      format,
      files.map((f) => f.path),
      rounds,
    );
    results.push({
      format,
      label: `${format}: ${LIBRARIES[format]}`,
      files: files.length,
      bytes: files.reduce((sum, f) => sum + f.bytes, 0),
      ms: round(median(times), 1),
    });
  }
  return results;
}
