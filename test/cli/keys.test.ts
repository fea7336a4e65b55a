import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliRunner } from '../helpers/cli';
import { cliInProcess } from '../helpers/mainInProcess';
import { tempDir } from '../helpers/studio';

const dir = tempDir('kbs-keys-cli-');
afterAll(() => dir.remove());
// main() in this process (a spawned kbstudio costs about a second), but for one refusal run as a real
// process below, to see a command end to end as a shell does.
const cli = cliInProcess(join(dir.path, 'data'));
const cliProcess = cliRunner(join(dir.path, 'data'));

describe('kbstudio keys', () => {
  it('refuses a --label over 100 characters, as the studio does, and creates no key', async () => {
    // A real process: the exit status a shell sees, and its two streams.
    const refused = await cliProcess('keys', 'create', '--label', 'x'.repeat(5000));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--label: The label can be at most 100 characters (got 5000).');
    expect(refused.stdout).toBe('');
    expect((await cli('--json', 'keys', 'list')).json.data).toEqual([]);
    const trimmed = await cli('--json', 'keys', 'create', '--label', `  ${'y'.repeat(100)}  `);
    expect(trimmed.code).toBe(0);
    expect((await cli('--json', 'keys', 'list')).json.data[0].label).toBe('y'.repeat(100));
  });

  it('says a key was already revoked, and when, instead of revoking it again', async () => {
    const { id } = (await cli('--json', 'keys', 'create', '--label', 'ci')).json;
    const first = await cli('keys', 'revoke', id);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`^Revoked ${id} \\(kbs_\\w{4}…\\)\\.\\n$`));
    const { revokedAt } = (await cli('--json', 'keys', 'list')).json.data.find(
      (k: { id: string }) => k.id === id,
    );
    const again = await cli('keys', 'revoke', id);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `${id} (${again.stdout.split('(')[1]!.split(')')[0]}) was already revoked on ${revokedAt}.\n`,
    );
    expect(again.stdout).not.toContain('Revoked');
    expect((await cli('--json', 'keys', 'revoke', id)).json.revokedAt).toBe(revokedAt);
  });
});
