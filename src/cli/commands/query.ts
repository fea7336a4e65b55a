import type { Command } from 'commander';
import { InvalidInput } from '../../core/errors';
import type { Chunk, RetrievalResult } from '../../shared/retrieval';
import { numberFlag, withServices } from '../context';

interface QueryFlags {
  listing: string;
  topK?: number;
  minScore?: number;
  mode?: string;
  filters?: string;
}

export function queryCommand(program: Command): void {
  program
    .command('query')
    .description("query a listing's knowledge base as the studio (no API key), as POST /v1/retrieve does")
    .requiredOption('--listing <id>', 'listing id')
    .argument('<text...>', 'the query')
    .option('--top-k <n>', 'chunks to return, 1..20 (default 5)', numberFlag)
    .option('--min-score <s>', 'minimum score, 0..1', numberFlag)
    .option('--mode <mode>', 'hybrid | dense | lexical (default hybrid)')
    .option('--filters <json>', 'metadata filters as JSON, e.g. \'{"format":"pdf","page":{"$gte":2}}\'')
    .action((words: string[], flags: QueryFlags, cmd: Command) =>
      withServices(cmd, async ({ services, out }) => {
        const result = await services.retrieval.retrieve(
          {
            listingId: flags.listing,
            query: words.join(' '),
            topK: flags.topK,
            minScore: flags.minScore,
            mode: flags.mode,
            filters: flags.filters === undefined ? undefined : parseJsonFlag(flags.filters),
          },
          'studio',
        );
        // Nothing could match in a listing without chunks, whatever the query: say so, and how to fill
        // it (as the Playground does). Exit 0 all the same, as `listings withdraw` with nothing to
        // withdraw: the query ran, and is logged.
        const empty =
          result.chunks.length === 0 && services.listings.get(flags.listing, 'studio').chunkCount === 0;
        out.result(result, () => (empty ? renderEmptyListing(result) : renderResult(result)));
      }),
    );
}

function parseJsonFlag(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidInput(`filters: not valid JSON: ${text}`);
  }
}

/** Where a chunk comes from: file, then page / row / heading path when known. */
export function describeSource(chunk: Chunk): string {
  const m = chunk.sourceMetadata;
  const parts = [String(m.source ?? '?')];
  if (typeof m.page === 'number') parts.push(`page ${m.page}`);
  if (typeof m.row === 'number') parts.push(`row ${m.row}`);
  if (Array.isArray(m.headings) && m.headings.length > 0) parts.push(m.headings.join(' › '));
  return parts.join(' · ');
}

const snippet = (text: string, max = 240) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

function renderEmptyListing(result: RetrievalResult): string {
  return [
    `Listing ${result.listingId} holds no chunks yet: there is nothing to search (query ${result.queryId}).`,
    `Ingest documents first: kbstudio ingest --listing ${result.listingId} PATH...`,
  ].join('\n');
}

function renderResult(result: RetrievalResult): string {
  if (result.chunks.length === 0) {
    return `No chunk matched (${result.latencyMs} ms, query ${result.queryId}).`;
  }
  const lines = result.chunks.flatMap((chunk, i) => [
    `${String(i + 1).padStart(2)}. ${chunk.score.toFixed(4)}  ${describeSource(chunk)}`,
    `    ${snippet(chunk.text)}`,
  ]);
  lines.push(
    '',
    `${result.chunks.length} chunk${result.chunks.length === 1 ? '' : 's'} in ${result.latencyMs} ms (query ${result.queryId}).`,
  );
  return lines.join('\n');
}
