import { hash } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder } from '../src/core/embed/embedder';
import { OFFLINE_MODEL, offlineGloveEmbedder } from '../src/core/embed/offlineGlove';
import { BULK_LIMITS } from '../src/core/ingest/limits';
import { readCorpus, readQrels, readQueries, type BeirQuery } from '../src/core/retrieve/eval/beir';
import { writeCorpusAsJson } from '../src/core/retrieve/eval/corpusFiles';
import { corpusIdsOf, evaluate } from '../src/core/retrieve/eval/evaluate';
import { mean, ndcgAt } from '../src/core/retrieve/eval/metrics';
import { rankChunks } from '../src/core/retrieve/hybrid';
import { DENSE_WEIGHT, lexicalPhrases } from '../src/core/retrieve/scoring';
import { DEFAULT_LEXICAL_TUNING } from '../src/db/lexicalIndexCache';
import { DATABASE_FILE, LEXICAL_POSTINGS_FILE } from '../src/db/open';
import { SqliteSearchRepository } from '../src/db/repositories/search';
import { openServices, type StudioServices } from '../src/db/services';
import type { RetrievalMode } from '../src/shared/retrieval';
import type { Rng } from './prng';
import { checkpointed } from './checkpoint';
import { startServerProcess, type ServerProcess } from './serverProcess';
import { median, round } from './stats';
import type { BenchContext, Check, Suite, Table } from './suite';

export const DBPEDIA = new URL('../../shared/eval/dbpedia-5k', import.meta.url).pathname;
const MODES: RetrievalMode[] = ['lexical', 'dense', 'hybrid'];
/** The bound for the default ranking on dbpedia-5k. */
const NDCG_FLOOR = 0.38;
const SYNTHETIC_CHUNKS = 100_000;
/** /v1 allows 100 requests a minute per API key; the latency runs rotate over this many keys. */
const API_KEYS = 8;
const TOP_K = 10;

export interface KnowledgeBase {
  services: StudioServices;
  dataDir: string;
  listingId: string;
}

/** A fresh data directory with one listing of the default wallet, as fast to query as its creator allows. */
export function newKnowledgeBase(context: BenchContext, prefix: string): KnowledgeBase {
  const dataDir = context.tempDir(prefix);
  const services = openServices(dataDir);
  const wallet = services.wallets.defaultWallet().address;
  const listingId = services.listings.create(
    { title: 'Retrieval benchmark', accessModel: 'one_time', price: 0, retrievalRateLimit: 100_000 },
    wallet,
  ).id;
  return { services, dataDir, listingId };
}

/** dbpedia-5k through the real pipeline, as `kbstudio eval` ingests it. */
async function ingestDbpedia(kb: KnowledgeBase): Promise<number> {
  const started = performance.now();
  const { files } = await writeCorpusAsJson(readCorpus(DBPEDIA), join(kb.dataDir, 'tmp', 'corpus'));
  await kb.services.ingestion.run({
    listingId: kb.listingId,
    inputs: files.map((path) => ({ path })),
    atomic: true,
    limits: BULK_LIMITS,
  });
  return performance.now() - started;
}

export const retrieveQualitySuite: Suite = {
  name: 'retrieve.quality',
  description:
    'nDCG@10, recall and MRR on dbpedia-5k (BEIR) for lexical, dense and hybrid ranking; dense-weight sweep',
  async run(context) {
    const kb = newKnowledgeBase(context, 'kbs-bench-quality-');
    try {
      context.log('retrieve.quality: ingesting dbpedia-5k');
      const ingestMs = await ingestDbpedia(kb);
      const [queries, qrels] = await Promise.all([readQueries(DBPEDIA), readQrels(DBPEDIA)]);
      const byMode: Record<string, Record<string, number>> = {};
      for (const mode of MODES) {
        const report = await evaluate({
          queries,
          qrels,
          k: 10,
          search: async (text) => {
            const { chunks, latencyMs } = await kb.services.retrieval.deepSearch(kb.listingId, text, {
              mode,
            });
            return { ids: corpusIdsOf(chunks), latencyMs };
          },
        });
        byMode[mode] = {
          ndcg10: round(report.ndcg, 4),
          recall10: round(report.recallAtK, 4),
          recall100: round(report.recallAt100, 4),
          mrr: round(report.mrr, 4),
          p50LatencyMs: round(report.p50LatencyMs, 1),
          queries: report.queries,
        };
      }
      context.log('retrieve.quality: sweeping the dense weight');
      const sweep = await denseWeightSweep(kb, queries, qrels);
      const hybrid = byMode.hybrid!.ndcg10!;
      const checks: Check[] = [
        {
          name: `hybrid nDCG@10 >= ${NDCG_FLOOR}`,
          ok: hybrid >= NDCG_FLOOR,
          detail: `${hybrid} (lexical ${byMode.lexical!.ndcg10}, dense ${byMode.dense!.ndcg10})`,
        },
      ];
      const tables: Table[] = [
        {
          title: `dbpedia-5k, ${byMode.hybrid!.queries} judged queries (in process, depth 100)`,
          columns: ['mode', 'nDCG@10', 'recall@10', 'recall@100', 'MRR', 'p50 ms'],
          rows: MODES.map((m) => {
            const f = byMode[m]!;
            return [m, f.ndcg10!, f.recall10!, f.recall100!, f.mrr!, f.p50LatencyMs!];
          }),
        },
        {
          title: `hybrid nDCG@10 by dense weight (shipped: ${DENSE_WEIGHT})`,
          columns: sweep.map((s) => String(s.denseWeight)),
          rows: [sweep.map((s) => s.ndcg10)],
        },
      ];
      return {
        figures: {
          ingestMs: Math.round(ingestMs),
          modes: byMode,
          denseWeightSweep: sweep,
          denseWeight: DENSE_WEIGHT,
        },
        tables,
        checks,
        notes: [
          'Scores are query-independent (docs/retrieval.md): BM25 over the share of the query weight, cosine clamped at 0, fused convexly.',
          'With 40 judged queries, differences of about ±0.01 nDCG are within noise.',
        ],
      };
    } finally {
      kb.services.close();
    }
  },
};

/** nDCG@10 of the hybrid ranking for dense weights 0..1, each query embedded once. */
async function denseWeightSweep(
  kb: KnowledgeBase,
  queries: BeirQuery[],
  qrels: Map<string, Map<string, number>>,
): Promise<{ denseWeight: number; ndcg10: number }[]> {
  const index = new SqliteSearchRepository(kb.services.db);
  const listing = kb.services.listings.get(kb.listingId, 'studio');
  const embedder = kb.services.embedderFor(listing.embeddingModel);
  const judged = queries.filter((q) => qrels.has(q.id));
  const vectors = await embedder.embed(
    judged.map((q) => q.text),
    'query',
  );
  const corpusIdOf = new Map(
    (
      kb.services.db.prepare('SELECT id, metadata FROM chunks').all() as { id: number; metadata: string }[]
    ).map((r) => [r.id, (JSON.parse(r.metadata) as { corpusId: string }).corpusId]),
  );
  const weights = Array.from({ length: 11 }, (_, i) => i / 10);
  return weights.map((denseWeight) => {
    const scores = judged.map((q, i) => {
      const ranked = rankChunks(index, {
        listingId: listing.id,
        model: listing.embeddingModel,
        mode: 'hybrid',
        phrases: lexicalPhrases(q.text),
        vector: vectors[i]!,
        filters: [],
        topK: 10,
        minScore: 0,
        denseWeight,
      });
      return ndcgAt([...new Set(ranked.map((r) => corpusIdOf.get(r.id)!))], qrels.get(q.id)!, 10);
    });
    return { denseWeight, ndcg10: round(mean(scores), 4) };
  });
}

export const retrieveLatencySuite: Suite = {
  name: 'retrieve.latency',
  description:
    'POST /v1/retrieve over HTTP (a `kbstudio serve` child process) at 5k and 100k chunks; index size',
  async run(context) {
    const queries = (await readQueries(DBPEDIA)).map((q) => q.text);
    const synthetic = Math.max(1_000, Math.round(SYNTHETIC_CHUNKS * context.options.scale));
    const sizes: { label: string; build: (kb: KnowledgeBase) => Promise<number> }[] = [
      { label: 'dbpedia-5k', build: (kb) => ingestDbpedia(kb) },
      {
        label: `synthetic-${synthetic}`,
        build: (kb) => synthesize(kb, synthetic, context.rng('retrieve.synthetic')),
      },
    ];
    const results = [];
    const restarts: Restart[] = [];
    for (const size of sizes) {
      context.log(`retrieve.latency: building ${size.label}`);
      const kb = newKnowledgeBase(context, 'kbs-bench-latency-');
      let keys: string[];
      let index: IndexSize;
      let buildMs: number;
      try {
        buildMs = await size.build(kb);
        const wallet = kb.services.wallets.defaultWallet().address;
        keys = Array.from({ length: API_KEYS }, () => kb.services.apiKeys.create(wallet, 'bench').key);
        index = await indexSize(kb);
      } finally {
        kb.services.close();
      }
      const server = await startServerProcess(kb.dataDir);
      try {
        context.log(`retrieve.latency: querying ${size.label} over HTTP`);
        const modes = await measureHttp(server, kb.listingId, keys, queries, context.options.repeat);
        results.push({ label: size.label, buildMs: Math.round(buildMs), index, modes });
      } catch (err) {
        throw new Error(`${(err as Error).message}\nserver stderr: ${server.stderr().trim() || '(empty)'}`);
      } finally {
        await server.stop();
      }
      if (index.chunks >= DEFAULT_LEXICAL_TUNING.minRows) {
        context.log(`retrieve.latency: ${size.label} started again, without and with the saved postings`);
        // Without: as before the postings were saved (FTS5 answers until the whole index is read). The
        // server started then reads and saves them, and the next one starts from that file.
        rmSync(join(kb.dataDir, LEXICAL_POSTINGS_FILE), { force: true });
        for (const saved of [false, true]) {
          restarts.push({ label: size.label, saved, ...(await firstQueriesAfterStart(kb, keys, queries)) });
        }
      }
    }
    return {
      figures: { topK: TOP_K, sizes: results, restarts },
      tables: [
        {
          title: `POST /v1/retrieve, topK ${TOP_K}, ${queries.length} dbpedia queries in sequence (client-side ms)`,
          columns: [
            'knowledge base',
            'chunks',
            'mode',
            'median ms',
            'p95 ms',
            'server median ms',
            'requests',
          ],
          rows: results.flatMap((r) =>
            r.modes.map((m) => [
              r.label,
              r.index.chunks,
              m.mode,
              m.medianMs,
              m.p95Ms,
              m.serverMedianMs,
              m.requests,
            ]),
          ),
        },
        {
          title: 'Index size (database file after a WAL checkpoint)',
          columns: [
            'knowledge base',
            'chunks',
            'file MB',
            'bytes/chunk',
            'chunks MB',
            'FTS5 MB',
            'vectors MB',
            'cache MB',
          ],
          rows: results.map((r) => [
            r.label,
            r.index.chunks,
            round(r.index.fileBytes / 2 ** 20, 1),
            r.index.bytesPerChunk,
            round(r.index.parts.chunks / 2 ** 20, 1),
            round(r.index.parts.fts / 2 ** 20, 1),
            round(r.index.parts.vectors / 2 ** 20, 1),
            round(r.index.parts.embeddingCache / 2 ** 20, 1),
          ]),
        },
        ...(restarts.length > 0
          ? [
              {
                title: `The first ${queries.length} hybrid queries of a server started again (client-side ms)`,
                columns: [
                  'knowledge base',
                  'saved postings',
                  'ready ms',
                  'first ms',
                  'median ms',
                  'p95 ms',
                  'max ms',
                  'all answered after ms',
                ],
                rows: restarts.map((r) => [
                  r.label,
                  r.saved ? 'yes' : 'no',
                  Math.round(r.readyMs),
                  r.firstMs,
                  r.medianMs,
                  r.p95Ms,
                  r.maxMs,
                  Math.round(r.doneMs),
                ]),
              } satisfies Table,
            ]
          : []),
      ],
      checks: restarts.some((r) => r.saved)
        ? [
            {
              name: 'a server started again answers from the saved full-text postings at once: its first hybrid queries take at most half the median time they take without them',
              ok: sizes
                .map((size) => restarts.filter((r) => r.label === size.label))
                .filter((pair) => pair.length === 2)
                .every(([without, withSaved]) => withSaved!.medianMs <= without!.medianMs / 2),
              detail: restarts
                .map((r) => `${r.saved ? 'with' : 'without'}: median ${r.medianMs} ms`)
                .join(', '),
            },
          ]
        : [],
      notes: [
        ...(restarts.length > 0
          ? [
              `Started again: a new \`kbstudio serve\` on the same data directory, each query asked once in hybrid mode as soon as it is ready, in sequence (the first also waits for the offline model and the search codes, loaded meanwhile). Without the saved postings (file deleted first), FTS5 answers the full-text half until the server's warm-up has read its whole index; with them, the warm-up takes them from ${LEXICAL_POSTINGS_FILE.replace(/\\/g, '/')}.`,
            ]
          : []),
        'The synthetic knowledge base mixes 2-4 random sentences of the dbpedia-5k abstracts per chunk, embedded with the offline model and written through the store (no parsing or chunking).',
        'Each query is answered over loopback by a separate server process; the medians include HTTP, JSON and query embedding.',
        'dbpedia-5k went through the ingestion pipeline, which also fills the embedding cache (the "cache" column); the synthetic base did not.',
      ],
    };
  },
};

/** The sentences of the dbpedia-5k abstracts (over 20 characters): natural text for synthetic chunks. */
export async function dbpediaSentences(): Promise<string[]> {
  const sentences: string[] = [];
  for await (const doc of readCorpus(DBPEDIA)) {
    for (const s of doc.text.split(/(?<=[.!?])\s+/)) if (s.length > 20) sentences.push(s);
  }
  return sentences;
}

/** A chunk's text: 2–4 random sentences, as the synthetic knowledge bases mix them. */
export const sentenceMix = (sentences: string[], rng: Rng): string =>
  Array.from({ length: rng.between(2, 4) }, () => rng.pick(sentences)).join(' ');

/**
 * `count` chunks of 2-4 random dbpedia sentences, embedded with the offline model and committed through
 * the knowledge-base store in JSON files of 10,000 items of one chunk: no parsing or chunking, so 100k
 * builds fast.
 */
export async function synthesize(kb: KnowledgeBase, count: number, rng: Rng): Promise<number> {
  const started = performance.now();
  const sentences = await dbpediaSentences();
  const embedder: Embedder = offlineGloveEmbedder();
  const store = kb.services.knowledgeBase;
  const staging = store.createStaging(join(kb.dataDir, 'tmp'));
  try {
    const perDocument = 10_000;
    for (let d = 0; d * perDocument < count; d++) {
      const size = Math.min(perDocument, count - d * perDocument);
      const writer = staging.open({
        source: `synthetic-${d + 1}.json`,
        format: 'json',
        // A SHA-256 as ingestion stores (of the name: no such file is kept), so the studio can open it.
        contentHash: hash('sha256', `synthetic-${d + 1}`, 'hex'),
        bytes: 0,
        metadata: {},
      });
      for (let at = 0; at < size; at += 2_000) {
        const texts = Array.from({ length: Math.min(2_000, size - at) }, () => sentenceMix(sentences, rng));
        const vectors = await embedder.embed(texts, 'document');
        writer.add(
          texts.map((text, i) => ({
            text,
            tokenCount: Math.round(text.length / 4),
            contentHash: `${d}-${at + i}`,
            // Each chunk one item of its JSON file, as the JSON parser writes them (one document each).
            metadata: { item: at + i, group: (at + i) % 10 },
            vector: vectors[i]!,
          })),
        );
      }
      writer.finish();
    }
    await store.commit(kb.listingId, staging, {
      model: OFFLINE_MODEL.id,
      dimensions: OFFLINE_MODEL.dimensions,
      maxChunks: BULK_LIMITS.maxChunks,
      maxKnowledgeBaseBytes: null,
    });
  } finally {
    staging.dispose();
  }
  return performance.now() - started;
}

interface IndexSize {
  chunks: number;
  fileBytes: number;
  bytesPerChunk: number;
  parts: { chunks: number; fts: number; vectors: number; embeddingCache: number; other: number };
}

/** The database file after a checkpoint, and how its pages divide between tables (dbstat). */
async function indexSize(kb: KnowledgeBase): Promise<IndexSize> {
  const db = kb.services.db;
  await checkpointed(kb.services);
  const chunks = db.prepare('SELECT count(*) FROM chunks').pluck().get() as number;
  const parts = { chunks: 0, fts: 0, vectors: 0, embeddingCache: 0, other: 0 };
  const rows = db.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name').all() as {
    name: string;
    bytes: number;
  }[];
  for (const { name, bytes } of rows) {
    if (name.startsWith('chunks_fts')) parts.fts += bytes;
    else if (name === 'chunks' || name === 'chunks_listing' || name === 'sqlite_autoindex_chunks_1')
      parts.chunks += bytes;
    else if (name.startsWith('vec_')) parts.vectors += bytes;
    else if (name.startsWith('embedding_cache') || name === 'sqlite_autoindex_embedding_cache_1')
      parts.embeddingCache += bytes;
    else parts.other += bytes;
  }
  const fileBytes = statSync(join(kb.dataDir, DATABASE_FILE)).size;
  return { chunks, fileBytes, bytesPerChunk: Math.round(fileBytes / Math.max(1, chunks)), parts };
}

interface Restart {
  label: string;
  saved: boolean;
  readyMs: number;
  /** The first query's (it also waits for the offline model and the search codes, loaded meanwhile). */
  firstMs: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
  /** From spawning the server to the last query's answer. */
  doneMs: number;
}

/** Starts `kbstudio serve` again on the knowledge base and asks every query once in hybrid mode, at once. */
async function firstQueriesAfterStart(kb: KnowledgeBase, keys: string[], queries: string[]) {
  const spawned = performance.now();
  const server = await startServerProcess(kb.dataDir, { apiKey: keys[0] });
  try {
    const ms: number[] = [];
    let turn = 0;
    for (const query of queries) {
      const started = performance.now();
      const res = await fetch(`${server.url}/v1/retrieve`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Authorization: `Bearer ${keys[turn++ % keys.length]}`,
        },
        body: JSON.stringify({ listingId: kb.listingId, query, topK: TOP_K, mode: 'hybrid' }),
      });
      if (res.status !== 200)
        throw new Error(`POST /v1/retrieve answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      ms.push(performance.now() - started);
    }
    const sorted = [...ms].sort((a, b) => a - b);
    return {
      readyMs: server.startupMs,
      firstMs: round(ms[0]!, 1),
      medianMs: round(median(sorted), 1),
      p95Ms: round(sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!, 1),
      maxMs: round(sorted.at(-1)!, 1),
      doneMs: performance.now() - spawned,
    };
  } catch (err) {
    throw new Error(`${(err as Error).message}\nserver stderr: ${server.stderr().trim() || '(empty)'}`);
  } finally {
    await server.stop();
  }
}

/** Every query once per mode (hybrid `repeat` + 1 times), in sequence, keys in rotation. */
async function measureHttp(
  server: ServerProcess,
  listingId: string,
  keys: string[],
  queries: string[],
  repeat: number,
) {
  let turn = 0;
  const ask = async (query: string, mode: RetrievalMode) => {
    const started = performance.now();
    const res = await fetch(`${server.url}/v1/retrieve`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${keys[turn++ % keys.length]}` },
      body: JSON.stringify({ listingId, query, topK: TOP_K, mode }),
    });
    const body = (await res.json()) as { latencyMs?: number };
    if (res.status !== 200)
      throw new Error(`POST /v1/retrieve answered ${res.status}: ${JSON.stringify(body)}`);
    return { ms: performance.now() - started, serverMs: body.latencyMs ?? NaN };
  };
  // Every query once before the clock: the page cache warm, and the server's warm-up (the full-text
  // postings of a large knowledge base, read in about 1.5 s at 100,000 chunks) done meanwhile.
  for (const query of queries) await ask(query, 'hybrid');
  const out = [];
  for (const mode of MODES) {
    const runs = [];
    const rounds = mode === 'hybrid' ? repeat + 1 : repeat;
    for (let r = 0; r < rounds; r++) for (const query of queries) runs.push(await ask(query, mode));
    const sorted = runs.map((x) => x.ms).sort((a, b) => a - b);
    out.push({
      mode,
      requests: runs.length,
      medianMs: round(median(sorted), 1),
      p95Ms: round(sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!, 1),
      serverMedianMs: round(median(runs.map((x) => x.serverMs)), 1),
    });
  }
  return out;
}
