import { MantineProvider } from '@mantine/core';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { FiltersSchema } from '../../../src/shared/retrieval';
import { FilterEditor } from '../../../src/renderer/src/features/playground/FilterEditor';
import {
  buildFilters,
  parseScalar,
  type FilterRow,
} from '../../../src/renderer/src/features/playground/filterRows';
import { clientCodeOf, curlOf, queryTerms } from '../../../src/renderer/src/features/playground/requestCode';

const row = (id: string, key: string, op: FilterRow['op'], value: string): FilterRow => ({
  id,
  key,
  op,
  value,
});

describe('filter editor rows → /v1/retrieve filters', () => {
  it('reads values as JSON would, quotes keeping text', () => {
    expect(parseScalar('2019')).toBe(2019);
    expect(parseScalar('"2019"')).toBe('2019');
    expect(parseScalar('false')).toBe(false);
    expect(parseScalar(' contracts.pdf ')).toBe('contracts.pdf');
  });

  it('turns rows into filters the server schema accepts, ANDing rows on one key', () => {
    const { filters, errors } = buildFilters([
      row('a', 'topic', '=', 'space'),
      row('b', 'year', '≥', '2020'),
      row('c', 'year', '<', '2023'),
      row('d', 'tags', 'in', 'science, health'),
      row('e', 'draft', 'exists', ''),
      row('f', '', '=', ''),
    ]);
    expect(errors).toEqual({});
    expect(filters).toEqual({
      topic: 'space',
      year: { $gte: 2020, $lt: 2023 },
      tags: { $in: ['science', 'health'] },
      draft: { $exists: true },
    });
    expect(FiltersSchema.safeParse(filters).success).toBe(true);
  });

  it('names what is wrong with a row and sends no filters for blank rows', () => {
    const { errors } = buildFilters([
      row('a', '', '=', 'x'),
      row('b', 'year', '>', ''),
      row('c', 'year', '>', 'true'),
      row('d', 'topic', '=', 'a'),
      row('e', 'topic', '=', 'b'),
      row('f', 'draft', 'exists', 'maybe'),
    ]);
    expect(errors).toEqual({
      a: 'Name the metadata key.',
      b: 'Give a value for year.',
      c: 'Compare with a number or text (such as an ISO date).',
      e: 'topic already has a "=" condition.',
      f: 'Use true or false (empty means true).',
    });
    expect(buildFilters([row('a', ' ', '=', '')])).toEqual({ filters: undefined, errors: {} });
  });

  it('renders a row per filter with its error, and the empty state', () => {
    const render = (rows: FilterRow[], errors: Record<string, string> = {}) =>
      renderToStaticMarkup(
        <MantineProvider>
          <FilterEditor rows={rows} errors={errors} onChange={() => {}} />
        </MantineProvider>,
      );
    expect(render([])).toContain('No filters: every chunk of the listing can match.');
    const html = render([row('a', '', '=', 'x')], { a: 'Name the metadata key.' });
    expect(html).toContain('aria-label="Filter 1 key"');
    expect(html).toContain('Name the metadata key.');
    expect(html).toContain('Remove filter 1');
  });
});

describe('request as code', () => {
  const request = {
    listingId: 'lst_1',
    query: "tenant's notice",
    topK: 3,
    mode: 'lexical' as const,
    filters: { year: { $gte: 2020 } },
  };
  it('quotes the body for the shell and leaves defaults out', () => {
    const curl = curlOf(request, 'http://127.0.0.1:4000/v1', false);
    expect(curl).toContain("curl -X POST 'http://127.0.0.1:4000/v1/retrieve' \\");
    expect(curl).toContain(
      `-d '{"listingId":"lst_1","query":"tenant'\\''s notice","topK":3,"mode":"lexical","filters":{"year":{"$gte":2020}}}'`,
    );
    expect(curlOf({ ...request, mode: 'hybrid' }, 'http://x/v1', true)).not.toContain('"mode"');
  });
  it('writes client code for the streaming call', () => {
    const code = clientCodeOf(request, 'http://x/v1', true);
    expect(code).toContain("new KnowledgeClient({ baseUrl: 'http://x/v1'");
    expect(code).toContain('client.retrieveStream({');
    expect(code).toContain('listingId: "lst_1"');
  });
  it('finds the query terms to highlight', () => {
    expect(queryTerms('Notice period, notice? a 3-month')).toEqual(['notice', 'period', '3', 'month']);
    expect(queryTerms('cups won in 1994 by the Rangers')).toEqual(['cups', 'won', '1994', 'the', 'rangers']);
  });
});
