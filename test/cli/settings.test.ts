import { afterAll, describe, expect, it } from 'vitest';
import { cliRunner } from '../helpers/cli';
import { tempDir } from '../helpers/studio';

const dir = tempDir();
afterAll(() => dir.remove());

const cli = (env: Record<string, string>, ...args: string[]) =>
  cliRunner(dir.path, { json: true, env: { OPENAI_API_KEY: '', ...env } })(...args);

describe('kbstudio settings', () => {
  it('stores settings, masks secrets, and lets the environment override them', async () => {
    expect((await cli({}, 'settings', 'set', 'openai.apiKey', 'sk-test-1234567890abcd')).code).toBe(0);
    const shown = await cli({}, 'settings', 'show');
    const key = shown.json.find((s: { key: string }) => s.key === 'openai.apiKey');
    expect(key).toMatchObject({ source: 'stored', value: 'sk-••••abcd' });
    expect(JSON.stringify(shown.json)).not.toContain('1234567890');
    const overridden = await cli({ OPENAI_API_KEY: 'sk-from-env-xyzw9876' }, 'settings', 'show');
    expect(overridden.json.find((s: { key: string }) => s.key === 'openai.apiKey')).toMatchObject({
      source: 'environment',
      value: 'sk-••••9876',
    });
  });

  it('refuses unknown keys and bad URLs naming them', async () => {
    const unknown = await cli({}, 'settings', 'set', 'openai.key', 'x');
    expect(unknown.code).toBe(1);
    expect(unknown.json.error.message).toMatch(/'openai\.key' is not a setting/);
    const badUrl = await cli({}, 'settings', 'set', 'solana.rpcUrl', 'devnet');
    expect(badUrl.json.error.message).toMatch(/^solana\.rpcUrl: must be an http\(s\) URL/);
  });
});
