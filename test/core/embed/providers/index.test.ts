import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../../../src/core/errors';
import { EMBEDDING_MODELS } from '../../../../src/core/embed/models';
import { HOSTED_MODELS, hostedEmbedder, isHostedModel } from '../../../../src/core/embed/providers';
import {
  COHERE_TEST_KEY,
  cohereFakeVector,
  fakeVector,
  OPENAI_TEST_KEY,
  startFakeCohere,
  startFakeOpenAi,
  type FakeServer,
} from '../../../helpers/fakeProviders';

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('expected an error');
}

describe('hostedEmbedder', () => {
  it('covers exactly the hosted models of the supported list', () => {
    expect(Object.keys(HOSTED_MODELS).sort()).toEqual(
      Object.keys(EMBEDDING_MODELS)
        .filter((m) => m !== 'kbs-offline-hybrid-v1')
        .sort(),
    );
    expect(isHostedModel('embed-english-v3.0')).toBe(true);
    expect(isHostedModel('kbs-offline-hybrid-v1')).toBe(false);
    expect(isHostedModel('toString')).toBe(false);
  });

  it('says which key is missing and where to set it', () => {
    const openai = thrown(() => hostedEmbedder('text-embedding-3-large', { cohereApiKey: COHERE_TEST_KEY }));
    expect(openai.code).toBe('embedding_provider_unavailable');
    expect(openai.message).toBe(
      "The embedding model 'text-embedding-3-large' is unavailable: no OpenAI API key is set. Set one with `kbstudio settings set openai.apiKey <key>` or the OPENAI_API_KEY environment variable.",
    );
    const cohere = thrown(() =>
      hostedEmbedder('embed-multilingual-v3.0', { openaiApiKey: 'sk-x', cohereApiKey: ' ' }),
    );
    expect(cohere.message).toContain('no Cohere API key is set');
    expect(cohere.message).toContain('kbstudio settings set cohere.apiKey <key>');
    expect(cohere.message).toContain('COHERE_API_KEY');
  });

  it('refuses a model that is not hosted, listing the supported ones', () => {
    const err = thrown(() => hostedEmbedder('all-MiniLM-L6-v2', { openaiApiKey: 'sk-x' }));
    expect(err.code).toBe('unsupported_embedding_model');
    expect(err.message).toContain('text-embedding-3-small');
    expect(err.message).toContain('embed-english-v3.0');
  });

  it('calls OpenAI or Cohere at the configured base URLs with their keys', async () => {
    const openai = await startFakeOpenAi();
    const cohere = await startFakeCohere();
    servers.push(openai, cohere);
    const settings = {
      openaiApiKey: OPENAI_TEST_KEY,
      openaiBaseUrl: `${openai.url}/v1`,
      cohereApiKey: COHERE_TEST_KEY,
      cohereBaseUrl: `${cohere.url}/`,
    };

    const small = hostedEmbedder('text-embedding-3-small', settings);
    expect(small.dimensions).toBe(1536);
    const [v] = await small.embed(['hello'], 'query');
    expect(Array.from(v!)).toEqual(Array.from(fakeVector('hello', 1536)));

    const english = hostedEmbedder('embed-english-v3.0', settings);
    expect(english.dimensions).toBe(1024);
    const [w] = await english.embed(['hello'], 'query');
    expect(Array.from(w!)).toEqual(Array.from(cohereFakeVector('search_query', 'hello', 1024)));

    expect(openai.requests).toHaveLength(1);
    expect(cohere.requests).toHaveLength(1);
    expect(cohere.requests[0]!.path).toBe('/v2/embed');
  });
});
