import type { Root, Yaml } from 'mdast';
import { decodeTextInTurns } from '../decode';
import { EventLoopTurns } from '../eventLoopTurns';
import { InvalidDocument } from '../errors';
import type { Metadata, ParsedDocument } from '../types';
import { normalizeFrontMatterFence, readFrontMatter } from './markdownFrontMatter';
import { markdownPieces } from './markdownPieces';
import { MarkdownSectionBuilder } from './markdownSections';
import { parseTimer, type ParseBudget, type ParseTimer } from './parseBudget';
import {
  type CancellableParser,
  PARSE_AHEAD_DEPTH,
  ParserWorkerPool,
  type ParserWorkerReply,
  textParseFailure,
} from './parserWorkerPool';

/**
 * Heap limit of a worker: only stops a runaway parse (a 32 KB piece makes a tree of a few MB; an MDX
 * document is one piece). Not lower: V8 sizes its heap by the limit, and at 512 MB micromark parsed 45%
 * slower from the extra garbage collection.
 */
const MAX_MEMORY_MB = 2048;

let pool: ParserWorkerPool | undefined;

export interface MarkdownParserOptions {
  /** Time allowed for one document (its parse in a worker is stopped at the end); see DEFAULT_PARSE_BUDGET. */
  budget?: ParseBudget;
}

/**
 * Markdown (CommonMark + GitHub tables) and, for `.mdx` sources only, MDX. YAML front matter becomes the
 * document metadata (read with the `yaml` package and an alias limit, never with gray-matter, which runs
 * `---js` front matter); the body becomes one section per heading (see markdownSections). A large
 * document is parsed a piece at a time (markdownPieces) and each piece's tree dropped once its text is
 * taken, so memory stays near the size of the text. The parse (markdown-it where it reads a piece as
 * micromark does, else micromark) runs in a worker thread, terminated when the document's parse budget
 * runs out (parseTimer): the document is then refused.
 */
export function createMarkdownParser(options: MarkdownParserOptions = {}): CancellableParser {
  return async ({ bytes, source }, { signal } = {}) => {
    // On the server's thread: a large file is decoded in turns with its requests.
    const text = normalizeFrontMatterFence(
      await decodeTextInTurns(bytes, new EventLoopTurns(), source),
      source,
    );
    const warnings: string[] = [];
    // The document's time starts when a worker takes its first piece, not while it waits behind others.
    let timer: ParseTimer | undefined;
    const clock = () => (timer ??= parseTimer(source, 'Markdown', text.length, options.budget));
    const mdx = /\.mdx$/i.test(source);
    const builder = new MarkdownSectionBuilder();
    let frontMatter: Yaml | undefined;
    const pieces = mdx ? [text] : markdownPieces(text);
    const job: PieceJob = { mdx, source, clock, rank: markdownPool().newRank(), signal };
    const parse = (i: number) => {
      const tree = parseInWorker(pieces[i]!, job);
      pieces[i] = '';
      // Marked handled now: a piece refused while an earlier one is awaited must not count as unhandled.
      tree.catch(() => undefined);
      return tree;
    };
    // Two pieces in flight: the next one is parsed (or waits its turn) while this one's tree becomes sections.
    const inFlight = [parse(0)];
    if (pieces.length > 1) inFlight.push(parse(1));
    for (let i = 0; i < pieces.length; i++) {
      const tree = await inFlight.shift()!;
      if (i + 2 < pieces.length) inFlight.push(parse(i + 2));
      const first = tree.children[0];
      if (i === 0 && first?.type === 'yaml') frontMatter = first;
      withinStack(source, () => builder.add(tree.children));
      clock().check();
    }
    const sections = builder.finish();

    let metadata: Metadata = {};
    if (frontMatter) {
      metadata = readFrontMatter(frontMatter.value, frontMatter.position?.start.line ?? 1, source, warnings);
    }

    if (sections.length === 0) warnings.push('The document has no text.');
    const document: ParsedDocument = { format: 'markdown', sections, metadata };
    if (warnings.length > 0) document.warnings = warnings;
    return document;
  };
}

export const parseMarkdown = createMarkdownParser();

/** The tree walk recurses per nesting level: thousands of nested quotes or lists overflow the stack. */
function withinStack<T>(source: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw tooDeep(source);
  }
}

function tooDeep(source: string): InvalidDocument {
  return new InvalidDocument(
    source,
    'the document nests too deeply to be read (block quotes, lists, emphasis or HTML thousands of levels deep).',
  );
}

type TreeReply = ParserWorkerReply<{ tree: Root }> & { reason?: string; line?: number; column?: number };

function markdownPool(): ParserWorkerPool {
  return (pool ??= new ParserWorkerPool(new URL('./markdownWorker.mjs', import.meta.url), {
    maxMemoryMb: MAX_MEMORY_MB,
    // micromark keeps nothing between parses, and a fresh worker parses slowly until its JIT warms up.
    maxFilesPerWorker: 100_000,
    depth: PARSE_AHEAD_DEPTH,
  }));
}

/** What the pieces of one document share. */
interface PieceJob {
  mdx: boolean;
  source: string;
  /** The document's parse timer, started by its first piece to reach a worker. */
  clock: () => ParseTimer;
  /** The document's place in the pool's queue: its pieces go before those of later documents. */
  rank: number;
  signal?: AbortSignal;
}

/**
 * One piece parsed in a worker thread (markdownWorker.mjs), given what is left of the
 * document's time: micromark is quadratic on some inputs and cannot be interrupted, so a piece still
 * parsing at the deadline has its worker terminated and the document is refused. CommonMark never fails;
 * MDX does, with a position.
 */
async function parseInWorker(text: string, { mdx, source, clock, rank, signal }: PieceJob): Promise<Root> {
  let reply: TreeReply;
  try {
    reply = await markdownPool().read<{ tree: Root }>(
      new TextEncoder().encode(text),
      { mdx },
      () => clock().remainingMs(),
      { rank, signal },
    );
  } catch (error) {
    throw textParseFailure(error, source, 'Markdown', {
      tooLong: () => clock().tooLong(),
      tooDeep: () => tooDeep(source),
    });
  }
  if (reply.ok) return reply.tree;
  if (reply.name === 'RangeError') throw tooDeep(source);
  if (reply.reason !== undefined) {
    // Some messages carry their place only in the reason: "Expected a closing tag for `<Note>` (3:1-3:7)".
    const inReason = /\s*\((\d+):(\d+)-\d+:\d+\)$/.exec(reply.reason);
    const line = reply.line ?? inReason?.[1];
    const column = reply.column ?? inReason?.[2];
    const reason = inReason ? reply.reason.slice(0, inReason.index) : reply.reason;
    const where = line ? ` at line ${line}${column ? `, column ${column}` : ''}` : '';
    throw new InvalidDocument(source, `invalid ${mdx ? 'MDX' : 'Markdown'}${where}: ${reason}.`);
  }
  throw new InvalidDocument(source, `the Markdown could not be read: ${reply.message}`);
}
