import { cohereFakeVector } from './cohere';
import { fakeVector, startFakeServer, type FakeServer, type RecordedRequest, type Reply } from './server';

/** A key a provider refuses and quotes back in full, as some OpenAI- and Cohere-compatible servers do. */
export const ECHOED_OPENAI_KEY = 'sk-FULLSECRET-abc123';
export const ECHOED_COHERE_KEY = 'co-FULLSECRET-zyx987';

const bearer = (req: RecordedRequest) => String(req.headers.authorization ?? '').replace(/^Bearer /, '');

/**
 * An OpenAI- or Cohere-compatible embeddings server that serves `goodKey` and answers any other key
 * with 401 quoting the key it was sent, in the provider's error format:
 * `{"error":{"message":"Incorrect API key provided: <key>"}}` / `{"message":"invalid api token <key>"}`.
 */
export function startKeyEchoingProvider(provider: 'openai' | 'cohere', goodKey: string): Promise<FakeServer> {
  return startFakeServer((req): Reply => {
    const key = bearer(req);
    if (provider === 'openai') {
      if (key !== goodKey) {
        return {
          status: 401,
          body: { error: { message: `Incorrect API key provided: ${key}`, code: 'invalid_api_key' } },
        };
      }
      const { input, model } = req.body as { input: string[]; model: string };
      const size = model === 'text-embedding-3-large' ? 3072 : 1536;
      return {
        status: 200,
        body: {
          object: 'list',
          data: input.map((text, index) => ({
            object: 'embedding',
            index,
            embedding: Array.from(fakeVector(text, size)),
          })),
          model,
        },
      };
    }
    if (key !== goodKey) return { status: 401, body: { message: `invalid api token ${key}` } };
    const { texts, input_type: inputType } = req.body as { texts: string[]; input_type: string };
    return {
      status: 200,
      body: { embeddings: { float: texts.map((t) => Array.from(cohereFakeVector(inputType, t, 1024))) } },
    };
  });
}
