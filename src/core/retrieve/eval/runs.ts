import { parse as parseCsv } from 'csv-parse/sync';
import type {
  EvalRun,
  EvalRunReport,
  QuestionResult,
  RetrievedHit,
  RunSettings,
  ScoreBin,
  UnknownSource,
} from '../../../shared/evaluation';
import type { Chunk } from '../../../shared/retrieval';
import { InvalidInput } from '../../errors';
import type { BeirQuery } from './beir';
import { corpusIdsOf, evaluate, type EvalReport } from './evaluate';
import { nearestSources } from './nearestSource';

export type { EvalRun, EvalRunReport, QuestionResult, RetrievedHit, RunSettings, ScoreBin, UnknownSource };

/**
 * Evaluation runs of the studio: a question set (BEIR qrels, or questions with the source or text
 * each should find), run against a listing, kept with the settings used so runs can be compared.
 */

/** A hand-written or CSV/JSONL question: what a right answer's chunk comes from or contains. */
export interface ExpectedQuestion {
  question: string;
  expectedSource?: string;
  expectedText?: string;
}

/** A question set ready to run: queries and graded judgments over ids the matcher gives chunks. */
export interface QuestionSet {
  kind: 'beir' | 'expected';
  queries: BeirQuery[];
  qrels: Map<string, Map<string, number>>;
  /** Expected-answer sets only: what each query counts as a hit. */
  expected?: Map<string, ExpectedQuestion>;
}

export const EVAL_DEPTH = 100;
export const MAX_QUESTIONS = 2_000;
const BINS = 20;
const SNIPPET_CHARS = 160;
/** The id every chunk matching an expected answer counts as. */
const EXPECTED_ID = 'expected';

const normalize = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();

/** The columns (CSV) or keys (JSONL) a question file's rows are read from. */
const QUESTION_KEYS = ['question', 'query'];
const EXPECTED_KEYS = ['expected_source', 'expected_text'];
const EXPECTED_COLUMNS = 'a "question" column and an "expected_source" or "expected_text" column (or both)';

/** A header cell as the rows are keyed: trimmed, `expectedSource` and `Expected Source` as `expected_source`. */
const columnKey = (header: string) =>
  header
    .trim()
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .replace(/[\s-]+/g, '_')
    .toLowerCase();

/** Reads questions from a CSV (header `question,expected_source|expected_text`) or JSONL file. */
export function parseQuestionFile(name: string, content: string): ExpectedQuestion[] {
  if (/\.jsonl?$/i.test(name)) {
    const questions: ExpectedQuestion[] = [];
    content.split(/\r?\n/).forEach((line, i) => {
      if (line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (err) {
        throw new InvalidInput(`${name} line ${i + 1}: not valid JSON (${(err as Error).message}).`);
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new InvalidInput(`${name} line ${i + 1}: expected a JSON object.`);
      const row = Object.fromEntries(Object.entries(value).map(([key, v]) => [columnKey(key), v]));
      questions.push(questionOf(row, `${name} line ${i + 1}`));
    });
    return questions;
  }
  if (/\.(csv|tsv)$/i.test(name)) {
    let header: string[] = [];
    let rows: Record<string, unknown>[];
    try {
      rows = parseCsv(content, {
        columns: (cells: string[]) => (header = cells.map(columnKey)),
        skip_empty_lines: true,
        trim: true,
        bom: true,
        delimiter: /\.tsv$/i.test(name) ? '\t' : ',',
      }) as Record<string, unknown>[];
    } catch (err) {
      throw new InvalidInput(`${name}: not a readable CSV file (${(err as Error).message}).`);
    }
    // A header without the columns would otherwise read as a first row without a question.
    if (header.length > 0) checkColumns(name, header);
    return rows.map((row, i) => questionOf(row, `${name} row ${i + 1}`));
  }
  throw new InvalidInput(
    `${name}: unsupported question file; send a .csv or .jsonl of question + expected_source or expected_text, or the BEIR files corpus.jsonl, queries.jsonl and qrels test.tsv.`,
  );
}

function checkColumns(name: string, header: string[]): void {
  const missing = !header.some((h) => QUESTION_KEYS.includes(h))
    ? '"question"'
    : !header.some((h) => EXPECTED_KEYS.includes(h))
      ? '"expected_source" or "expected_text"'
      : undefined;
  if (!missing) return;
  const found = header.filter((h) => h !== '');
  throw new InvalidInput(
    `${name}: no ${missing} column in its header (found ${found.length ? found.map((h) => `"${h}"`).join(', ') : 'no named column'}); the first line must name ${EXPECTED_COLUMNS}.`,
  );
}

function questionOf(row: Record<string, unknown>, where: string): ExpectedQuestion {
  const text = (key: string) => {
    const value = row[key];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
  const question = text('question') ?? text('query');
  if (!question) {
    const keys = Object.keys(row);
    const named = QUESTION_KEYS.some((k) => k in row);
    throw new InvalidInput(
      named
        ? `${where}: "question" must be a non-empty string.`
        : `${where}: no "question" (found ${keys.length ? keys.map((k) => `"${k}"`).join(', ') : 'nothing'}); each row needs ${EXPECTED_COLUMNS.replaceAll('column', 'field')}.`,
    );
  }
  const expectedSource = text('expected_source');
  const expectedText = text('expected_text');
  if (!expectedSource && !expectedText)
    throw new InvalidInput(`${where}: give "expected_source" or "expected_text" for "${question}".`);
  return { question, expectedSource, expectedText };
}

/** A question set from expected answers: each question has one relevant id, `expected`. */
export function expectedQuestionSet(questions: ExpectedQuestion[]): QuestionSet {
  if (questions.length === 0) throw new InvalidInput('questions: give at least one question.');
  if (questions.length > MAX_QUESTIONS)
    throw new InvalidInput(`questions: at most ${MAX_QUESTIONS} questions per run, not ${questions.length}.`);
  const queries: BeirQuery[] = [];
  const qrels = new Map<string, Map<string, number>>();
  const expected = new Map<string, ExpectedQuestion>();
  questions.forEach((q, i) => {
    const id = `q${i + 1}`;
    queries.push({ id, text: q.question });
    qrels.set(id, new Map([[EXPECTED_ID, 1]]));
    expected.set(id, q);
  });
  return { kind: 'expected', queries, qrels, expected };
}

/** Whether a chunk's source is the expected one: the same name, or a path ending with it (as in withKnownSources). */
function isSource(source: string, expected: string): boolean {
  return source === expected || source.endsWith(`/${expected}`);
}

/**
 * The id a chunk counts as for a query: its corpus id in a BEIR set; for an expected answer,
 * `expected` when the chunk comes from the expected source (its path ends with it) or contains the
 * expected text, else its source.
 */
function chunkId(chunk: Chunk, expected: ExpectedQuestion | undefined): string | undefined {
  const meta = chunk.sourceMetadata;
  if (!expected) return typeof meta.corpusId === 'string' ? meta.corpusId : undefined;
  const source = typeof meta.source === 'string' ? meta.source : '';
  const sourceHit = expected.expectedSource !== undefined && isSource(source, expected.expectedSource);
  const textHit =
    expected.expectedText !== undefined && normalize(chunk.text).includes(normalize(expected.expectedText));
  return sourceHit || textHit ? EXPECTED_ID : `${source || 'chunk'}#${String(meta.chunkIndex ?? '')}`;
}

/**
 * Checks each expected source against the listing's documents. One that names none of them cannot be
 * found, whatever the retrieval (a typo, a file not ingested yet): a question that has only it is left
 * out of the metrics, so it does not read as a retrieval failure; one with an expected text as well is
 * scored by that text alone. Both are reported. None left to score is a 400, as in judgedQueries.
 */
export function withKnownSources(
  set: QuestionSet,
  documentSources: () => readonly string[],
): { set: QuestionSet; unknownSources: UnknownSource[] } {
  const expected = set.expected;
  if (!expected || ![...expected.values()].some((q) => q.expectedSource !== undefined))
    return { set, unknownSources: [] };
  // Every name a document can be expected by: its source and each end of its path.
  const names = new Set<string>();
  for (const source of documentSources()) {
    names.add(source);
    for (let i = source.indexOf('/'); i >= 0; i = source.indexOf('/', i + 1)) names.add(source.slice(i + 1));
  }
  const unknownSources: UnknownSource[] = [];
  const kept = new Map<string, ExpectedQuestion>();
  for (const [id, q] of expected) {
    if (q.expectedSource === undefined || names.has(q.expectedSource)) {
      kept.set(id, q);
      continue;
    }
    const scored = q.expectedText !== undefined;
    unknownSources.push({ id, question: q.question, source: q.expectedSource, scored });
    if (scored) kept.set(id, { question: q.question, expectedText: q.expectedText });
  }
  const suggestions = nearestSources(
    unknownSources.map((u) => u.source),
    names,
  );
  for (const u of unknownSources) {
    const suggestion = suggestions.get(u.source);
    if (suggestion !== undefined) u.suggestion = suggestion;
  }
  if (kept.size === 0) {
    const sources = [...new Set(unknownSources.map((u) => u.source))];
    const named = sources.slice(0, 5).map((s) => {
      const suggestion = suggestions.get(s);
      return suggestion === undefined ? `"${s}"` : `"${s}" (did you mean "${suggestion}"?)`;
    });
    if (sources.length > 5) named.push(`${sources.length - 5} other expected sources`);
    throw new InvalidInput(
      `No question can be scored: no document of the listing is named ${named.join(' or ')}. An expected source is a document's name as Inspect lists it, or the end of its path.`,
    );
  }
  return {
    set: {
      ...set,
      queries: set.queries.filter((q) => kept.has(q.id)),
      qrels: new Map([...set.qrels].filter(([id]) => kept.has(id))),
      expected: kept,
    },
    unknownSources,
  };
}

export interface RunEvaluationOptions {
  set: QuestionSet;
  settings: RunSettings;
  /** The sources of the listing's documents, read only when an expected source is to be checked. */
  documentSources(): readonly string[];
  search(query: string): Promise<{ chunks: Chunk[]; latencyMs: number }>;
}

/** Runs the set and builds the stored report: metrics, per-question hits and misses, score bins. */
export async function runEvaluation(options: RunEvaluationOptions): Promise<EvalRunReport> {
  const { settings } = options;
  const { set, unknownSources } = withKnownSources(options.set, options.documentSources);
  const k = settings.k;
  const answered: { hits: RetrievedHit[]; chunkScores: { score: number; relevant: boolean }[] }[] = [];
  let pending = set.queries.filter((q) => set.qrels.has(q.id));
  let chunksSeen = 0;
  let chunksMapped = 0;
  const report: EvalReport = await evaluate({
    queries: set.queries,
    qrels: set.qrels,
    k,
    search: async (text) => {
      const query = pending[0]!;
      pending = pending.slice(1);
      const judgments = set.qrels.get(query.id)!;
      const expected = set.expected?.get(query.id);
      const { chunks, latencyMs } = await options.search(text);
      const ided = chunks.map((chunk) => ({ chunk, id: chunkId(chunk, expected) }));
      chunksSeen += chunks.length;
      chunksMapped += ided.filter((c) => c.id !== undefined).length;
      const hits: RetrievedHit[] = [];
      const seen = new Set<string>();
      for (const { chunk, id } of ided) {
        if (id === undefined || seen.has(id)) continue;
        seen.add(id);
        hits.push({
          id: expected && id === EXPECTED_ID ? (expected.expectedSource ?? 'expected text') : id,
          score: chunk.score,
          relevant: (judgments.get(id) ?? 0) > 0,
          snippet: chunk.text.slice(0, SNIPPET_CHARS),
        });
      }
      answered.push({
        hits: hits.slice(0, k),
        chunkScores: ided
          .slice(0, k)
          .map(({ chunk, id }) => ({ score: chunk.score, relevant: (judgments.get(id ?? '') ?? 0) > 0 })),
      });
      return {
        ids: corpusIdsOf(
          ided.map(({ id }) => ({ sourceMetadata: id === undefined ? {} : { corpusId: id } })),
        ),
        latencyMs,
      };
    },
  });
  if (set.kind === 'beir' && chunksSeen > 0 && chunksMapped === 0) {
    throw new InvalidInput(
      'The listing holds chunks without "corpusId" metadata, so its results cannot be matched to the qrels. Evaluate a BEIR set on an empty listing: the run fills it from corpus.jsonl first.',
    );
  }
  const questions = report.perQuery.map((q, i): QuestionResult => {
    const { hits } = answered[i]!;
    const expected = set.expected?.get(q.id);
    const judged = [...set.qrels.get(q.id)!].filter(([, g]) => g > 0).map(([id]) => id);
    const found = new Set(hits.filter((h) => h.relevant).map((h) => h.id));
    const missed = expected
      ? found.size > 0
        ? []
        : [expected.expectedSource ?? `text: ${expected.expectedText}`]
      : judged.filter((id) => !found.has(id));
    return {
      id: q.id,
      question: q.text,
      ndcg: q.ndcg,
      recallAtK: q.recallAtK,
      reciprocalRank: q.reciprocalRank,
      latencyMs: q.latencyMs,
      hits,
      missed,
    };
  });
  return {
    settings,
    metrics: {
      ndcgAt10: report.ndcg,
      recallAt10: report.recallAtK,
      recallAt100: report.recallAt100,
      mrr: report.mrr,
      p50LatencyMs: report.p50LatencyMs,
      queries: report.queries,
      skipped: report.skipped,
    },
    questions,
    distribution: scoreBins(answered.flatMap((a) => a.chunkScores)),
    unknownSources,
  };
}

export function scoreBins(scores: { score: number; relevant: boolean }[]): ScoreBin[] {
  const bins: ScoreBin[] = Array.from({ length: BINS }, (_, i) => ({
    from: i / BINS,
    to: (i + 1) / BINS,
    relevant: 0,
    other: 0,
  }));
  for (const { score, relevant } of scores) {
    const bin = bins[Math.min(BINS - 1, Math.max(0, Math.floor(score * BINS)))]!;
    if (relevant) bin.relevant++;
    else bin.other++;
  }
  return bins;
}
