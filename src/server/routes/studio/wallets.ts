import { Keypair, PACKET_DATA_SIZE, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { z } from 'zod';
import { Conflict, InvalidInput, NotFound } from '../../../core/errors';
import { lamportsToSol, solToLamports } from '../../../core/money';
import { SolanaProgramClient } from '../../../core/marketplace/solana/client';
import { resolveProgramId } from '../../../core/marketplace/solana/pda';
import { effectiveSettings } from '../../../core/settings';
import { isWalletAddress, signMessage } from '../../../core/wallets/keypair';
import {
  AirdropSchema,
  airdropAvailability,
  ImportWalletSchema,
  networkOfRpcUrl,
  type NetworkView,
  type WalletBalance,
} from '../../../shared/studio';
import { isWholeLamports, WHOLE_LAMPORTS_MESSAGE } from '../../../shared/listings';
import type { StudioServices } from '../../../db/services';
import type { ServerDeps } from '../../deps';
import type { defineRoutes } from '../../route';

/** Largest message the studio signs: ledger messages are a few hundred bytes, this leaves ample room. */
export const MAX_SIGNED_MESSAGE_BYTES = 64 * 1024;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const base64Field = (maxBytes: number) =>
  z
    .string()
    .min(1)
    .max(Math.ceil(maxBytes / 3) * 4, `at most ${maxBytes} bytes (base64-encoded)`)
    .regex(BASE64, 'expected base64');

const AddressParams = z.object({
  address: z.string().refine(isWalletAddress, 'expected a base58 Solana address'),
});
// As a price: whole lamports, never rounded (0.0000000001 SOL used to reach the faucet as 0 lamports).
const AirdropBody = AirdropSchema.extend({
  sol: AirdropSchema.shape.sol.refine(isWholeLamports, { error: WHOLE_LAMPORTS_MESSAGE }),
});
const SignMessageBody = z.object({ message: base64Field(MAX_SIGNED_MESSAGE_BYTES) });
const SignTransactionBody = z.object({ transaction: base64Field(PACKET_DATA_SIZE) });

/**
 * Signing with a wallet the studio holds (DESIGN §3). The secret is read and used here, in the server
 * process, and never sent: the renderer's wallet adapter posts the bytes and gets signatures back.
 */
export function walletRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  const { wallets } = services;

  route({
    method: 'post',
    path: '/wallets/import',
    summary: 'Import a Solana CLI keypair file (id.json: a JSON array of 64 numbers)',
    tags: ['Studio'],
    body: ImportWalletSchema,
    response: { status: 201, description: 'The imported wallet (never its secret)' },
    errors: [409],
    handler: ({ body }) => ({ data: wallets.import(body.fileText, body.name, body.fileName || 'id.json') }),
  });

  route({
    method: 'get',
    path: '/network',
    summary: 'The Solana network the studio uses (solana.rpcUrl), its ledger and whether it airdrops',
    tags: ['Studio'],
    response: { status: 200, description: 'OK' },
    handler: () => ({ data: networkView(services) }),
  });

  route({
    method: 'get',
    path: '/wallets/:address/balance',
    summary: 'A wallet balance: from the RPC when solana.rpcUrl is set, else from the embedded ledger',
    tags: ['Studio'],
    params: AddressParams,
    response: { status: 200, description: 'OK' },
    errors: [404],
    handler: async ({ params }) => {
      held(services, params.address);
      return { data: await balanceOf(services, params.address) };
    },
  });

  route({
    method: 'post',
    path: '/wallets/:address/airdrop',
    summary: 'Ask the network faucet for test SOL (local validator, devnet); refused where there is none',
    tags: ['Studio'],
    params: AddressParams,
    body: AirdropBody,
    response: { status: 200, description: 'The airdrop signature and the new balance' },
    errors: [404, 409],
    handler: async ({ params, body }) => {
      held(services, params.address);
      const view = networkView(services);
      if (!view.airdrop.available || !view.rpcUrl)
        throw new Conflict(`Airdrop unavailable: ${view.airdrop.reason}`);
      const client = new SolanaProgramClient({
        rpcUrl: view.rpcUrl,
        programId: view.programId,
        timeoutMs: 15_000,
      });
      const signature = await client.requestAirdrop(params.address, solToLamports(body.sol));
      return { data: { signature, balance: await balanceOf(services, params.address) } };
    },
  });

  route({
    method: 'post',
    path: '/wallets/:address/sign-message',
    summary: 'Sign a message with a studio wallet (ed25519, Solana layout)',
    tags: ['Studio'],
    params: AddressParams,
    body: SignMessageBody,
    response: { status: 200, description: 'The base58 signature' },
    errors: [403, 404],
    handler: ({ params, body }) => {
      const message = decode(body.message, 'message', MAX_SIGNED_MESSAGE_BYTES);
      const signature = signMessage(wallets.secretKeyOf(params.address), message);
      return { data: { address: params.address, signature: bs58.encode(signature) } };
    },
  });

  route({
    method: 'post',
    path: '/wallets/:address/sign-transaction',
    summary: 'Partially sign a serialized legacy transaction with a studio wallet',
    tags: ['Studio'],
    params: AddressParams,
    body: SignTransactionBody,
    response: { status: 200, description: 'The transaction with this wallet’s signature, base64' },
    errors: [403, 404],
    handler: ({ params, body }) => {
      const bytes = decode(body.transaction, 'transaction', PACKET_DATA_SIZE);
      const transaction = parseTransaction(bytes);
      const keypair = Keypair.fromSecretKey(wallets.secretKeyOf(params.address));
      if (!transaction.signatures.some((s) => s.publicKey.equals(keypair.publicKey))) {
        throw new InvalidInput(`transaction: wallet ${params.address} is not one of its signers.`);
      }
      transaction.partialSign(keypair);
      const signed = transaction.serialize({ requireAllSignatures: false, verifySignatures: false });
      return { data: { address: params.address, transaction: Buffer.from(signed).toString('base64') } };
    },
  });
}

/** The Wallet view's balance and airdrop are for the studio's own wallets (test buyers included). */
function held(services: StudioServices, address: string): void {
  if (!services.wallets.list().some((w) => w.address === address)) {
    throw new NotFound(
      `address: this studio holds no wallet ${address}; balances and airdrops are for its own wallets (kbstudio wallet list).`,
    );
  }
}

function decode(value: string, field: string, maxBytes: number): Uint8Array {
  if (value.length % 4 !== 0) throw new InvalidInput(`${field}: expected base64 (padded to 4 characters).`);
  const bytes = new Uint8Array(Buffer.from(value, 'base64'));
  if (bytes.length === 0) throw new InvalidInput(`${field}: must not be empty.`);
  if (bytes.length > maxBytes)
    throw new InvalidInput(`${field}: at most ${maxBytes} bytes, got ${bytes.length}.`);
  return bytes;
}

function parseTransaction(bytes: Uint8Array): Transaction {
  try {
    return Transaction.from(bytes);
  } catch (err) {
    throw new InvalidInput(
      `transaction: not a serialized legacy transaction (${err instanceof Error ? err.message : String(err)}).`,
    );
  }
}

/** The effective Solana settings, read per request so a changed setting shows at once. */
export function networkView(services: StudioServices): NetworkView {
  const settings = effectiveSettings(services.settings.all(), services.environment);
  const rpcUrl = settings['solana.rpcUrl'] ?? null;
  const source = services.settings
    .describe(services.environment)
    .find((s) => s.key === 'solana.rpcUrl')!.source;
  const network = networkOfRpcUrl(rpcUrl);
  return {
    network,
    rpcUrl,
    source,
    ledger: services.ledger.kind,
    programId: resolveProgramId(settings['solana.programId']).toBase58(),
    airdrop: airdropAvailability(network),
  };
}

async function balanceOf(services: StudioServices, address: string): Promise<WalletBalance> {
  const view = networkView(services);
  if (view.rpcUrl) {
    const client = new SolanaProgramClient({ rpcUrl: view.rpcUrl, programId: view.programId });
    const lamports = Number(await client.getBalance(address));
    return {
      address,
      lamports,
      sol: lamportsToSol(lamports),
      source: 'rpc',
      network: view.network,
      rpcUrl: view.rpcUrl,
    };
  }
  const { paidLamports, receivedLamports } = services.ledger.walletFlows(address);
  const lamports = receivedLamports - paidLamports;
  return {
    address,
    lamports,
    sol: lamportsToSol(lamports),
    source: 'local_ledger',
    network: view.network,
    rpcUrl: null,
    paidLamports,
    receivedLamports,
  };
}
