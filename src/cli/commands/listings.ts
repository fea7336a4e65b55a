import type { Command } from 'commander';
import { InvalidInput } from '../../core/errors';
import { lamportsToSol, solToLamports } from '../../core/money';
import { OFFLINE_MODEL } from '../../shared/embeddingModels';
import { parseOrThrow } from '../../core/validation';
import {
  ListingSearchQuerySchema,
  type CreateListingInput,
  type Listing,
  type UpdateListingInput,
} from '../../shared/listings';
import { paginationOf } from '../../shared/pagination';
import { table } from '../output';
import { listFlag, numberFlag, withServices } from '../context';
import { holdsWallet, importHint, walletAddressOf, withCreatorSecret } from '../walletFlag';

interface ListingFlags {
  title?: string;
  description?: string;
  domain?: string;
  tags?: string[];
  accessModel?: string;
  price?: number;
  subscriptionDays?: number;
  rateLimit?: number;
  denseWeight?: number;
  embeddingModel?: string;
  wallet?: string;
}

/**
 * The flags of a listing's fields. Creating, the defaults the service applies are shown and the flags
 * it needs are marked required; updating, a flag left out keeps the listing's current value.
 */
function listingOptions(cmd: Command, creating: boolean): Command {
  const required = creating ? ' (required)' : '';
  const orDefault = (fallback: string) => (creating ? ` (default ${fallback})` : '');
  return cmd
    .option('--title <title>', `listing title${required}`)
    .option('--description <text>', 'description')
    .option('--domain <domain>', 'domain, e.g. legal, medicine')
    .option('--tags <a,b>', 'comma-separated tags', listFlag)
    .option('--access-model <model>', `one_time | subscription | per_query${required}`)
    .option(
      '--price <sol>',
      `price in SOL (per query for per_query, per period for subscription)${required}`,
      numberFlag,
    )
    .option(
      '--subscription-days <n>',
      'subscription period in days (subscription only, then required)',
      numberFlag,
    )
    .option('--rate-limit <n>', `retrievals per minute per credential${orDefault('60')}`, numberFlag)
    .option(
      '--dense-weight <w>',
      `weight of the embedding part in hybrid retrieval, 0..1${orDefault('0.3')}`,
      numberFlag,
    )
    .option(
      '--embedding-model <id>',
      `embedding model of the knowledge base${orDefault(`${OFFLINE_MODEL.id}, offline, no key needed`)}`,
    );
}

// Flags arrive untyped; the service validates them with the same schema the API uses.
const toInput = (f: ListingFlags) => ({
  title: f.title,
  description: f.description,
  domain: f.domain,
  tags: f.tags,
  accessModel: f.accessModel,
  price: f.price,
  subscriptionDays: f.subscriptionDays,
  retrievalRateLimit: f.rateLimit,
  retrievalDenseWeight: f.denseWeight,
  embeddingModel: f.embeddingModel,
});

const describe = (l: Listing) =>
  [
    `${l.title}  [${l.status}]`,
    `  id:              ${l.id}`,
    `  access:          ${l.accessModel}, ${l.price} SOL (${solToLamports(l.price)} lamports)${l.subscriptionDays ? ` per ${l.subscriptionDays} days` : ''}`,
    `  domain / tags:   ${l.domain || '-'} / ${l.tags.join(', ') || '-'}`,
    `  rate limit:      ${l.retrievalRateLimit} retrievals per minute per credential`,
    `  embedding model: ${l.embeddingModel} (${l.dimensions} dimensions)`,
    `  documents:       ${l.documentCount}, chunks: ${l.chunkCount}`,
    `  creator:         ${l.creatorWallet}`,
  ].join('\n');

export function listingsCommand(program: Command): void {
  const listings = program
    .command('listings')
    .description('knowledge-base listings (local drafts and published)');

  listingOptions(listings.command('create').description('create a draft listing'), true)
    .option(
      '--wallet <name|address>',
      'creator wallet, by name or address (default: the studio default wallet); the CLI publishes only with a wallet this studio holds (kbstudio wallet list)',
    )
    .action((flags: ListingFlags, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        // The schema would only say the value is not one of the three.
        if (flags.accessModel === undefined) {
          throw new InvalidInput('--access-model: required (one_time | subscription | per_query)');
        }
        const created = services.listings.create(
          toInput(flags) as CreateListingInput,
          walletAddressOf(services, flags.wallet) ?? services.wallets.defaultWallet().address,
        );
        // As the studio: any address may be the creator (a browser wallet signs in the studio), but the
        // CLI signs only with wallets it holds. Said now, not first when publishing. On stderr even with
        // --json, as publish's warning, so stdout stays the one JSON document.
        if (!holdsWallet(services, created.creatorWallet)) {
          process.stderr.write(
            `kbstudio: warning: listing ${created.id} was created, but it cannot be published or withdrawn from with this CLI yet. ${importHint(created.creatorWallet)}\n`,
          );
        }
        out.result(created, () => describe(created));
      }),
    );

  listings
    .command('list')
    .description('list local listings, drafts included')
    .option('--q <text>', 'full-text query')
    .option('--domain <domain>', 'only listings of this domain, e.g. legal')
    .option('--access-model <model>', 'only this access model: one_time | subscription | per_query')
    .option(
      '--sort <sort>',
      'relevance | rating | price_asc | price_desc | newest (default relevance with --q, else newest)',
    )
    .option('--limit <n>', 'results per page, 1..100 (default 20)')
    .option('--offset <n>', 'listings to skip before the page, for the next pages (default 0)')
    .action((flags: Record<string, string>, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        const query = parseOrThrow(ListingSearchQuerySchema, flags, 'options');
        const page = services.listings.search(query, 'studio');
        // As GET /v1/listings: the page and where it sits in the whole list.
        out.result(
          { data: page.items, pagination: paginationOf(page) },
          () =>
            table(
              ['ID', 'TITLE', 'DOMAIN', 'ACCESS', 'PRICE (SOL)', 'STATUS', 'CHUNKS'],
              page.items.map((l) => [
                l.id,
                l.title,
                l.domain,
                l.accessModel,
                lamportsToSol(solToLamports(l.price)),
                l.status,
                l.chunkCount,
              ]),
            ) +
            (page.total > page.items.length ? `\n(${page.items.length} of ${page.total}; use --offset)` : ''),
        );
      }),
    );

  listings
    .command('show')
    .argument('<id>', 'listing id')
    .description('show a listing')
    .action((id: string, _flags: unknown, cmd: Command) =>
      withServices(cmd, ({ services, out }) => {
        const listing = services.listings.get(id, 'studio');
        out.result(listing, () => describe(listing));
      }),
    );

  listingOptions(
    listings
      .command('update')
      .argument('<id>', 'listing id')
      .description(
        'change a listing: only the flags given change; every other field keeps its current value',
      ),
    false,
  ).action((id: string, flags: ListingFlags, cmd: Command) =>
    withServices(cmd, ({ services, out }) => {
      const updated = services.listings.update(id, toInput(flags) as UpdateListingInput, 'studio');
      out.result(updated, () => describe(updated));
    }),
  );

  listings
    .command('publish')
    .argument('<id>', 'listing id')
    .description(
      "publish a listing: create_listing signed by the creator's wallet (held by this studio), its PDA recorded; publishing a published listing again signs and sends nothing",
    )
    .action((id: string, _flags: unknown, cmd: Command) =>
      withServices(cmd, async ({ services, out }) => {
        const creator = services.listings.get(id, 'studio').creatorWallet;
        const { listing, alreadyPublished } = await withCreatorSecret(services, creator, () =>
          services.publishing.publishOnce(id),
        );
        // As the studio's publish dialog: an empty knowledge base is published, with a warning. On
        // stderr even with --json, so stdout stays the one JSON document.
        if (!alreadyPublished && listing.chunkCount === 0) {
          process.stderr.write(
            `kbstudio: warning: listing ${listing.id} has no documents (0 chunks): buyers get no results until you ingest some (kbstudio ingest --listing ${listing.id} PATH).\n`,
          );
        }
        out.result(listing, () =>
          alreadyPublished
            ? `Already published${listing.pdaAddress ? ` at ${listing.pdaAddress}` : ''}: nothing was signed or sent.\n${describe(listing)}`
            : `Published.\n${describe(listing)}\n  PDA:             ${listing.pdaAddress}`,
        );
      }),
    );

  listings
    .command('earnings')
    .argument('<id>', 'listing id')
    .description('what a listing has earned, withdrawn and can withdraw')
    .action((id: string, _flags: unknown, cmd: Command) =>
      withServices(cmd, async ({ services, out }) => {
        const e = await services.publishing.earnings(id);
        out.result(
          e,
          () => `earned ${e.earned} SOL, withdrawn ${e.withdrawn} SOL, withdrawable ${e.withdrawable} SOL`,
        );
      }),
    );

  listings
    .command('withdraw')
    .argument('<id>', 'listing id')
    .description('withdraw exactly the withdrawable earnings (withdraw_earnings signed by the creator)')
    .action((id: string, _flags: unknown, cmd: Command) =>
      withServices(cmd, async ({ services, out }) => {
        const creator = services.listings.get(id, 'studio').creatorWallet;
        const w = await withCreatorSecret(services, creator, () => services.publishing.withdraw(id));
        out.result(w, () =>
          w.amount > 0
            ? `Withdrew ${w.amount} SOL from ${w.listingId}.`
            : `Nothing to withdraw from ${w.listingId}.`,
        );
      }),
    );
}
