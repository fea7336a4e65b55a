import type { Filters, RetrievalMode } from '../../../../shared/retrieval';

export interface PlaygroundRequest {
  listingId: string;
  query: string;
  topK: number;
  minScore?: number;
  mode: RetrievalMode;
  filters?: Filters;
}

/** The request body exactly as sent, without the defaults left out. */
export function requestBody(request: PlaygroundRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    listingId: request.listingId,
    query: request.query,
    topK: request.topK,
  };
  if (request.minScore !== undefined && request.minScore > 0) body.minScore = request.minScore;
  if (request.mode !== 'hybrid') body.mode = request.mode;
  if (request.filters) body.filters = request.filters;
  return body;
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
/** Inside double quotes the shell still expands `$`, `` ` `` and `\`: a real key has them escaped. */
const doubleQuoted = (text: string) => text.replace(/[\\"$`]/g, '\\$&');

/**
 * The request as a curl command; the key is `$KB_API_KEY` unless `apiKey` is given. The header is in
 * double quotes so that the shell expands the variable (in single quotes curl sent it as typed: 401).
 */
export function curlOf(request: PlaygroundRequest, apiBase: string, stream: boolean, apiKey?: string) {
  const key = apiKey === undefined ? '$KB_API_KEY' : doubleQuoted(apiKey);
  return [
    `curl -X POST ${shellQuote(`${apiBase}/retrieve${stream ? '/stream' : ''}`)}`,
    `  -H "Authorization: Bearer ${key}"`,
    `  -H 'Content-Type: application/json'`,
    `  -d ${shellQuote(JSON.stringify(requestBody(request)))}`,
  ].join(' \\\n');
}

/** The same request with the client library. */
export function clientCodeOf(request: PlaygroundRequest, apiBase: string, stream: boolean): string {
  const params = JSON.stringify(requestBody(request), null, 2).replace(/"([A-Za-z_$][\w$]*)":/g, '$1:');
  const setup = [
    `import { KnowledgeClient } from 'kb-studio/client';`,
    '',
    `const client = new KnowledgeClient({ baseUrl: '${apiBase}', apiKey: process.env.KB_API_KEY });`,
  ];
  const call = stream
    ? [
        `const stream = client.retrieveStream(${params});`,
        'for await (const chunk of stream) console.log(chunk.score.toFixed(3), chunk.text);',
        'console.log(stream.summary);',
      ]
    : [
        `const result = await client.retrieve(${params});`,
        'for (const chunk of result.chunks) console.log(chunk.score.toFixed(3), chunk.text);',
      ];
  return [...setup, ...call].join('\n');
}

/**
 * Words of the query worth highlighting in results (matched as whole words): 3+ letters or any
 * number, no duplicates; "in", "of", "a" would light up half of every chunk.
 */
export function queryTerms(query: string): string[] {
  const words = (query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter(
    (w) => w.length >= 3 || /^\p{N}+$/u.test(w),
  );
  return [...new Set(words)];
}
