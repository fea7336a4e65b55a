import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../../../src/core/errors';
import { hostedEmbedder } from '../../../../src/core/embed/providers';
import type { EmbedKind } from '../../../../src/core/embed/embedder';
import type { FakeServer } from '../../../helpers/fakeProviders';
import {
  ECHOED_COHERE_KEY,
  ECHOED_OPENAI_KEY,
  startKeyEchoingProvider,
} from '../../../helpers/fakeProviders/keyEcho';

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const PROVIDERS = [
  { provider: 'openai', name: 'OpenAI', model: 'text-embedding-3-small', key: ECHOED_OPENAI_KEY },
  { provider: 'cohere', name: 'Cohere', model: 'embed-english-v3.0', key: ECHOED_COHERE_KEY },
] as const;

async function failure(promise: Promise<unknown>): Promise<DomainError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

/** Neither the key nor its first or last 8 characters. */
function expectNoKey(message: string, key: string) {
  expect(message).not.toContain(key);
  expect(message).not.toContain(key.slice(0, 8));
  expect(message).not.toContain(key.slice(-8));
}

async function embedderFor(provider: 'openai' | 'cohere', model: string, key: string) {
  const server = await startKeyEchoingProvider(provider, 'the-right-key-0123456789');
  servers.push(server);
  const settings =
    provider === 'openai'
      ? { openaiApiKey: key, openaiBaseUrl: `${server.url}/v1` }
      : { cohereApiKey: key, cohereBaseUrl: server.url };
  return { server, embedder: hostedEmbedder(model, settings, { sleep: async () => undefined }) };
}

describe('a provider that quotes the API key back', () => {
  for (const { provider, name, model, key } of PROVIDERS) {
    for (const kind of ['query', 'document'] as EmbedKind[]) {
      it(`${name}: a refused key (401) is not quoted in the ${kind} error`, async () => {
        const { server, embedder } = await embedderFor(provider, model, key);
        const err = await failure(embedder.embed(['what is due?'], kind));
        expect(server.requests).toHaveLength(1);
        expect(err.code).toBe('embedding_provider_unavailable');
        expect(err.message).toContain(`${name} refused the API key (401: `);
        expect(err.message).toContain('[redacted]');
        expectNoKey(err.message, key);
      });
    }

    it(`${name}: the key, a run of it or the bearer header is not quoted for any status`, async () => {
      const { server, embedder } = await embedderFor(provider, model, key);
      const quoting = (message: string) => (provider === 'openai' ? { error: { message } } : { message });
      const replies = [
        { status: 400, body: quoting(`bad request for key ${key.slice(0, 12)}`) },
        { status: 403, body: quoting(`key …${key.slice(-9)} may not use this model`) },
        { status: 404, body: `<html>no route; Authorization: Bearer ${key}</html>` },
        { status: 422, body: quoting(`header was "Bearer ${key.toLowerCase()}"`) },
        { status: 500, headers: { 'x-should-retry': 'false' }, body: quoting(`crashed on ${key}`) },
        { status: 429, headers: { 'x-should-retry': 'false' }, body: quoting(`${key} is over quota`) },
      ];
      for (const reply of replies) {
        server.script(reply);
        const err = await failure(embedder.embed(['what is due?'], 'query'));
        expect(err.message).toContain(`(${reply.status}: `);
        expect(err.message).toContain('[redacted]');
        expectNoKey(err.message, key);
        expectNoKey(err.message.toLowerCase(), key.toLowerCase());
      }
    });
  }
});
