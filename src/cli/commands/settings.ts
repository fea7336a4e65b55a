import type { Command } from 'commander';
import { SETTINGS, settingKey, storeSetting } from '../../core/settings';
import { table } from '../output';
import { withServices } from '../context';

export function settingsCommand(program: Command): void {
  const settings = program
    .command('settings')
    .description('embedding provider keys, Solana RPC, hosted service URL');

  settings
    .command('show')
    .description('show every setting (secrets masked) and where its value comes from')
    .action((_opts: unknown, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        const views = services.settings.describe(services.environment);
        // As every list command: the API's list envelope (GET /studio/settings answers the same).
        out.result({ data: views }, () =>
          table(
            ['KEY', 'VALUE', 'FROM', 'WHAT'],
            views.map((v) => [
              v.key,
              v.unreadable ? '(encrypted by the app)' : (v.value ?? '-'),
              v.source,
              v.description,
            ]),
          ),
        );
      }),
    );

  settings
    .command('set')
    .description(
      'store a setting, trimmed (environment variables still override it); an empty value clears it',
    )
    .argument('<key>', `one of: ${Object.keys(SETTINGS).join(', ')}`)
    .argument('<value>', "the value; '' (or only spaces) clears the setting")
    .action((key: string, value: string, _opts: unknown, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        const checked = settingKey(key);
        const cleared = storeSetting(services.settings, checked, value);
        const view = services.settings.describe(services.environment).find((v) => v.key === checked)!;
        const clearedNote = cleared.length
          ? `\n${cleared.join(', ')} cleared: a key is sent only to the address it was stored for; set it again for this one.`
          : '';
        const fromEnvironment = view.source === 'environment';
        const done =
          value.trim() === ''
            ? fromEnvironment
              ? `Cleared ${checked}, but ${SETTINGS[checked].env} still sets it.`
              : `Cleared ${checked}.`
            : fromEnvironment
              ? `Stored ${checked}, but the environment overrides it while it is set.`
              : `Stored ${checked}.`;
        out.result(cleared.length ? { ...view, cleared } : view, () => done + clearedNote);
      }),
    );
}
