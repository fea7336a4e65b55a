import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonRequested } from '../../src/cli/main';
import { runMain } from '../helpers/mainInProcess';
import { tempDir } from '../helpers/studio';

const dir = tempDir();
afterAll(() => dir.remove());

describe('--json after the -- that ends the options', () => {
  it('is an operand, not the flag', () => {
    const argv = (...args: string[]) => ['node', 'kbstudio', ...args];
    expect(jsonRequested(argv('query', '--listing', 'lst_x', '--', '--json'))).toBe(false);
    expect(jsonRequested(argv('--json', 'query', '--listing', 'lst_x', '--', '--json'))).toBe(true);
    expect(jsonRequested(argv('query', '--listing', 'lst_x', '--json', '--', 'text'))).toBe(true);
    expect(jsonRequested(argv('listings', 'list'))).toBe(false);
  });

  it('leaves errors in their human form: one line on stderr, nothing on stdout', async () => {
    const data = join(dir.path, 'data');
    const text = await runMain(['--data-dir', data, 'query', '--listing', 'lst_missing', '--', '--json']);
    expect(text).toEqual({ code: 1, stdout: '', stderr: "kbstudio: Listing 'lst_missing' was not found.\n" });

    const json = await runMain([
      '--data-dir',
      data,
      '--json',
      'query',
      '--listing',
      'lst_missing',
      '--',
      '--json',
    ]);
    expect(json.code).toBe(1);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'listing_not_found', status: 404 });
  });
});
