import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PublicKey, SystemProgram, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import {
  CREDENTIAL_ACCOUNT_SPACE,
  LISTING_ACCOUNT_SPACE,
  credentialStatus,
  decodeCredentialAccount,
  decodeListingAccount,
  encodeCredentialAccount,
  encodeListingAccount,
  type CredentialAccount,
  type ListingAccount,
} from '../../src/core/marketplace/solana/accounts';
import {
  decodeInstructionData,
  encodeTypeData,
  type IdlStruct,
} from '../../src/core/marketplace/solana/codec';
import { DEFAULT_PROGRAM_ID, idlInstruction } from '../../src/core/marketplace/solana/idl';
import { programError } from '../../src/core/marketplace/solana/rejections';
import { verifySignature } from '../../src/core/wallets/keypair';

/**
 * A local Solana JSON-RPC 2.0 node (127.0.0.1, port 0) speaking the real wire format for what
 * @solana/web3.js's Connection calls, with a tiny simulator of the marketplace program: transactions
 * are decoded, their signatures verified, and the program's rules applied to an in-memory account
 * store, atomically per transaction. PDAs are derived here from DESIGN §3's seeds, independently
 * of src/…/pda.ts. Unknown methods answer -32601 and are listed in `unknownMethods`.
 */

export interface FakeAccount {
  lamports: bigint;
  data: Buffer;
  owner: string;
  executable: boolean;
}

export interface RpcCall {
  method: string;
  params: unknown[];
}

export interface TransactionRecord {
  signature: string;
  slot: number;
  err: unknown;
  logs: string[];
  returnData?: { programId: string; data: [string, 'base64'] };
  polls: number;
}

export interface FakeSolanaRpcOptions {
  programId?: string;
  /** Unix seconds of the cluster clock at start; default now. */
  time?: number;
  /** getSignatureStatuses polls answering 'processed' before a transaction is 'confirmed'. Default 1. */
  confirmAfterPolls?: number;
}

export interface FakeSolanaRpc {
  url: string;
  programId: string;
  requests: RpcCall[];
  unknownMethods: string[];
  transactions: Map<string, TransactionRecord>;
  /** When true, requests are read but never answered (an RPC that hangs). */
  hang: boolean;
  /**
   * Called with each request's method before it is answered: a test changes the cluster there, as
   * another client's transaction landing just before this one would.
   */
  beforeAnswer?: (method: string) => void;
  /** Cluster clock, Unix seconds; tests move it to expire subscriptions. */
  time: number;
  calls(method: string): RpcCall[];
  account(address: string): FakeAccount | undefined;
  setAccount(
    address: string,
    account: Omit<Partial<FakeAccount>, 'lamports'> & { lamports: bigint | number },
  ): void;
  fund(address: string, lamports: bigint | number): void;
  /** Seeds a Listing account at its PDA (rent-exempt), as create_listing would; returns the address. */
  seedListing(
    listing: Partial<ListingAccount> & Pick<ListingAccount, 'creator' | 'listingId' | 'accessModel'>,
  ): string;
  /** Seeds an AccessCredential at its PDA, as purchase_access would; returns the address. */
  seedCredential(
    credential: Partial<CredentialAccount> & Pick<CredentialAccount, 'listing' | 'holder' | 'accessModel'>,
  ): string;
  close(): Promise<void>;
}

export const FEE_LAMPORTS_PER_SIGNATURE = 5000n;
const SYSTEM_PROGRAM = SystemProgram.programId.toBase58();
const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';
const BLOCKHASH_VALIDITY = 150;

/** Rent-exempt minimum, Solana's formula: (128 + data bytes) * 3480 lamports/byte-year * 2 years. */
export const rentExempt = (space: number): bigint => BigInt((128 + space) * 3480 * 2);

export function listingAddress(programId: string, creator: string, listingId: string): [string, number] {
  const [key, bump] = PublicKey.findProgramAddressSync(
    [Buffer.from('listing'), new PublicKey(creator).toBuffer(), Buffer.from(listingId, 'utf8')],
    new PublicKey(programId),
  );
  return [key.toBase58(), bump];
}

export function credentialAddress(programId: string, listing: string, holder: string): [string, number] {
  const [key, bump] = PublicKey.findProgramAddressSync(
    [Buffer.from('access'), new PublicKey(listing).toBuffer(), new PublicKey(holder).toBuffer()],
    new PublicKey(programId),
  );
  return [key.toBase58(), bump];
}

class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** A failed instruction: the runtime's `err` value plus what the node logs for it. */
class InstructionFailure extends Error {
  constructor(
    readonly err: unknown,
    readonly logs: string[],
    message: string,
  ) {
    super(message);
  }
}

export async function startFakeSolanaRpc(options: FakeSolanaRpcOptions = {}): Promise<FakeSolanaRpc> {
  const programId = options.programId ?? DEFAULT_PROGRAM_ID;
  const confirmAfterPolls = options.confirmAfterPolls ?? 1;
  const accounts = new Map<string, FakeAccount>();
  const blockhashes = new Map<string, number>();
  const transactions = new Map<string, TransactionRecord>();
  const requests: RpcCall[] = [];
  const unknownMethods: string[] = [];
  let slot = 1000;
  let blockHeight = 900;

  const fake: FakeSolanaRpc = {
    url: '',
    programId,
    requests,
    unknownMethods,
    transactions,
    hang: false,
    time: options.time ?? Math.floor(Date.now() / 1000),
    calls: (method: string) => requests.filter((r) => r.method === method),
    account: (address: string) => accounts.get(address),
    setAccount(
      address: string,
      account: Omit<Partial<FakeAccount>, 'lamports'> & { lamports: bigint | number },
    ) {
      accounts.set(address, {
        data: Buffer.alloc(0),
        owner: SYSTEM_PROGRAM,
        executable: false,
        ...account,
        lamports: BigInt(account.lamports),
      });
    },
    fund(address: string, lamports: bigint | number) {
      const existing = accounts.get(address);
      if (existing) existing.lamports += BigInt(lamports);
      else fake.setAccount(address, { lamports });
    },
    seedListing(
      listing: Partial<ListingAccount> & Pick<ListingAccount, 'creator' | 'listingId' | 'accessModel'>,
    ) {
      const [address, bump] = listingAddress(programId, listing.creator, listing.listingId);
      const full: ListingAccount = {
        priceLamports: 0n,
        subscriptionDays: listing.accessModel === 'subscription' ? 30 : 0,
        earnedLamports: 0n,
        withdrawnLamports: 0n,
        bump,
        ...listing,
      };
      const data = encodeListingAccount(full);
      fake.setAccount(address, {
        lamports: rentExempt(data.length) + full.earnedLamports - full.withdrawnLamports,
        data,
        owner: programId,
      });
      return address;
    },
    seedCredential(
      credential: Partial<CredentialAccount> & Pick<CredentialAccount, 'listing' | 'holder' | 'accessModel'>,
    ) {
      const [address, bump] = credentialAddress(programId, credential.listing, credential.holder);
      const full: CredentialAccount = {
        expiresAt: 0,
        balanceLamports: 0n,
        createdAt: fake.time,
        bump,
        ...credential,
      };
      const data = encodeCredentialAccount(full);
      fake.setAccount(address, { lamports: rentExempt(data.length), data, owner: programId });
      return address;
    },
    close: async () => {},
  };

  const issueBlockhash = () => {
    const blockhash = bs58.encode(randomBytes(32));
    blockhashes.set(blockhash, blockHeight + BLOCKHASH_VALIDITY);
    return { blockhash, lastValidBlockHeight: blockHeight + BLOCKHASH_VALIDITY };
  };
  const context = () => ({ apiVersion: '2.1.0', slot });
  const accountJson = (account: FakeAccount | undefined) =>
    account
      ? {
          data: [account.data.toString('base64'), 'base64'],
          executable: account.executable,
          lamports: Number(account.lamports),
          owner: account.owner,
          rentEpoch: 0,
          space: account.data.length,
        }
      : null;
  const checkEncoding = (config: unknown) => {
    const encoding = (config as { encoding?: string } | undefined)?.encoding ?? 'base64';
    if (encoding !== 'base64')
      throw new RpcFailure(-32602, `Invalid params: the fake serves encoding base64, not ${encoding}`);
  };
  const land = (record: Omit<TransactionRecord, 'slot' | 'polls'>) => {
    slot += 1;
    blockHeight += 1;
    transactions.set(record.signature, { ...record, slot, polls: 0 });
  };

  const methods: Record<string, (params: unknown[]) => unknown> = {
    getVersion: () => ({ 'solana-core': '2.1.0', 'feature-set': 1 }),
    getSlot: () => slot,
    getBlockHeight: () => blockHeight,
    getLatestBlockhash: () => ({ context: context(), value: issueBlockhash() }),
    getMinimumBalanceForRentExemption: ([space]) => Number(rentExempt(Number(space))),
    getBalance: ([address]) => ({
      context: context(),
      value: Number(accounts.get(String(address))?.lamports ?? 0n),
    }),
    getAccountInfo: ([address, config]) => {
      checkEncoding(config);
      return { context: context(), value: accountJson(accounts.get(String(address))) };
    },
    getMultipleAccounts: ([addresses, config]) => {
      checkEncoding(config);
      return { context: context(), value: (addresses as string[]).map((a) => accountJson(accounts.get(a))) };
    },
    requestAirdrop: ([address, lamports]) => {
      const amount = Number(lamports);
      if (!Number.isSafeInteger(amount) || amount <= 0)
        throw new RpcFailure(-32602, 'Invalid params: lamports');
      fake.fund(String(address), amount);
      const signature = bs58.encode(randomBytes(64));
      land({ signature, err: null, logs: [] });
      return signature;
    },
    getSignatureStatuses: ([signatures]) => ({
      context: context(),
      value: (signatures as string[]).map((signature) => {
        const record = transactions.get(signature);
        if (!record) return null;
        record.polls += 1;
        const confirmed = record.polls > confirmAfterPolls;
        return {
          slot: record.slot,
          confirmations: confirmed ? 1 : 0,
          err: record.err,
          status: record.err ? { Err: record.err } : { Ok: null },
          confirmationStatus: confirmed ? 'confirmed' : 'processed',
        };
      }),
    }),
    simulateTransaction: ([encoded, config]) => {
      const {
        encoding = 'base58',
        sigVerify = false,
        replaceRecentBlockhash = false,
      } = (config ?? {}) as { encoding?: string; sigVerify?: boolean; replaceRecentBlockhash?: boolean };
      const tx = decodeTransaction(encoded, encoding);
      if (sigVerify) verifySignatures(tx);
      if (!replaceRecentBlockhash && !blockhashes.has(tx.message.recentBlockhash)) {
        return {
          context: context(),
          value: { err: 'BlockhashNotFound', logs: [], accounts: null, unitsConsumed: 0 },
        };
      }
      const outcome = execute(tx);
      return {
        context: context(),
        value: {
          err: outcome.err,
          logs: outcome.logs,
          accounts: null,
          unitsConsumed: 0,
          returnData: outcome.returnData ?? null,
        },
      };
    },
    sendTransaction: ([encoded, config]) => {
      const { encoding = 'base58', skipPreflight = false } = (config ?? {}) as {
        encoding?: string;
        skipPreflight?: boolean;
      };
      const tx = decodeTransaction(encoded, encoding);
      const signature = bs58.encode(tx.signatures[0] ?? new Uint8Array(64));
      verifySignatures(tx);
      if (transactions.has(signature)) {
        throw new RpcFailure(
          -32002,
          'Transaction simulation failed: This transaction has already been processed',
          {
            err: 'AlreadyProcessed',
            logs: [],
          },
        );
      }
      const validUntil = blockhashes.get(tx.message.recentBlockhash);
      if (validUntil === undefined || validUntil < blockHeight) {
        throw new RpcFailure(-32002, 'Transaction simulation failed: Blockhash not found', {
          err: 'BlockhashNotFound',
          logs: [],
        });
      }
      const outcome = execute(tx);
      if (outcome.err && !skipPreflight) {
        throw new RpcFailure(-32002, `Transaction simulation failed: ${outcome.message}`, {
          err: outcome.err,
          logs: outcome.logs,
          accounts: null,
          unitsConsumed: 0,
          returnData: null,
        });
      }
      for (const [address, account] of outcome.accounts) {
        if (account.lamports === 0n) accounts.delete(address);
        else accounts.set(address, account);
      }
      land({ signature, err: outcome.err, logs: outcome.logs, returnData: outcome.returnData });
      return signature;
    },
  };

  function decodeTransaction(encoded: unknown, encoding: string): VersionedTransaction {
    try {
      const bytes =
        encoding === 'base64' ? Buffer.from(String(encoded), 'base64') : bs58.decode(String(encoded));
      return VersionedTransaction.deserialize(bytes);
    } catch (error) {
      throw new RpcFailure(
        -32602,
        `invalid transaction: failed to deserialize (${(error as Error).message})`,
      );
    }
  }

  function verifySignatures(tx: VersionedTransaction): void {
    const message = tx.message.serialize();
    const keys = tx.message.staticAccountKeys;
    for (let i = 0; i < tx.message.header.numRequiredSignatures; i++) {
      const sig = tx.signatures[i];
      const key = keys[i];
      if (!sig || !key || !verifySignature(key.toBase58(), message, sig)) {
        throw new RpcFailure(-32003, 'Transaction signature verification failure');
      }
    }
  }

  /** Runs every instruction against a copy of the store; the copy is kept only if all succeed. */
  function execute(tx: VersionedTransaction) {
    const message = tx.message;
    if (message.addressTableLookups.length)
      throw new RpcFailure(-32602, 'the fake has no address lookup tables');
    const keys = message.staticAccountKeys.map((k) => k.toBase58());
    const working = new Map<string, FakeAccount>();
    const read = (address: string) => working.get(address) ?? accounts.get(address);
    const write = (address: string, account: FakeAccount) => void working.set(address, account);
    const logs: string[] = [];
    let returnData: TransactionRecord['returnData'];
    const payer = keys[0]!;
    const fee = FEE_LAMPORTS_PER_SIGNATURE * BigInt(message.header.numRequiredSignatures);
    const payerAccount = read(payer);
    if (!payerAccount) {
      return failure(
        'AccountNotFound',
        'Attempt to debit an account but found no record of a prior credit.',
        [],
      );
    }
    if (payerAccount.lamports < fee)
      return failure('InsufficientFundsForFee', 'Insufficient funds for fee', []);
    write(payer, { ...payerAccount, lamports: payerAccount.lamports - fee });
    // A transaction that fails after landing (skipPreflight) still pays its fee.
    const feeOnly = new Map(working);

    for (const [index, ix] of message.compiledInstructions.entries()) {
      const program = keys[ix.programIdIndex]!;
      const metas = ix.accountKeyIndexes.map((i) => ({
        key: keys[i]!,
        signer: message.isAccountSigner(i),
        writable: message.isAccountWritable(i),
      }));
      const data = Buffer.from(ix.data);
      try {
        if (program === COMPUTE_BUDGET) continue;
        logs.push(`Program ${program} invoke [1]`);
        if (program === SYSTEM_PROGRAM) systemInstruction(metas, data, { read, write, logs });
        else if (program === programId) {
          returnData = marketplaceInstruction(metas, data, { read, write, logs }) ?? returnData;
        } else {
          throw new InstructionFailure(
            'ProgramAccountNotFound',
            logs,
            'Attempt to load a program that does not exist',
          );
        }
        logs.push(`Program ${program} success`);
      } catch (error) {
        if (!(error instanceof InstructionFailure)) throw error;
        return failure(
          { InstructionError: [index, error.err] },
          `Error processing Instruction ${index}: ${error.message}`,
          logs,
          feeOnly,
        );
      }
    }
    return { err: null, message: '', logs, returnData, accounts: working };

    function failure(
      err: unknown,
      text: string,
      failureLogs: string[],
      charged = new Map<string, FakeAccount>(),
    ) {
      return { err, message: text, logs: failureLogs, returnData: undefined, accounts: charged };
    }
  }

  interface Store {
    read(address: string): FakeAccount | undefined;
    write(address: string, account: FakeAccount): void;
    logs: string[];
  }
  type Meta = { key: string; signer: boolean; writable: boolean };

  function systemInstruction(metas: Meta[], data: Buffer, store: Store): void {
    // Only Transfer (index 2: u32 tag, u64 lamports) is simulated.
    if (data.length < 12 || data.readUInt32LE(0) !== 2) {
      throw new InstructionFailure('InvalidInstructionData', store.logs, 'invalid instruction data');
    }
    const [from, to] = metas;
    if (!from?.signer || !from.writable || !to?.writable) {
      throw new InstructionFailure(
        'MissingRequiredSignature',
        store.logs,
        'missing required signature for instruction',
      );
    }
    transfer(store, from.key, to.key, data.readBigUInt64LE(4));
  }

  function transfer(store: Store, from: string, to: string, lamports: bigint): void {
    const source = store.read(from);
    const have = source?.lamports ?? 0n;
    if (have < lamports) {
      store.logs.push(`Transfer: insufficient lamports ${have}, need ${lamports}`);
      store.logs.push(`Program ${SYSTEM_PROGRAM} failed: custom program error: 0x1`);
      throw new InstructionFailure({ Custom: 1 }, store.logs, 'custom program error: 0x1');
    }
    store.write(from, { ...source!, lamports: have - lamports });
    const target = store.read(to);
    store.write(to, target ? { ...target, lamports: target.lamports + lamports } : emptyAccount(lamports));
  }

  /** The marketplace program's rules (docs/solana.md); returns return data for verify_access. */
  function marketplaceInstruction(
    metas: Meta[],
    data: Buffer,
    store: Store,
  ): TransactionRecord['returnData'] {
    let decoded: { name: string; args: IdlStruct };
    try {
      decoded = decodeInstructionData(data);
    } catch {
      anchorError(data.length < 8 ? 100 : 101);
    }
    const { name, args } = decoded!;
    store.logs.push(`Program log: Instruction: ${pascal(name)}`);
    const ix = idlInstruction(name);
    if (metas.length < ix.accounts.length) anchorError(3005);
    const acc: Record<string, Meta> = {};
    ix.accounts.forEach((spec, i) => {
      const meta = metas[i]!;
      if (spec.signer && !meta.signer) anchorError(3010, spec.name);
      if (spec.writable && !meta.writable) anchorError(2000, spec.name);
      if (spec.address && meta.key !== spec.address) anchorError(3008, spec.name);
      acc[spec.name] = meta;
    });

    const loadListing = (): ListingAccount => {
      const key = acc.listing!.key;
      const account = store.read(key);
      if (!account || account.owner === SYSTEM_PROGRAM) anchorError(3012, 'listing');
      if (account!.owner !== programId) anchorError(3007, 'listing');
      let listing: ListingAccount;
      try {
        listing = decodeListingAccount(account!.data, key);
      } catch {
        anchorError(3002, 'listing');
      }
      if (listingAddress(programId, listing!.creator, listing!.listingId)[0] !== key)
        anchorError(2006, 'listing');
      return listing!;
    };
    const loadCredential = (
      holder: string,
    ): { address: string; bump: number; credential?: CredentialAccount } => {
      const [address, bump] = credentialAddress(programId, acc.listing!.key, holder);
      if (acc.credential!.key !== address) anchorError(2006, 'credential');
      const account = store.read(address);
      if (!account || account.owner === SYSTEM_PROGRAM) return { address, bump };
      return { address, bump, credential: decodeCredentialAccount(account.data, address) };
    };
    const saveListing = (key: string, listing: ListingAccount) =>
      store.write(key, { ...store.read(key)!, data: encodeListingAccount(listing) });

    switch (name) {
      case 'create_listing': {
        const listingId = args.listing_id as string;
        const idBytes = Buffer.byteLength(listingId, 'utf8');
        if (idBytes === 0 || idBytes > 32) programFailure(6000);
        const creator = acc.creator!.key;
        const [address, bump] = listingAddress(programId, creator, listingId);
        if (acc.listing!.key !== address) anchorError(2006, 'listing');
        const model = accessModelOf(args.access_model as string);
        const days = args.subscription_days as number;
        if (model === 'subscription' ? days < 1 : days !== 0) programFailure(6001);
        createAccount(store, creator, address, LISTING_ACCOUNT_SPACE);
        const listing: ListingAccount = {
          creator,
          listingId,
          accessModel: model,
          priceLamports: args.price_lamports as bigint,
          subscriptionDays: days,
          earnedLamports: 0n,
          withdrawnLamports: 0n,
          bump,
        };
        saveListing(address, listing);
        return undefined;
      }
      case 'purchase_access': {
        const listing = loadListing();
        const buyer = acc.buyer!.key;
        const { address, bump, credential } = loadCredential(buyer);
        const periods = args.periods as number;
        const deposit = args.deposit_lamports as bigint;
        let cost: bigint;
        if (listing.accessModel === 'one_time') {
          if (periods !== 1) programFailure(6002);
          if (deposit !== 0n) programFailure(6003);
          if (credential) programFailure(6004);
          cost = listing.priceLamports;
        } else if (listing.accessModel === 'subscription') {
          if (periods < 1) programFailure(6002);
          if (deposit !== 0n) programFailure(6003);
          cost = listing.priceLamports * BigInt(periods);
        } else {
          if (periods !== 0) programFailure(6002);
          if (deposit === 0n || deposit < listing.priceLamports) programFailure(6003);
          cost = deposit;
        }
        if (cost >= 1n << 64n) programFailure(6008);
        if (!credential) createAccount(store, buyer, address, CREDENTIAL_ACCOUNT_SPACE);
        transfer(store, buyer, acc.listing!.key, cost);
        const base = credential ?? {
          listing: acc.listing!.key,
          holder: buyer,
          accessModel: listing.accessModel,
          expiresAt: 0,
          balanceLamports: 0n,
          createdAt: fake.time,
          bump,
        };
        const updated: CredentialAccount = {
          ...base,
          expiresAt:
            listing.accessModel === 'subscription'
              ? Math.max(base.expiresAt, fake.time) + periods * listing.subscriptionDays * 86_400
              : 0,
          balanceLamports: listing.accessModel === 'per_query' ? base.balanceLamports + deposit : 0n,
        };
        store.write(address, { ...store.read(address)!, data: encodeCredentialAccount(updated) });
        saveListing(acc.listing!.key, { ...listing, earnedLamports: listing.earnedLamports + cost });
        return undefined;
      }
      case 'verify_access': {
        const listing = loadListing();
        const { credential } = loadCredential(acc.holder!.key);
        if (!credential) anchorError(3012, 'credential');
        const status = credentialStatus(credential!, listing, fake.time);
        const value = {
          status: { active: 'Active', expired: 'Expired', low_balance: 'LowBalance' }[status],
          expires_at: BigInt(credential!.expiresAt),
          balance_lamports: credential!.balanceLamports,
        };
        const bytes = encodeTypeData({ defined: { name: 'AccessVerification' } }, value);
        store.logs.push(`Program return: ${programId} ${bytes.toString('base64')}`);
        return { programId, data: [bytes.toString('base64'), 'base64'] };
      }
      case 'revoke_access': {
        const listing = loadListing();
        const holder = acc.holder!.key;
        const { address, credential } = loadCredential(holder);
        if (!credential) anchorError(3012, 'credential');
        const authority = acc.authority!.key;
        if (authority !== listing.creator && authority !== holder) programFailure(6005);
        const closing = store.read(address)!;
        const target = store.read(holder);
        store.write(
          holder,
          target
            ? { ...target, lamports: target.lamports + closing.lamports }
            : emptyAccount(closing.lamports),
        );
        store.write(address, emptyAccount(0n));
        return undefined;
      }
      case 'withdraw_earnings': {
        const listing = loadListing();
        if (listing.creator !== acc.creator!.key) anchorError(2001, 'listing');
        const amount = args.amount_lamports as bigint;
        if (amount === 0n) programFailure(6006);
        if (amount > listing.earnedLamports - listing.withdrawnLamports) programFailure(6007);
        const key = acc.listing!.key;
        const account = store.read(key)!;
        store.write(key, { ...account, lamports: account.lamports - amount });
        const creator = store.read(acc.creator!.key)!;
        store.write(acc.creator!.key, { ...creator, lamports: creator.lamports + amount });
        saveListing(key, { ...listing, withdrawnLamports: listing.withdrawnLamports + amount });
        return undefined;
      }
    }
    return undefined;

    function anchorError(code: number, account?: string): never {
      const info = programError(code);
      store.logs.push(
        `Program log: AnchorError caused by account: ${account ?? 'unknown'}. Error Code: ${info.name}. Error Number: ${code}. Error Message: ${info.message}.`,
      );
      return fail(code);
    }
    function programFailure(code: number): never {
      const info = programError(code);
      store.logs.push(
        `Program log: AnchorError thrown in programs/kb_marketplace/src/lib.rs:1. Error Code: ${info.name}. Error Number: ${code}. Error Message: ${info.message}.`,
      );
      return fail(code);
    }
    function fail(code: number): never {
      const text = `custom program error: 0x${code.toString(16)}`;
      store.logs.push(`Program ${programId} failed: ${text}`);
      throw new InstructionFailure({ Custom: code }, store.logs, text);
    }
  }

  /** The program's `init`: System Program create_account at a PDA, paid by `payer`. */
  function createAccount(store: Store, payer: string, address: string, space: number): void {
    const existing = store.read(address);
    if (existing && (existing.owner !== SYSTEM_PROGRAM || existing.data.length > 0)) {
      store.logs.push(`Program ${SYSTEM_PROGRAM} invoke [2]`);
      store.logs.push(`Allocate: account Address { address: ${address}, base: None } already in use`);
      store.logs.push(`Program ${SYSTEM_PROGRAM} failed: custom program error: 0x0`);
      throw new InstructionFailure({ Custom: 0 }, store.logs, 'custom program error: 0x0');
    }
    const prefunded = existing?.lamports ?? 0n;
    const rent = rentExempt(space);
    if (rent > prefunded) transfer(store, payer, address, rent - prefunded);
    store.write(address, {
      lamports: rent > prefunded ? rent : prefunded,
      data: Buffer.alloc(space),
      owner: programId,
      executable: false,
    });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (fake.hang) return;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return reply(res, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      }
      const answer = (call: unknown) => {
        const {
          id = null,
          method,
          params = [],
        } = (call ?? {}) as { id?: unknown; method?: string; params?: unknown[] };
        requests.push({ method: String(method), params });
        fake.beforeAnswer?.(String(method));
        const handler = method ? methods[method] : undefined;
        if (!handler) {
          unknownMethods.push(String(method));
          return { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } };
        }
        try {
          return { jsonrpc: '2.0', id, result: handler(params) };
        } catch (error) {
          if (error instanceof RpcFailure) {
            return {
              jsonrpc: '2.0',
              id,
              error: {
                code: error.code,
                message: error.message,
                ...(error.data ? { data: error.data } : {}),
              },
            };
          }
          return {
            jsonrpc: '2.0',
            id,
            error: { code: -32603, message: `Internal error: ${(error as Error).message}` },
          };
        }
      };
      reply(res, Array.isArray(body) ? body.map(answer) : answer(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

function reply(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

function emptyAccount(lamports: bigint): FakeAccount {
  return { lamports, data: Buffer.alloc(0), owner: SYSTEM_PROGRAM, executable: false };
}

function accessModelOf(variant: string): ListingAccount['accessModel'] {
  return ({ OneTime: 'one_time', Subscription: 'subscription', PerQuery: 'per_query' } as const)[
    variant as 'OneTime' | 'Subscription' | 'PerQuery'
  ];
}

const pascal = (name: string) => name.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase());
