import type { Command } from 'commander';
import type { StudioCredential } from '../../shared/credentials';
import { numberFlag, withServices } from '../context';
import { table } from '../output';
import { walletAddressOf } from '../walletFlag';

interface GrantFlags {
  listing: string;
  wallet: string;
  expiresAt?: string;
  balance?: number;
}

interface PurchaseFlags {
  listing: string;
  wallet: string;
  periods?: number;
  deposit?: number;
}

const describe = (c: StudioCredential) =>
  [
    `${c.holderWallet} on ${c.listingId} (${c.listingTitle})`,
    `  access:  ${c.accessModel}, ${c.status}${c.testGrant ? ' (test grant)' : ''}`,
    ...(c.expiresAt ? [`  expires: ${c.expiresAt}`] : []),
    ...(c.balance !== null ? [`  balance: ${c.balance} SOL`] : []),
    `  PDA:     ${c.pdaAddress ?? '-'}`,
  ].join('\n');

export function credentialsCommand(program: Command): void {
  const credentials = program
    .command('credentials')
    .description(
      "local access credentials: test buyers of your listings (the listing's access model applies)",
    );

  credentials
    .command('grant')
    .description("grant a test buyer access, signed by the listing's creator (free; for trying every state)")
    .requiredOption('--listing <id>', 'listing id')
    .requiredOption('--wallet <name|address>', 'the test buyer, by name or address')
    .option(
      '--expires-at <iso>',
      'subscription only: end of access (a past date gives an expired credential)',
    )
    .option('--balance <sol>', 'per_query only: balance in SOL (default ten queries)', numberFlag)
    .action((flags: GrantFlags, cmd: Command) =>
      withServices(cmd, async ({ services, out }) => {
        const granted = await services.credentials.grant(
          flags.listing,
          walletAddressOf(services, flags.wallet),
          {
            expiresAt: flags.expiresAt,
            balance: flags.balance,
          },
        );
        out.result(granted, () => `Granted.\n${describe(granted)}`);
      }),
    );

  credentials
    .command('purchase')
    .description('buy access with a wallet this studio holds (signed and paid by that wallet)')
    .requiredOption('--listing <id>', 'listing id')
    .requiredOption('--wallet <name|address>', 'the buying wallet (held by this studio), by name or address')
    .option('--periods <n>', 'subscription periods to buy (default 1)', numberFlag)
    .option('--deposit <sol>', 'per_query: SOL to deposit', numberFlag)
    .action((flags: PurchaseFlags, cmd: Command) =>
      withServices(cmd, async ({ services, out }) => {
        const bought = await services.credentials.purchase(
          flags.listing,
          walletAddressOf(services, flags.wallet),
          {
            periods: flags.periods,
            deposit: flags.deposit,
          },
        );
        out.result(bought, () => `Purchased for ${bought.paid} SOL.\n${describe(bought.credential)}`);
      }),
    );

  credentials
    .command('list')
    .description('list local credentials, test grants marked')
    .option('--listing <id>', 'only this listing')
    .action((flags: { listing?: string }, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        const list = services.credentials.listAll(flags.listing);
        out.result({ data: list }, () =>
          table(
            ['LISTING', 'WALLET', 'ACCESS', 'STATUS', 'EXPIRES', 'BALANCE (SOL)', 'TEST'],
            list.map((c) => [
              c.listingId,
              c.holderWallet,
              c.accessModel,
              c.status,
              c.expiresAt,
              c.balance,
              c.testGrant ? 'yes' : '',
            ]),
          ),
        );
      }),
    );

  credentials
    .command('revoke')
    .description('revoke a credential (signed by the creator, else the holder); it stops existing')
    .requiredOption('--listing <id>', 'listing id')
    .requiredOption('--wallet <name|address>', 'the holder, by name or address')
    .action((flags: { listing: string; wallet: string }, cmd: Command) =>
      withServices(cmd, async ({ services, out }) => {
        const revoked = await services.credentials.revoke(
          flags.listing,
          walletAddressOf(services, flags.wallet),
        );
        out.result(
          revoked,
          () =>
            `Revoked ${revoked.wallet}'s access to ${revoked.listingId}.${revoked.refunded ? ` Refunded ${revoked.refunded} SOL.` : ''}`,
        );
      }),
    );
}
