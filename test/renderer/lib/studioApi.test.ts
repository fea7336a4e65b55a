import { describe, expect, it } from 'vitest';
import {
  createStudioApi,
  fieldErrorsOf,
  readStudioToken,
  StudioApiError,
} from '../../../src/renderer/src/lib/studioApi';

interface Call {
  url: string;
  init: RequestInit;
}

/** A fetch that records each call and answers with the given status and body. */
function fakeFetch(status: number, body: unknown, contentType = 'application/json') {
  const calls: Call[] = [];
  const fetch = async (url: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ url: String(url), init: init ?? {} });
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return new Response(text, { status, headers: { 'Content-Type': contentType } });
  };
  return { calls, fetch: fetch as typeof globalThis.fetch };
}

const listing = { id: 'lst_1', title: 'Case law', price: 1.5, accessModel: 'one_time' };

describe('studioApi', () => {
  it('sends the studio token and JSON body, and unwraps { data }', async () => {
    const { calls, fetch } = fakeFetch(201, { data: listing });
    const api = createStudioApi({ token: 'tok-123', baseUrl: 'http://127.0.0.1:9', fetch });
    const created = await api.listings.create({ title: 'Case law', accessModel: 'one_time', price: 1.5 });
    expect(created).toEqual(listing);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe('http://127.0.0.1:9/studio/listings');
    expect(calls[0]!.init.method).toBe('POST');
    expect(calls[0]!.init.headers).toMatchObject({
      'X-Studio-Token': 'tok-123',
      'Content-Type': 'application/json',
    });
    expect(JSON.parse(String(calls[0]!.init.body))).toEqual({
      title: 'Case law',
      accessModel: 'one_time',
      price: 1.5,
    });
  });

  it('builds list queries without empty parameters and keeps the pagination', async () => {
    const page = { data: [listing], pagination: { total: 41, limit: 25, offset: 25, hasMore: false } };
    const { calls, fetch } = fakeFetch(200, page);
    const api = createStudioApi({ token: 't', fetch });
    expect(await api.listings.list({ q: 'law & order', domain: '', limit: 25, offset: 25 })).toEqual(page);
    expect(calls[0]!.url).toBe('/studio/listings?q=law+%26+order&limit=25&offset=25');
    expect(calls[0]!.init.body).toBeUndefined();
  });

  it('escapes ids in paths', async () => {
    const { calls, fetch } = fakeFetch(200, { data: {} });
    await createStudioApi({ token: 't', fetch }).keys.revoke('key/../x');
    expect(calls[0]!.url).toBe('/studio/keys/key%2F..%2Fx/revoke');
  });

  it('throws the server error body as a StudioApiError with code, status, message and request id', async () => {
    const body = {
      error: {
        code: 'invalid_request',
        message: 'price: a per_query listing needs a price above 0 SOL per query.',
        status: 400,
        requestId: 'req_abc',
      },
    };
    const { fetch } = fakeFetch(400, body);
    const error = await createStudioApi({ token: 't', fetch })
      .listings.create({ title: 'x', accessModel: 'per_query', price: 0 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StudioApiError);
    expect(error).toMatchObject({
      code: 'invalid_request',
      status: 400,
      requestId: 'req_abc',
      message: 'price: a per_query listing needs a price above 0 SOL per query.',
    });
  });

  it('keeps what a non-JSON error response said', async () => {
    const { fetch } = fakeFetch(503, 'The studio UI is not built. Run `npm run build:web`.', 'text/plain');
    const error = await createStudioApi({ token: 't', fetch })
      .info()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'http_503',
      status: 503,
      message: 'The studio UI is not built. Run `npm run build:web`.',
    });
  });

  it('reports an unreachable server as network_error', async () => {
    const fetch = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof globalThis.fetch;
    const error = await createStudioApi({ token: 't', fetch })
      .keys.list()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'network_error', status: 0 });
    expect((error as Error).message).toContain('Failed to fetch');
  });

  it('refuses to call without a token, saying where to open the studio', async () => {
    const { calls, fetch } = fakeFetch(200, { data: {} });
    const error = await createStudioApi({ token: undefined, fetch })
      .info()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'missing_token' });
    expect((error as Error).message).toContain('kbstudio serve');
    expect(calls).toHaveLength(0);
  });

  it('rejects a success response that is not JSON', async () => {
    const { fetch } = fakeFetch(200, '<html>proxy</html>', 'text/html');
    await expect(createStudioApi({ token: 't', fetch }).info()).rejects.toMatchObject({
      code: 'invalid_response',
    });
  });
});

describe('readStudioToken', () => {
  const doc = (content: string | undefined) => ({
    querySelector: (selector: string) =>
      selector === 'meta[name="kbstudio-token"]' && content !== undefined
        ? ({ content } as HTMLMetaElement)
        : null,
  });

  it('reads the meta tag the server injects', () => {
    expect(readStudioToken(doc('abc_DEF-123') as unknown as Document)).toBe('abc_DEF-123');
  });

  it('is undefined without the tag or with an empty one', () => {
    expect(readStudioToken(doc(undefined) as unknown as Document)).toBeUndefined();
    expect(readStudioToken(doc('') as unknown as Document)).toBeUndefined();
  });
});

describe('fieldErrorsOf', () => {
  const invalid = (message: string, details?: unknown) =>
    new StudioApiError({ code: 'invalid_request', status: 400, message, details });

  it('maps zod issues in details to their top-level field, first issue per field', () => {
    const error = invalid('title: Too small', {
      issues: [
        { in: 'body', path: ['title'], message: 'Too small: expected string to have >=1 characters' },
        { in: 'body', path: ['tags', 2], message: 'Too big: expected string to have <=50 characters' },
        { in: 'body', path: ['title'], message: 'second issue' },
      ],
    });
    expect(fieldErrorsOf(error)).toEqual({
      title: 'Too small: expected string to have >=1 characters',
      tags: 'Too big: expected string to have <=50 characters',
    });
  });

  it('falls back to the "field: message" form of the message', () => {
    expect(
      fieldErrorsOf(
        invalid('subscriptionDays: a subscription listing needs its period length in days (1..3650).'),
      ),
    ).toEqual({
      subscriptionDays: 'A subscription listing needs its period length in days (1..3650).',
    });
  });

  it('is empty for other errors', () => {
    expect(fieldErrorsOf(new StudioApiError({ code: 'not_found', status: 404, message: 'x: y' }))).toEqual(
      {},
    );
    expect(fieldErrorsOf(new Error('title: no'))).toEqual({});
    expect(fieldErrorsOf(invalid('The request body is broken'))).toEqual({});
  });
});
