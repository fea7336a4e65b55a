import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { InvalidInput } from '../../core/errors';
import type { Wallet } from '../../shared/studio';
import { table } from '../output';
import { withServices } from '../context';

const describe = (w: Wallet) =>
  `${w.name}${w.isDefault ? ' (default)' : ''}\n  address: ${w.address}\n  secret: ${w.encryptedAtRest ? 'encrypted at rest' : 'stored unencrypted in the data directory (the desktop app encrypts with the OS keychain)'}`;

export function walletCommand(program: Command): void {
  const wallet = program
    .command('wallet')
    .description('Solana wallets held by this studio (secrets never leave it)');

  wallet
    .command('create')
    .description('create a new keypair')
    .option('--name <name>', 'wallet name')
    .action((opts: { name?: string }, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        const created = services.wallets.create(opts.name);
        out.result(created, () => describe(created));
      }),
    );

  wallet
    .command('import')
    .description('import a Solana CLI keypair file (id.json)')
    .argument('<file>', 'path of the keypair file')
    .option('--name <name>', 'wallet name')
    .action((file: string, opts: { name?: string }, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        let text: string;
        try {
          text = readFileSync(file, 'utf8');
        } catch (err) {
          throw new InvalidInput(
            `${file}: cannot read the keypair file (${(err as NodeJS.ErrnoException).code ?? 'error'}).`,
          );
        }
        const imported = services.wallets.import(text, opts.name, basename(file));
        out.result(imported, () => describe(imported));
      }),
    );

  wallet
    .command('list')
    .description('list wallets')
    .action((_opts: unknown, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        const list = services.wallets.list();
        out.result({ data: list }, () =>
          table(
            ['NAME', 'ADDRESS', 'DEFAULT', 'CREATED'],
            list.map((w) => [w.name, w.address, w.isDefault ? 'yes' : '', w.createdAt]),
          ),
        );
      }),
    );

  wallet
    .command('show')
    .description('show a wallet (default: the default wallet, created on first use)')
    .argument('[name]', 'wallet name or address')
    .action((name: string | undefined, _opts: unknown, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        const shown = services.wallets.show(name);
        out.result(shown, () => describe(shown));
      }),
    );
}
