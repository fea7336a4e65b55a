import { z } from 'zod';
import type { StudioCredential } from './credentials';
import type { AccessModel, Listing } from './listings';

/** Shapes of the studio-only surface (/studio/*), shared by the server and the renderer. */

export const ApiKeySchema = z
  .object({
    id: z.string(),
    label: z.string(),
    prefix: z.string().meta({ description: 'The first characters of the key, to recognise it.' }),
    wallet: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'ApiKey' });
export type ApiKey = z.infer<typeof ApiKeySchema>;

export const CreatedApiKeySchema = z.object({ id: z.string(), key: z.string(), wallet: z.string() });
export type CreatedApiKey = z.infer<typeof CreatedApiKeySchema>;

export const CreateApiKeySchema = z.object({
  wallet: z.string().optional(),
  label: z.string().trim().max(100, 'The label can be at most 100 characters.').optional(),
});

export const WalletSchema = z
  .object({
    name: z.string(),
    address: z.string(),
    isDefault: z.boolean(),
    encryptedAtRest: z.boolean(),
    createdAt: z.string(),
  })
  .meta({ id: 'Wallet' });
export type Wallet = z.infer<typeof WalletSchema>;

export const CreateWalletSchema = z.object({ name: z.string().trim().min(1).max(64).optional() });

export const StudioInfoSchema = z.object({
  version: z.string(),
  dataDir: z.string(),
  apiBaseUrl: z.string(),
  /**
   * The limits the studio's ingestion applies (spec §8; STUDIO_LIMITS, the CLI's `kbstudio ingest` too),
   * so the renderer says them without a copy of its own. `maxKnowledgeBaseBytes`: source bytes per
   * knowledge base (null: none); bulk uploads (POST /v1/upload) are not held to it.
   */
  ingestLimits: z.object({
    maxFileBytes: z.number(),
    maxKnowledgeBaseBytes: z.number().nullable(),
    maxArchiveBytes: z.number(),
    maxChunks: z.number(),
  }),
});
export type StudioInfo = z.infer<typeof StudioInfoSchema>;

/** `POST /studio/wallets/import`: the text of a Solana CLI keypair file (`id.json`). */
export const ImportWalletSchema = z.object({
  fileText: z
    .string()
    .min(1, 'the keypair file is empty')
    .max(10_000, 'a Solana CLI keypair file is a JSON array of 64 numbers, well under 10,000 characters'),
  fileName: z.string().trim().max(255).optional(),
  name: z.string().trim().min(1).max(64).optional(),
});

/** RPC URLs of the networks the Wallet view offers by name. */
export const SOLANA_NETWORK_URLS = {
  local: 'http://127.0.0.1:8899',
  devnet: 'https://api.devnet.solana.com',
} as const;

/** `ledger`: no RPC, the embedded SQLite ledger; the others name the cluster an RPC URL points at. */
export type SolanaNetwork = 'ledger' | 'local' | 'devnet' | 'testnet' | 'mainnet' | 'custom';

/** Which network an RPC URL points at, from its host (no request is made). */
export function networkOfRpcUrl(rpcUrl: string | null | undefined): SolanaNetwork {
  if (!rpcUrl?.trim()) return 'ledger';
  let host: string;
  try {
    host = new URL(rpcUrl).hostname.toLowerCase();
  } catch {
    return 'custom';
  }
  if (host === 'localhost' || host === '127.0.0.1' || host === '[::1]' || host === '::1') return 'local';
  if (host.includes('devnet')) return 'devnet';
  if (host.includes('testnet')) return 'testnet';
  if (host.includes('mainnet')) return 'mainnet';
  return 'custom';
}

/** Whether a network hands out SOL for testing, and why not when it does not. */
export function airdropAvailability(network: SolanaNetwork): { available: boolean; reason: string | null } {
  switch (network) {
    case 'ledger':
      return {
        available: false,
        reason:
          'The embedded ledger moves no real SOL, so there is nothing to airdrop. Choose a local validator or devnet to get test SOL.',
      };
    case 'mainnet':
      return { available: false, reason: 'Mainnet has no faucet: SOL there is real money.' };
    default:
      return { available: true, reason: null };
  }
}

export interface NetworkView {
  network: SolanaNetwork;
  /** The effective `solana.rpcUrl` (environment over stored); null = the embedded ledger. */
  rpcUrl: string | null;
  source: 'environment' | 'stored' | 'unset';
  /** The ledger this server process uses; it is chosen at start, so a changed URL applies after a restart. */
  ledger: 'local' | 'solana';
  programId: string;
  airdrop: { available: boolean; reason: string | null };
}

export const AirdropSchema = z.object({
  sol: z
    .number()
    .positive('ask for more than 0 SOL')
    .max(5, 'faucets give at most a few SOL per request; ask for 5 or less'),
});

export interface WalletBalance {
  address: string;
  lamports: number;
  sol: number;
  /** `rpc`: the cluster's answer; `local_ledger`: what this wallet paid and received through the embedded ledger. */
  source: 'rpc' | 'local_ledger';
  network: SolanaNetwork;
  rpcUrl: string | null;
  /** Local ledger only: lamports paid (purchases) and received (refunds, withdrawals). */
  paidLamports?: number;
  receivedLamports?: number;
}

/** One account of a transaction as the confirmation shows it. */
export interface TransactionAccountView {
  name: string;
  address: string;
  signer: boolean;
  writable: boolean;
}

/** What the creator's wallet is asked to sign for `create_listing`: every field the signature covers. */
export interface ListingTransactionSummary {
  instruction: 'create_listing';
  programId: string;
  listingId: string;
  listingPda: string;
  feePayer: string;
  accounts: TransactionAccountView[];
  accessModel: AccessModel;
  price: number;
  priceLamports: number;
  subscriptionDays: number;
  recentBlockhash: string;
  /** Where it goes: the embedded ledger records it, a cluster receives it. */
  ledger: 'local' | 'solana';
}

export interface PreparedListingTransaction {
  /** Base64 of the unsigned legacy transaction (`requireAllSignatures: false`). */
  transaction: string;
  summary: ListingTransactionSummary;
}

export const SubmitListingTransactionSchema = z.object({
  transaction: z
    .string()
    .min(1)
    .max(2_000, 'at most 1232 bytes, base64-encoded')
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'expected base64'),
});

export interface SubmittedListingTransaction {
  listing: Listing;
  pdaAddress: string;
  signature: string;
}

/** Wallets the Test buyers view creates are named with this prefix, which is how it finds them again. */
export const TEST_BUYER_PREFIX = 'test-buyer-';

/** Credential states the Test buyers view can put a buyer in, for the listing's access model. */
export const TEST_BUYER_STATES = ['active', 'expired', 'low_balance', 'zero_balance', 'revoked'] as const;
export type TestBuyerState = (typeof TEST_BUYER_STATES)[number];

export function testBuyerStatesFor(accessModel: AccessModel): TestBuyerState[] {
  switch (accessModel) {
    case 'one_time':
      return ['active', 'revoked'];
    case 'subscription':
      return ['active', 'expired', 'revoked'];
    case 'per_query':
      return ['active', 'low_balance', 'zero_balance', 'revoked'];
  }
}

export const CreateTestBuyerSchema = z.object({ name: z.string().trim().min(1).max(64).optional() });

export const GrantTestStateSchema = z.object({
  listingId: z.string().min(1).max(100),
  wallet: z.string().min(1).max(100),
  state: z.enum(TEST_BUYER_STATES),
});

/** A buyer wallet the studio made for testing, or another holder of a credential, with what it holds. */
export interface TestBuyer {
  wallet: string;
  /** The studio wallet's name; null for a holder the studio does not hold (granted from the CLI). */
  name: string | null;
  credential: StudioCredential | null;
}

/** An API key of a wallet the studio holds, for the playground (kept in memory by the server). */
export interface PlaygroundKey {
  listingId: string;
  keyId: string;
  apiKey: string;
  wallet: string;
}
