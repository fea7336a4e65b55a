import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startStudio, type TestStudio } from '../helpers/studio';

let studio: TestStudio;
beforeAll(async () => {
  studio = await startStudio();
});
afterAll(() => studio.close());

const put = (key: string, value: unknown) =>
  studio.api(`/studio/settings/${key}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', 'X-Studio-Token': studio.studioToken },
    body: JSON.stringify({ value }),
  });

describe('PUT /studio/settings/:key', () => {
  it('stores a key trimmed and shows it masked: never most of a short secret', async () => {
    const res = await put('cohere.apiKey', '  short1234  ');
    expect(res.status).toBe(200);
    expect((await json(res)).data).toMatchObject({ source: 'stored', value: '••••' });
    expect(studio.services.settings.all()['cohere.apiKey']).toBe('short1234');
    const long = await json(await put('openai.apiKey', 'sk-test-1234567890abcd'));
    expect(long.data.value).toBe('sk-••••abcd');
  });

  it('clears a setting given a blank value', async () => {
    await put('cohere.apiKey', 'co-test-0123456789');
    const res = await put('cohere.apiKey', '   ');
    expect(res.status).toBe(200);
    expect((await json(res)).data).toMatchObject({ source: 'unset', value: null });
  });

  it('refuses a value over 4,000 characters, as `kbstudio settings set` does', async () => {
    const res = await put('cohere.apiKey', 'k'.repeat(4_001));
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toContain('The value can be at most 4,000 characters.');
  });
});

describe('GET /studio/settings', () => {
  it('masks the password and query values of a base URL the environment sets, and of a stored one', async () => {
    const env = studio.services.environment;
    env.OPENAI_BASE_URL = 'https://user:hunter2pass@proxy.example.com/v1?token=secret123456';
    try {
      // Refused when set (its requests could not use it), and masked when one stored before is shown.
      const refused = await put(
        'cohere.baseUrl',
        'https://me:s3cretpass@cohere.proxy.example/v2?api_key=abcdef123456',
      );
      expect(refused.status).toBe(400);
      expect(JSON.stringify(await json(refused))).not.toMatch(/s3cretpass|abcdef123456/);
      studio.services.settings.set(
        'cohere.baseUrl',
        'https://me:s3cretpass@cohere.proxy.example/v2?api_key=abcdef123456',
      );
      const res = await studio.api('/studio/settings', {
        headers: { 'X-Studio-Token': studio.studioToken },
      });
      const body = await json(res);
      const byKey = (key: string) => body.data.find((s: { key: string }) => s.key === key);
      expect(byKey('openai.baseUrl')).toMatchObject({
        source: 'environment',
        env: 'OPENAI_BASE_URL',
        value: 'https://user:••••@proxy.example.com/v1?token=••••',
      });
      expect(byKey('cohere.baseUrl').value).toBe('https://me:••••@cohere.proxy.example/v2?api_key=••••');
      expect(JSON.stringify(body)).not.toMatch(/hunter2pass|secret123456|s3cretpass|abcdef123456/);
      // What requests use is the value as set.
      expect(studio.services.settings.all()['cohere.baseUrl']).toContain('s3cretpass');
    } finally {
      delete env.OPENAI_BASE_URL;
      await put('cohere.baseUrl', '');
    }
  });
});
