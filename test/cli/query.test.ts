import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openServices } from '../../src/db/services';
import { SAMPLE_ITEMS } from '../core/retrieve/knowledgeBase';
import { tempDir } from '../helpers/studio';
import { cliRunner } from '../helpers/cli';
import { cliInProcess } from '../helpers/mainInProcess';

const dir = tempDir('kbs-query-cli-');
afterAll(() => dir.remove());

// main() in this process (a spawned kbstudio costs about a second), but for one refusal run as a real
// process below, to see a command end to end as a shell does.
const cli = cliInProcess(join(dir.path, 'data'));
const cliProcess = cliRunner(join(dir.path, 'data'));

let listing: string;
beforeAll(async () => {
  listing = (
    await cli('--json', 'listings', 'create', '--title', 'KB', '--access-model', 'one_time', '--price', '1')
  ).json.id;
  const file = join(dir.path, 'items.json');
  writeFileSync(file, JSON.stringify(SAMPLE_ITEMS));
  expect((await cli('--json', 'ingest', '--listing', listing, file)).code).toBe(0);
});

describe('kbstudio query', () => {
  it('says a listing without chunks has nothing to search yet, and how to fill it', async () => {
    const empty = (
      await cli(
        '--json',
        'listings',
        'create',
        '--title',
        'Empty',
        '--access-model',
        'one_time',
        '--price',
        '1',
      )
    ).json.id;
    const { code, stdout } = await cli('query', '--listing', empty, 'anything');
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(
        `^Listing ${empty} holds no chunks yet: there is nothing to search \\(query qry_\\w+\\)\\.\\nIngest documents first: kbstudio ingest --listing ${empty} PATH\\.\\.\\.\\n$`,
      ),
    );
    // A listing with chunks that match nothing still says so.
    const none = await cli('query', '--listing', listing, 'quick', '--min-score', '1');
    expect(none.stdout).toMatch(/^No chunk matched/);
  });

  it('prints the retrieval result with --json, logged like an API query', async () => {
    const { code, json } = await cli(
      '--json',
      'query',
      '--listing',
      listing,
      'quick',
      'brown',
      'fox',
      '--top-k',
      '2',
    );
    expect(code).toBe(0);
    expect(json).toMatchObject({ listingId: listing, queryId: expect.stringMatching(/^qry_/) });
    expect(json.chunks).toHaveLength(2);
    expect(json.chunks[0]).toMatchObject({
      text: SAMPLE_ITEMS[0]!.text,
      sourceMetadata: { source: 'items.json' },
    });
    const services = openServices(join(dir.path, 'data'));
    try {
      const row = services.db.prepare('SELECT * FROM query_log WHERE id = ?').get(json.queryId);
      expect(row).toMatchObject({
        listing_id: listing,
        api_key_id: null,
        wallet: null,
        query: 'quick brown fox',
        top_k: 2,
      });
    } finally {
      services.close();
    }
  });

  it('prints a ranked list with scores and sources for people, honouring mode, filters and minScore', async () => {
    const { code, stdout } = await cli(
      'query',
      '--listing',
      listing,
      'equity prices dropped',
      '--mode',
      'dense',
      '--top-k',
      '1',
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^ 1\. 0\.\d{4} {2}items\.json\n {4}Stock markets fell sharply as investors sold shares of banks\.\n\n1 chunk in [\d.]+ ms \(query qry_\w+\)\.\n$/,
    );
    const filtered = await cli(
      '--json',
      'query',
      '--listing',
      listing,
      'fox',
      '--filters',
      '{"topic":"space"}',
      '--top-k',
      '5',
    );
    expect(
      filtered.json.chunks.map((c: { sourceMetadata: { topic: string } }) => c.sourceMetadata.topic),
    ).toEqual(['space']);
    const none = await cli('query', '--listing', listing, 'fox', '--min-score', '0.99');
    expect(none.stdout).toMatch(/^No chunk matched/);
  });

  it('refuses bad flags with the field named', async () => {
    // A real process: the exit status a shell sees, and the error body alone on its stdout.
    const topK = await cliProcess('--json', 'query', '--listing', listing, 'fox', '--top-k', '21');
    expect(topK.code).toBe(1);
    expect(topK.json.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^--top-k: /),
    });
    const filters = await cli('--json', 'query', '--listing', listing, 'fox', '--filters', '{topic:');
    expect(filters.json.error.message).toMatch(/^--filters: not valid JSON/);
    const unknown = await cli('--json', 'query', '--listing', 'lst_nope', 'fox');
    expect(unknown.json.error.code).toBe('listing_not_found');
  });
});
