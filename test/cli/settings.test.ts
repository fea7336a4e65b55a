import { afterAll, describe, expect, it } from 'vitest';
import { openServices } from '../../src/db/services';
import { cliRunner } from '../helpers/cli';
import { cliInProcess } from '../helpers/mainInProcess';
import { tempDir } from '../helpers/studio';

const dir = tempDir();
afterAll(() => dir.remove());

// main() in this process (a spawned kbstudio costs about a second): the environment overrides are read
// when a command opens the data directory, and the in-process runs set them for their run only. One
// refusal runs as a real process, to see a command end to end as a shell does.
const cli = (env: Record<string, string>, ...args: string[]) =>
  cliInProcess(dir.path, { json: true, env: { OPENAI_API_KEY: '', ...env } })(...args);
const human = (env: Record<string, string>) => cliInProcess(dir.path, { env });

describe('kbstudio settings', () => {
  it('stores settings, masks secrets, and lets the environment override them', async () => {
    expect((await cli({}, 'settings', 'set', 'openai.apiKey', 'sk-test-1234567890abcd')).code).toBe(0);
    const shown = await cli({}, 'settings', 'show');
    const key = shown.json.data.find((s: { key: string }) => s.key === 'openai.apiKey');
    expect(key).toMatchObject({ source: 'stored', value: 'sk-••••abcd' });
    expect(JSON.stringify(shown.json.data)).not.toContain('1234567890');
    const overridden = await cli({ OPENAI_API_KEY: 'sk-from-env-xyzw9876' }, 'settings', 'show');
    expect(overridden.json.data.find((s: { key: string }) => s.key === 'openai.apiKey')).toMatchObject({
      source: 'environment',
      value: 'sk-••••9876',
    });
  });

  it("clears a provider's stored key when its base URL moves: the key goes only where it was stored for", async () => {
    await cli({}, 'settings', 'set', 'cohere.apiKey', 'co-test-1234567890abcd');
    const moved = await cli({}, 'settings', 'set', 'cohere.baseUrl', 'http://127.0.0.1:9');
    expect(moved.json).toMatchObject({ key: 'cohere.baseUrl', cleared: ['cohere.apiKey'] });
    const shown = await cli({}, 'settings', 'show');
    expect(shown.json.data.find((s: { key: string }) => s.key === 'cohere.apiKey')).toMatchObject({
      source: 'unset',
      value: null,
    });
    // A key stored for the new address stays when the same address is stored again.
    await cli({}, 'settings', 'set', 'cohere.apiKey', 'co-test-abcdefghijklmn');
    const same = await cli({}, 'settings', 'set', 'cohere.baseUrl', 'http://127.0.0.1:9');
    expect(same.json.cleared).toBeUndefined();
    const movedAgain = await human({ COHERE_API_KEY: '' })(
      'settings',
      'set',
      'cohere.baseUrl',
      'http://127.0.0.1:10',
    );
    expect(movedAgain.stdout).toContain(
      'cohere.apiKey cleared: a key is sent only to the address it was stored for',
    );
  });

  it('trims what is typed and clears a setting given a blank value, as the Settings view does', async () => {
    const typed = human({ COHERE_API_KEY: '' });
    expect((await typed('settings', 'set', 'cohere.apiKey', ' co-test-0123456789 ')).stdout).toBe(
      'Stored cohere.apiKey.\n',
    );
    const services = openServices(dir.path);
    try {
      expect(services.settings.all()['cohere.apiKey']).toBe('co-test-0123456789');
    } finally {
      services.close();
    }
    const blank = await typed('settings', 'set', 'cohere.apiKey', '   ');
    expect(blank.code).toBe(0);
    expect(blank.stdout).toBe('Cleared cohere.apiKey.\n');
    const shown = await cli({ COHERE_API_KEY: '' }, 'settings', 'show');
    expect(shown.json.data.find((s: { key: string }) => s.key === 'cohere.apiKey')).toMatchObject({
      source: 'unset',
      value: null,
    });
  });

  it('refuses a value over 4,000 characters, as PUT /studio/settings does', async () => {
    // A real process: the exit status a shell sees, and the error body alone on its stdout.
    const long = await cliRunner(dir.path, { json: true, env: { OPENAI_API_KEY: '' } })(
      'settings',
      'set',
      'cohere.apiKey',
      'k'.repeat(5000),
    );
    expect(long.code).toBe(1);
    expect(long.json.error.message).toBe(
      'cohere.apiKey: The value can be at most 4,000 characters (got 5,000).',
    );
    const shown = await cli({ COHERE_API_KEY: '' }, 'settings', 'show');
    expect(JSON.stringify(shown.json.data)).not.toContain('kkkk');
  });

  it('refuses unknown keys and bad URLs naming them', async () => {
    const unknown = await cli({}, 'settings', 'set', 'openai.key', 'x');
    expect(unknown.code).toBe(1);
    expect(unknown.json.error.message).toMatch(/'openai\.key' is not a setting/);
    const badUrl = await cli({}, 'settings', 'set', 'solana.rpcUrl', 'devnet');
    expect(badUrl.json.error.message).toMatch(/^solana\.rpcUrl: must be an http\(s\) URL/);
    // Checked when stored, not first when a listing is published.
    const badProgram = await cli({}, 'settings', 'set', 'solana.programId', 'notbase58!');
    expect(badProgram.code).toBe(1);
    expect(badProgram.json.error.message).toBe(
      'solana.programId: must be a base58 Solana address (32 bytes).',
    );
    const program = await cli({}, 'settings', 'set', 'solana.programId', '11111111111111111111111111111111');
    expect(program.code).toBe(0);
    // A typed key that would read as one the desktop app sealed.
    const sealedLike = await cli({}, 'settings', 'set', 'openai.apiKey', 'sealed:v1:QUJD');
    expect(sealedLike.json.error.message).toMatch(/^openai\.apiKey: must not begin with 'sealed:v1:'/);
  });

  it("masks a base URL's password and query values in `settings show` and `settings set`", async () => {
    const envUrl = 'https://user:hunter2pass@proxy.example.com/v1?token=secret123456';
    const table = await human({ OPENAI_API_KEY: '', OPENAI_BASE_URL: envUrl })('settings', 'show');
    expect(table.stdout).toContain('https://user:••••@proxy.example.com/v1?token=••••');
    // Such a URL is refused when set (its requests could not use it), without echoing its secrets.
    const set = await cli(
      {},
      'settings',
      'set',
      'cohere.baseUrl',
      'https://me:s3cretpass@h.example/?k=abc123',
    );
    expect(set.code).toBe(1);
    expect(JSON.stringify(set.json)).toContain('cohere.baseUrl: must not hold a user name or password');
    expect(JSON.stringify(set.json)).not.toMatch(/s3cretpass|abc123/);
    const shown = await cli({ OPENAI_BASE_URL: envUrl }, 'settings', 'show');
    expect(JSON.stringify(shown.json)).not.toMatch(/hunter2pass|secret123456|s3cretpass|abc123/);
    expect(table.stdout).not.toMatch(/hunter2pass|secret123456/);
    await cli({}, 'settings', 'set', 'cohere.baseUrl', '');
  });

  it('refuses credentials in hosted.url, as in the other base URLs, and masks one from the environment', async () => {
    for (const value of [
      'http://user:pw-secret1@127.0.0.1:9/v1',
      'https://api.example.com/v1?api-key=abcdef1234567890abcd',
    ]) {
      const set = await cli({}, 'settings', 'set', 'hosted.url', value);
      expect(set.code, value).toBe(1);
      expect(set.json.error).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(set.json.error.message).toMatch(
        /^hosted\.url: must not hold (a user name or password|a query string)/,
      );
      expect(JSON.stringify(set.json)).not.toMatch(/pw-secret1|abcdef1234567890abcd/);
    }
    const shown = await cli({}, 'settings', 'show');
    expect(shown.json.data.find((v: { key: string }) => v.key === 'hosted.url')).toMatchObject({
      value: null,
      source: 'unset',
    });
    const table = (
      await human({
        KBSTUDIO_HOSTED_URL: 'https://me:pw-secret2@api.example.com/v1?api-key=abcdef1234567890abcd',
      })('settings', 'show')
    ).stdout;
    expect(table).toContain('https://me:••••@api.example.com/v1?api-key=••••');
    expect(table).not.toMatch(/pw-secret2|abcdef1234567890abcd/);
    expect((await cli({}, 'settings', 'set', 'hosted.url', 'https://api.example.com/v1')).code).toBe(0);
    await cli({}, 'settings', 'set', 'hosted.url', '');
  });
});
