import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../helpers/fakeProviders';
import {
  ECHOED_COHERE_KEY,
  ECHOED_OPENAI_KEY,
  startKeyEchoingProvider,
} from '../helpers/fakeProviders/keyEcho';
import { cliRunner } from '../helpers/cli';
import { cliInProcess } from '../helpers/mainInProcess';
import { tempDir } from '../helpers/studio';

const dir = tempDir('kbs-provider-key-cli-');
const fakes: FakeServer[] = [];
afterAll(async () => {
  await Promise.all(fakes.map((f) => f.close()));
  dir.remove();
});

const GOOD_KEY = 'the-right-key-0123456789';
const PROVIDERS = [
  {
    name: 'OpenAI',
    provider: 'openai',
    model: 'text-embedding-3-small',
    env: (url: string, key: string) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: key }),
    badKey: ECHOED_OPENAI_KEY,
  },
  {
    name: 'Cohere',
    provider: 'cohere',
    model: 'embed-english-v3.0',
    env: (url: string, key: string) => ({ COHERE_BASE_URL: url, COHERE_API_KEY: key }),
    badKey: ECHOED_COHERE_KEY,
  },
] as const;

describe('kbstudio query and ingest with a provider that quotes a refused API key back', () => {
  for (const p of PROVIDERS) {
    it(`${p.name}: the key is not printed`, async () => {
      const fake = await startKeyEchoingProvider(p.provider, GOOD_KEY);
      fakes.push(fake);
      const data = join(dir.path, p.provider);
      // main() in this process (a spawned kbstudio costs about a second), with the provider's variables
      // set for each run only; the refused query runs as a real process: its exit status, and all that
      // process printed, whatever wrote it.
      const good = cliInProcess(data, { env: p.env(fake.url, GOOD_KEY) });
      const bad = cliInProcess(data, { env: p.env(fake.url, p.badKey) });
      const badProcess = cliRunner(data, { env: p.env(fake.url, p.badKey) });
      const listing = (
        await good(
          '--json',
          'listings',
          'create',
          '--title',
          'Hosted',
          '--access-model',
          'one_time',
          '--price',
          '1',
          '--embedding-model',
          p.model,
        )
      ).json.id as string;
      const file = (name: string, text: string) => {
        const path = join(dir.path, `${p.provider}-${name}`);
        writeFileSync(path, text);
        return path;
      };
      expect(
        (
          await good(
            'ingest',
            '--listing',
            listing,
            file('a.md', '# Invoices\n\nInvoices are due in 30 days.\n'),
          )
        ).code,
      ).toBe(0);

      const query = await badProcess('query', '--listing', listing, 'when are invoices due?');
      expect(query.code).toBe(1);
      expect(query.stderr).toContain(`${p.name} refused the API key (401: `);
      expect(query.stdout + query.stderr).not.toContain('FULLSECRET');

      const ingest = await bad(
        'ingest',
        '--listing',
        listing,
        file('b.md', '# Refunds\n\nRefunds take five business days.\n'),
      );
      expect(ingest.stdout + ingest.stderr).toContain(`${p.name} refused the API key (401: `);
      expect(ingest.stdout + ingest.stderr).not.toContain('FULLSECRET');
      expect(fake.requests.some((r) => r.headers.authorization === `Bearer ${p.badKey}`)).toBe(true);
    });
  }
});
