import {
  Connection,
  Keypair,
  PublicKey,
  SendTransactionError,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
  type AccountInfo,
  type Commitment,
  type TransactionInstruction,
} from '@solana/web3.js';
import { DomainError, InvalidInput } from '../../errors';
import {
  credentialStatus,
  decodeCredentialAccount,
  decodeListingAccount,
  type CredentialAccount,
  type ListingAccount,
  type OnChainAccessStatus,
} from './accounts';
import { decodeTypeData, type IdlStruct } from './codec';
import { InvalidAccountData, SolanaRpcError, SolanaRpcUnavailable, TransactionNotConfirmed } from './errors';
import { idlInstruction } from './idl';
import {
  createListingInstruction,
  purchaseAccessInstruction,
  revokeAccessInstruction,
  verifyAccessInstruction,
  withdrawEarningsInstruction,
  type CreateListingArgs,
  type Lamports,
} from './instructions';
import { credentialPda, listingPda, resolveProgramId, toPublicKey, type Address } from './pda';
import { statusRejection, transactionRejection } from './rejections';

/** Devnet, where the beta runs (DESIGN §3); the setting `solana.rpcUrl` / SOLANA_RPC_URL overrides it. */
export const DEVNET_RPC_URL = 'https://api.devnet.solana.com';

export type ProgramCommitment = Extract<Commitment, 'processed' | 'confirmed' | 'finalized'>;

export interface SolanaProgramClientOptions {
  rpcUrl: string;
  /** Base58; defaults to the beta program ID (DEFAULT_PROGRAM_ID). */
  programId?: Address;
  commitment?: ProgramCommitment;
  /** Replaces the global fetch (tests, proxies). */
  fetch?: typeof globalThis.fetch;
  /** Per RPC request; a slower answer is SolanaRpcUnavailable. Default 10 s (the client library's). */
  timeoutMs?: number;
  /** How long to wait for a sent transaction to reach `commitment`. Default 60 s. */
  confirmTimeoutMs?: number;
  /** Between getSignatureStatuses polls. Default 500 ms. */
  pollIntervalMs?: number;
  /** For credential statuses (subscription expiry). */
  now?: () => Date;
}

/** A wallet that signs: the 64-byte Solana secret key (seed + public key) and its address. */
export interface ProgramSigner {
  publicKey: Address;
  secretKey: Uint8Array;
}

/** A landed transaction and the program account it created or changed (base58). */
export interface SentTransaction {
  signature: string;
  address: string;
}

export type OnChainListing = ListingAccount & { address: string; lamports: number };
export type OnChainCredential = CredentialAccount & { address: string; lamports: number };

/** What an RPC lookup of a credential PDA found; `onChainVerified` callers can set true on any answer. */
export interface OnChainVerification {
  pdaAddress: string;
  status: OnChainAccessStatus | 'not_found';
  valid: boolean;
  /** ISO time for subscriptions, else null. */
  expiresAt: string | null;
  credential: OnChainCredential | null;
  listing: OnChainListing | null;
}

/** The program's own answer to verify_access (its `AccessVerification` return data). */
export interface ProgramVerification {
  status: OnChainAccessStatus;
  /** Unix seconds; 0 = never. */
  expiresAt: number;
  balanceLamports: bigint;
}

const ACCESS_STATUS: Record<string, OnChainAccessStatus> = {
  Active: 'active',
  Expired: 'expired',
  LowBalance: 'low_balance',
};

const COMMITMENT_RANK: Record<ProgramCommitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

/** The marketplace program over JSON-RPC: builds, signs, sends and confirms its instructions, reads its accounts. */
export class SolanaProgramClient {
  readonly rpcUrl: string;
  readonly programId: PublicKey;
  readonly commitment: ProgramCommitment;
  readonly connection: Connection;
  private readonly timeoutMs: number;
  private readonly confirmTimeoutMs: number;
  private readonly pollIntervalMs: number;
  private readonly now: () => Date;

  constructor(options: SolanaProgramClientOptions) {
    try {
      const url = new URL(options.rpcUrl);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      throw new InvalidInput(`solana.rpcUrl: '${options.rpcUrl}' must be an http(s) URL.`);
    }
    this.rpcUrl = options.rpcUrl;
    this.programId = options.programId ? toPublicKey(options.programId, 'programId') : resolveProgramId();
    this.commitment = options.commitment ?? 'confirmed';
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 60_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.now = options.now ?? (() => new Date());
    const baseFetch = options.fetch ?? globalThis.fetch;
    const timeoutMs = this.timeoutMs;
    this.connection = new Connection(this.rpcUrl, {
      commitment: this.commitment,
      httpAgent: false,
      fetch: (input, init) => baseFetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) }),
    });
  }

  listingAddress(creator: Address, listingId: string): string {
    return listingPda(this.programId, creator, listingId)[0].toBase58();
  }

  credentialAddress(listing: Address, holder: Address): string {
    return credentialPda(this.programId, listing, holder)[0].toBase58();
  }

  async createListing(
    creator: ProgramSigner,
    args: Omit<CreateListingArgs, 'creator'>,
  ): Promise<SentTransaction> {
    const ix = createListingInstruction(this.programId, { ...args, creator: creator.publicKey });
    const signature = await this.sendInstructions(creator, [ix]);
    return { signature, address: this.listingAddress(creator.publicKey, args.listingId) };
  }

  /**
   * Buys or extends access. `periods` defaults to 1, or to 0 when a deposit is given (per_query).
   * The listing is its PDA (see listingAddress).
   */
  async purchaseAccess(
    buyer: ProgramSigner,
    args: { listing: Address; periods?: number; depositLamports?: Lamports },
  ): Promise<SentTransaction> {
    const depositLamports = args.depositLamports ?? 0n;
    const periods = args.periods ?? (BigInt(depositLamports) > 0n ? 0 : 1);
    const ix = purchaseAccessInstruction(this.programId, {
      buyer: buyer.publicKey,
      listing: args.listing,
      periods,
      depositLamports,
    });
    const signature = await this.sendInstructions(buyer, [ix]);
    return { signature, address: this.credentialAddress(args.listing, buyer.publicKey) };
  }

  /** Closes a credential; signed by the listing's creator or the holder (the default holder is the signer). */
  async revokeAccess(
    authority: ProgramSigner,
    args: { listing: Address; holder?: Address },
  ): Promise<SentTransaction> {
    const holder = args.holder ?? authority.publicKey;
    const ix = revokeAccessInstruction(this.programId, {
      authority: authority.publicKey,
      holder,
      listing: args.listing,
    });
    const signature = await this.sendInstructions(authority, [ix]);
    return { signature, address: this.credentialAddress(args.listing, holder) };
  }

  async withdrawEarnings(
    creator: ProgramSigner,
    args: { listing: Address; amountLamports: Lamports },
  ): Promise<SentTransaction> {
    const ix = withdrawEarningsInstruction(this.programId, { creator: creator.publicKey, ...args });
    const signature = await this.sendInstructions(creator, [ix]);
    return { signature, address: toPublicKey(args.listing, 'listing').toBase58() };
  }

  /** The listing account at a PDA, or null when there is none. */
  async getListing(listing: Address): Promise<OnChainListing | null> {
    const address = toPublicKey(listing, 'listing');
    const info = await this.rpc('getAccountInfo', (c) => c.getAccountInfo(address, this.commitment));
    return this.listingFrom(address.toBase58(), info);
  }

  /** The holder's credential for a listing PDA, or null when it does not exist (never bought, or revoked). */
  async getCredential(listing: Address, holder: Address): Promise<OnChainCredential | null> {
    const address = credentialPda(this.programId, listing, holder)[0];
    const info = await this.rpc('getAccountInfo', (c) => c.getAccountInfo(address, this.commitment));
    return this.credentialFrom(address.toBase58(), info);
  }

  /** Reads the credential and its listing in one request and applies DESIGN §3's status rules. */
  async verifyCredential(listing: Address, holder: Address): Promise<OnChainVerification> {
    const listingKey = toPublicKey(listing, 'listing');
    const credentialKey = credentialPda(this.programId, listingKey, holder)[0];
    const [credentialInfo, listingInfo] = await this.rpc('getMultipleAccounts', (c) =>
      c.getMultipleAccountsInfo([credentialKey, listingKey], this.commitment),
    );
    const credential = this.credentialFrom(credentialKey.toBase58(), credentialInfo ?? null);
    const listingAccount = this.listingFrom(listingKey.toBase58(), listingInfo ?? null);
    const pdaAddress = credentialKey.toBase58();
    if (!credential || !listingAccount || credential.listing !== listingAccount.address) {
      return {
        pdaAddress,
        status: 'not_found',
        valid: false,
        expiresAt: null,
        credential,
        listing: listingAccount,
      };
    }
    const status = credentialStatus(credential, listingAccount, Math.floor(this.now().getTime() / 1000));
    const expiresAt = credential.expiresAt > 0 ? new Date(credential.expiresAt * 1000).toISOString() : null;
    return { pdaAddress, status, valid: status === 'active', expiresAt, credential, listing: listingAccount };
  }

  /**
   * Runs verify_access in simulation (no signature, no fee; the cluster's clock decides expiry) and
   * decodes its return data. Null when the credential does not exist. The holder is the simulated
   * fee payer, so it needs an account with some lamports, as any buyer has.
   */
  async simulateVerifyAccess(listing: Address, holder: Address): Promise<ProgramVerification | null> {
    const payerKey = toPublicKey(holder, 'holder');
    const message = new TransactionMessage({
      payerKey,
      recentBlockhash: PublicKey.default.toBase58(),
      instructions: [verifyAccessInstruction(this.programId, { holder: payerKey, listing })],
    }).compileToV0Message();
    const { value } = await this.rpc('simulateTransaction', (c) =>
      c.simulateTransaction(new VersionedTransaction(message), {
        sigVerify: false,
        replaceRecentBlockhash: true,
        commitment: this.commitment,
      }),
    );
    if (value.err) {
      const rejection = statusRejection(value.err, this.programId.toBase58(), undefined, value.logs ?? []);
      if (rejection.programError?.name === 'AccountNotInitialized' && rejection.code === 'not_found')
        return null;
      throw rejection;
    }
    const returned = value.returnData;
    if (!returned || returned.programId !== this.programId.toBase58()) {
      throw new SolanaRpcError(
        this.rpcUrl,
        'simulateTransaction',
        'verify_access returned no data from the program.',
      );
    }
    const type = idlInstruction('verify_access').returns!;
    const raw = decodeTypeData(type, Buffer.from(returned.data[0], 'base64')) as IdlStruct;
    return {
      status: ACCESS_STATUS[raw.status as string]!,
      expiresAt: Number(raw.expires_at as bigint),
      balanceLamports: raw.balance_lamports as bigint,
    };
  }

  /** Lamports held by an address (0 for an address with no account). */
  async getBalance(address: Address): Promise<bigint> {
    const key = toPublicKey(address, 'address');
    return BigInt(await this.rpc('getBalance', (c) => c.getBalance(key, this.commitment)));
  }

  /** Devnet/test-validator faucet: asks for lamports and waits for the airdrop to land. */
  async requestAirdrop(address: Address, lamports: Lamports): Promise<string> {
    const key = toPublicKey(address, 'address');
    const amount = Number(lamports);
    if (!Number.isSafeInteger(amount) || amount <= 0) {
      throw new InvalidInput(`lamports: ${String(lamports)} must be a positive integer.`);
    }
    const signature = await this.rpc('requestAirdrop', (c) => c.requestAirdrop(key, amount));
    await this.confirm(signature);
    return signature;
  }

  /** The cluster's latest blockhash, for a transaction a wallet adapter signs. */
  async latestBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: number }> {
    return this.rpc('getLatestBlockhash', (c) => c.getLatestBlockhash(this.commitment));
  }

  /** Sends a transaction a wallet already signed, with preflight, and waits for `commitment`. */
  async sendSignedTransaction(wire: Uint8Array): Promise<string> {
    const signature = await this.rpc(
      'sendTransaction',
      (c) => c.sendRawTransaction(wire, { preflightCommitment: this.commitment }),
      feePayerOf(wire),
    );
    await this.confirm(signature);
    return signature;
  }

  /** Signs with the 64-byte secret, sends with preflight, and waits for `commitment`. */
  async sendInstructions(signer: ProgramSigner, instructions: TransactionInstruction[]): Promise<string> {
    const keypair = keypairOf(signer);
    const { blockhash, lastValidBlockHeight } = await this.rpc('getLatestBlockhash', (c) =>
      c.getLatestBlockhash(this.commitment),
    );
    const tx = new Transaction({ feePayer: keypair.publicKey, blockhash, lastValidBlockHeight }).add(
      ...instructions,
    );
    tx.sign(keypair);
    const signature = await this.rpc(
      'sendTransaction',
      (c) => c.sendRawTransaction(tx.serialize(), { preflightCommitment: this.commitment }),
      keypair.publicKey.toBase58(),
    );
    await this.confirm(signature, lastValidBlockHeight);
    return signature;
  }

  /**
   * Polls getSignatureStatuses until the signature reaches the client's commitment. Fails when the
   * transaction failed on chain, its blockhash expired, or `confirmTimeoutMs` passed.
   */
  async confirm(signature: string, lastValidBlockHeight?: number): Promise<void> {
    const deadline = Date.now() + this.confirmTimeoutMs;
    for (;;) {
      const { value } = await this.rpc('getSignatureStatuses', (c) => c.getSignatureStatuses([signature]));
      const status = value[0];
      if (status?.err) throw statusRejection(status.err, this.programId.toBase58(), signature);
      if (status) {
        // Nodes that omit confirmationStatus report rooted (finalized) transactions with confirmations null.
        const reached =
          status.confirmationStatus ?? (status.confirmations === null ? 'finalized' : 'processed');
        if (COMMITMENT_RANK[reached] >= COMMITMENT_RANK[this.commitment]) return;
      } else if (lastValidBlockHeight !== undefined) {
        const height = await this.rpc('getBlockHeight', (c) => c.getBlockHeight(this.commitment));
        if (height > lastValidBlockHeight) {
          throw new TransactionNotConfirmed(
            signature,
            `its blockhash expired (block height ${height} > ${lastValidBlockHeight}) before it landed; send it again`,
          );
        }
      }
      if (Date.now() >= deadline) {
        throw new TransactionNotConfirmed(
          signature,
          `it did not reach '${this.commitment}' within ${this.confirmTimeoutMs} ms (last status: ${status?.confirmationStatus ?? 'unknown'})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, this.pollIntervalMs));
    }
  }

  private listingFrom(address: string, info: AccountInfo<Buffer> | null): OnChainListing | null {
    if (!this.ownedAccount(address, info)) return null;
    return { ...decodeListingAccount(info!.data, address), address, lamports: info!.lamports };
  }

  private credentialFrom(address: string, info: AccountInfo<Buffer> | null): OnChainCredential | null {
    if (!this.ownedAccount(address, info)) return null;
    return { ...decodeCredentialAccount(info!.data, address), address, lamports: info!.lamports };
  }

  /**
   * False when there is no account. Anyone can send lamports to a PDA before the program creates
   * it, leaving an empty System-owned account: that counts as absent, not as corrupt.
   */
  private ownedAccount(address: string, info: AccountInfo<Buffer> | null): boolean {
    if (!info) return false;
    if (info.owner.equals(this.programId)) return true;
    if (info.owner.equals(SystemProgram.programId) && info.data.length === 0) return false;
    throw new InvalidAccountData(
      address,
      `is owned by ${info.owner.toBase58()}, not the marketplace program ${this.programId.toBase58()}.`,
    );
  }

  /** Runs one RPC call and turns its failures into DomainErrors naming the URL and the call. */
  private async rpc<T>(
    operation: string,
    call: (connection: Connection) => Promise<T>,
    feePayer?: string,
  ): Promise<T> {
    try {
      return await call(this.connection);
    } catch (error) {
      throw this.translate(operation, error, feePayer);
    }
  }

  private translate(operation: string, error: unknown, feePayer?: string): DomainError {
    if (error instanceof DomainError) return error;
    if (error instanceof SendTransactionError) {
      return transactionRejection(
        error.transactionError.message,
        error.logs ?? [],
        this.programId.toBase58(),
        undefined,
        undefined,
        feePayer,
      );
    }
    const err = error as Error & { code?: unknown; cause?: { code?: string; message?: string } };
    if (typeof err?.code === 'number') return new SolanaRpcError(this.rpcUrl, operation, err.message);
    const text = `${err?.message ?? String(error)}${err?.cause?.message ? ` (${err.cause.message})` : ''}`;
    if (/timeout|aborted/i.test(`${err?.name} ${text}`)) {
      return new SolanaRpcUnavailable(this.rpcUrl, operation, `no answer within ${this.timeoutMs} ms`);
    }
    // web3.js reports HTTP failures as "<status> <statusText>: <body>", sometimes after its own prefix.
    if (
      /fetch failed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|socket|\b(5\d\d|429) [A-Za-z ]+:/i.test(text)
    ) {
      return new SolanaRpcUnavailable(this.rpcUrl, operation, text);
    }
    return new SolanaRpcError(this.rpcUrl, operation, text);
  }
}

/** The fee payer of a serialized legacy transaction, to name it when it cannot pay; else undefined. */
function feePayerOf(wire: Uint8Array): string | undefined {
  try {
    return Transaction.from(wire).feePayer?.toBase58();
  } catch {
    return undefined;
  }
}

/** A web3.js Keypair from a signer, checking the secret's halves and the stated address agree. */
function keypairOf(signer: ProgramSigner): Keypair {
  let keypair: Keypair;
  try {
    keypair = Keypair.fromSecretKey(signer.secretKey);
  } catch {
    throw new InvalidInput(
      'signer: the secret key is not a 64-byte Solana keypair (seed followed by public key).',
    );
  }
  const stated = toPublicKey(signer.publicKey, 'signer.publicKey');
  if (!keypair.publicKey.equals(stated)) {
    throw new InvalidInput(
      `signer: the secret key belongs to ${keypair.publicKey.toBase58()}, not ${stated.toBase58()}.`,
    );
  }
  return keypair;
}
