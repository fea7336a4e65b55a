import { describe, expect, it } from 'vitest';
import { ingestErrorText } from '../../../src/renderer/src/features/ingest/jobView';

describe('ingestion errors as shown', () => {
  it('adds where the studio sets a missing provider key', () => {
    const message =
      "The embedding model 'text-embedding-3-small' is unavailable: no OpenAI API key is set. Set one with `kbstudio settings set openai.apiKey <key>` or the OPENAI_API_KEY environment variable.";
    expect(ingestErrorText({ code: 'embedding_provider_unavailable', message })).toBe(
      `${message} (in the studio: Settings → Embedding providers)`,
    );
  });

  it('leaves other errors as the server wrote them', () => {
    const other = { code: 'embedding_provider_unavailable', message: 'The provider answered 500.' };
    expect(ingestErrorText(other)).toBe(other.message);
    const rejected = { code: 'unsupported_file_type', message: 'notes.xyz: unsupported file type.' };
    expect(ingestErrorText(rejected)).toBe(rejected.message);
  });
});
