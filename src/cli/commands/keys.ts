import type { Command } from 'commander';
import { table } from '../output';
import { withServices } from '../context';
import { walletAddressOf } from '../walletFlag';

export function keysCommand(program: Command): void {
  const keys = program.command('keys').description('API keys for the /v1 API (scoped to a wallet)');

  keys
    .command('create')
    .description('create an API key; it is printed only this once')
    .option(
      '--wallet <name|address>',
      'wallet the key is scoped to, by name or address (default: the studio default wallet)',
    )
    .option('--label <label>', 'a name to recognise the key by (at most 100 characters)', '')
    .action((opts: { wallet?: string; label: string }, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        const created = services.apiKeys.create(
          walletAddressOf(services, opts.wallet) ?? services.wallets.defaultWallet().address,
          opts.label,
        );
        out.result(
          created,
          () =>
            `${created.key}\n\nKey ${created.id} for wallet ${created.wallet}. It is shown only now: store it safely.`,
        );
      }),
    );

  keys
    .command('list')
    .description('list API keys (never the keys themselves)')
    .action((_opts: unknown, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        const list = services.apiKeys.list();
        out.result({ data: list }, () =>
          table(
            ['ID', 'PREFIX', 'LABEL', 'WALLET', 'CREATED', 'LAST USED', 'REVOKED'],
            list.map((k) => [
              k.id,
              `${k.prefix}…`,
              k.label,
              k.wallet,
              k.createdAt,
              k.lastUsedAt,
              k.revokedAt,
            ]),
          ),
        );
      }),
    );

  keys
    .command('revoke')
    .description('revoke an API key at once')
    .argument('<id>', 'key id (key_...)')
    .action((id: string, _opts: unknown, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        const { key: revoked, alreadyRevoked } = services.apiKeys.revokeOnce(id);
        out.result(revoked, () =>
          alreadyRevoked
            ? `${revoked.id} (${revoked.prefix}…) was already revoked on ${revoked.revokedAt}.`
            : `Revoked ${revoked.id} (${revoked.prefix}…).`,
        );
      }),
    );
}
