import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { InvalidInput } from '../../errors';

/**
 * The BEIR folder layout: corpus.jsonl (`{_id, title, text}`), queries.jsonl (`{_id, text}`) and
 * qrels/test.tsv (`query-id corpus-id score`, tab-separated, a header line first).
 */
export const BEIR_FILES = {
  corpus: 'corpus.jsonl',
  queries: 'queries.jsonl',
  qrels: join('qrels', 'test.tsv'),
} as const;

export interface CorpusDocument {
  id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  id: string;
  text: string;
}

/** Checks that the three files exist, naming the first one missing. */
export async function checkBeirFolder(dir: string): Promise<void> {
  for (const file of Object.values(BEIR_FILES)) {
    const path = join(dir, file);
    const found = await stat(path).catch(() => undefined);
    if (!found?.isFile()) {
      throw new InvalidInput(
        `${path}: not found. A BEIR dataset folder holds corpus.jsonl, queries.jsonl and qrels/test.tsv.`,
      );
    }
  }
}

async function* lines(path: string): AsyncGenerator<{ line: string; number: number }> {
  const reader = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let number = 0;
  for await (const line of reader) {
    number++;
    if (line.trim() !== '') yield { line, number };
  }
}

/** `shownAs`: the file's name in messages (an uploaded file's own name, not where it was stored). */
async function* jsonLines(
  path: string,
  shownAs: string,
): AsyncGenerator<{ value: Record<string, unknown>; number: number }> {
  for await (const { line, number } of lines(path)) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new InvalidInput(`${shownAs} line ${number}: not valid JSON (${(err as Error).message}).`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new InvalidInput(`${shownAs} line ${number}: expected a JSON object.`);
    yield { value: value as Record<string, unknown>, number };
  }
}

function idOf(value: Record<string, unknown>, path: string, number: number): string {
  const id = value._id;
  if (typeof id === 'string' && id !== '') return id;
  if (typeof id === 'number') return String(id);
  throw new InvalidInput(`${path} line ${number}: "_id" must be a non-empty string.`);
}

const textField = (value: unknown) => (typeof value === 'string' ? value : '');

/** The corpus, one document at a time (a BEIR corpus can hold millions). `shownAs`: its name in messages. */
export async function* readCorpus(
  dir: string,
  shownAs = join(dir, BEIR_FILES.corpus),
): AsyncGenerator<CorpusDocument> {
  const path = join(dir, BEIR_FILES.corpus);
  for await (const { value, number } of jsonLines(path, shownAs)) {
    yield { id: idOf(value, shownAs, number), title: textField(value.title), text: textField(value.text) };
  }
}

export async function readQueries(
  dir: string,
  shownAs = join(dir, BEIR_FILES.queries),
): Promise<BeirQuery[]> {
  const path = join(dir, BEIR_FILES.queries);
  const queries: BeirQuery[] = [];
  for await (const { value, number } of jsonLines(path, shownAs)) {
    const text = textField(value.text);
    if (text.trim() === '')
      throw new InvalidInput(`${shownAs} line ${number}: "text" must be a non-empty string.`);
    queries.push({ id: idOf(value, shownAs, number), text });
  }
  return queries;
}

/** Graded judgments per query id; a repeated pair keeps its highest grade. */
export async function readQrels(
  dir: string,
  shownAs = join(dir, BEIR_FILES.qrels),
): Promise<Map<string, Map<string, number>>> {
  const path = join(dir, BEIR_FILES.qrels);
  const qrels = new Map<string, Map<string, number>>();
  let first = true;
  for await (const { line, number } of lines(path)) {
    const cells = line.split('\t').map((c) => c.trim());
    const [queryId, docId, score] = cells.length >= 3 ? cells : line.trim().split(/\s+/);
    const grade = Number(score);
    if (first) {
      first = false;
      if (!Number.isFinite(grade)) continue; // the header line
    }
    if (!queryId || !docId || score === undefined || !Number.isFinite(grade)) {
      throw new InvalidInput(`${shownAs} line ${number}: expected "query-id<TAB>corpus-id<TAB>score".`);
    }
    const judged = qrels.get(queryId) ?? new Map<string, number>();
    judged.set(docId, Math.max(grade, judged.get(docId) ?? -Infinity));
    qrels.set(queryId, judged);
  }
  return qrels;
}
