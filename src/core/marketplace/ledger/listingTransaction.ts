import { ComputeBudgetProgram, PublicKey, Transaction, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Listing } from '../../../shared/listings';
import type { ListingTransactionSummary } from '../../../shared/studio';
import { Conflict, InvalidInput } from '../../errors';
import { lamportsToSol, solToLamports } from '../../money';
import { verifySignature } from '../../wallets/keypair';
import { createListingInstruction } from '../solana/instructions';
import { idlInstruction } from '../solana/idl';
import type { SignedListingTransaction } from './ledger';
import { LedgerSignatureRejected } from './signing';

/** What a create_listing transaction's signature covers, as the ledger entry keeps it. */
export const TRANSACTION_MESSAGE_PREFIX = 'solana-tx:v1:';

/** The listing's terms as the program's create_listing instruction takes them. */
export interface CreateListingTerms {
  listingId: string;
  creator: string;
  accessModel: Listing['accessModel'];
  priceLamports: number;
  subscriptionDays: number;
}

export const termsOfListing = (listing: Listing): CreateListingTerms => ({
  listingId: listing.id,
  creator: listing.creatorWallet,
  accessModel: listing.accessModel,
  priceLamports: solToLamports(listing.price),
  subscriptionDays: listing.subscriptionDays ?? 0,
});

/** The unsigned legacy transaction a wallet adapter signs: one create_listing, the creator pays the fee. */
export function buildCreateListingTransaction(
  programId: string,
  terms: CreateListingTerms,
  recentBlockhash: string,
): Transaction {
  return new Transaction({ feePayer: new PublicKey(terms.creator), recentBlockhash }).add(
    createListingInstruction(programId, terms),
  );
}

/** Every field the signature covers, for the confirmation the creator reads before signing. */
export function describeCreateListing(
  transaction: Transaction,
  terms: CreateListingTerms,
  ledger: 'local' | 'solana',
): ListingTransactionSummary {
  const ix = transaction.instructions[0]!;
  const names = idlInstruction('create_listing').accounts.map((a) => a.name);
  return {
    instruction: 'create_listing',
    programId: ix.programId.toBase58(),
    listingId: terms.listingId,
    listingPda: ix.keys[1]!.pubkey.toBase58(),
    feePayer: transaction.feePayer!.toBase58(),
    accounts: ix.keys.map((key, i) => ({
      name: names[i] ?? `account ${i}`,
      address: key.pubkey.toBase58(),
      signer: key.isSigner,
      writable: key.isWritable,
    })),
    accessModel: terms.accessModel,
    price: lamportsToSol(terms.priceLamports),
    priceLamports: terms.priceLamports,
    subscriptionDays: terms.subscriptionDays,
    recentBlockhash: transaction.recentBlockhash!,
    ledger,
  };
}

/**
 * Reads a create_listing transaction a wallet signed and checks it against the listing: the program,
 * the accounts (the listing PDA), the terms in the instruction data, the fee payer, and the creator's
 * ed25519 signature over the message. Browser wallets may add compute-budget instructions; nothing
 * else may ride along.
 */
export function verifyCreateListingTransaction(
  bytes: Uint8Array,
  programId: string,
  terms: CreateListingTerms,
): SignedListingTransaction {
  let tx: Transaction;
  try {
    tx = Transaction.from(bytes);
  } catch (err) {
    throw new InvalidInput(
      `transaction: not a serialized legacy transaction (${err instanceof Error ? err.message : String(err)}).`,
    );
  }
  if (!tx.feePayer || tx.feePayer.toBase58() !== terms.creator) {
    throw new InvalidInput(
      `transaction: the fee payer must be the listing's creator ${terms.creator}, not ${tx.feePayer?.toBase58() ?? 'nobody'}.`,
    );
  }
  const program = tx.instructions.filter((ix) => !ix.programId.equals(ComputeBudgetProgram.programId));
  if (program.length !== 1) {
    throw new InvalidInput(
      `transaction: expected exactly one create_listing instruction, found ${program.length} other instructions.`,
    );
  }
  const expected = createListingInstruction(programId, terms);
  const problem = difference(program[0]!, expected);
  if (problem) {
    throw new Conflict(
      `transaction: ${problem}; it is not create_listing for listing '${terms.listingId}' on its current terms (${terms.accessModel}, ${terms.priceLamports} lamports). Prepare it again.`,
    );
  }
  const entry = tx.signatures.find((s) => s.publicKey.toBase58() === terms.creator);
  if (!entry?.signature) {
    throw new LedgerSignatureRejected(
      `create_listing: the transaction is not signed by the creator ${terms.creator}.`,
    );
  }
  const message = tx.serializeMessage();
  if (!verifySignature(terms.creator, message, entry.signature)) {
    throw new LedgerSignatureRejected(
      `create_listing: the creator's signature does not verify over the transaction's message.`,
    );
  }
  return {
    ...terms,
    signature: bs58.encode(entry.signature),
    message: TRANSACTION_MESSAGE_PREFIX + Buffer.from(message).toString('base64'),
    wire: new Uint8Array(tx.serialize({ requireAllSignatures: true, verifySignatures: false })),
  };
}

/** The message bytes a SignedListingTransaction's signature covers. */
export function signedMessageBytes(signed: Pick<SignedListingTransaction, 'message'>): Uint8Array {
  if (!signed.message.startsWith(TRANSACTION_MESSAGE_PREFIX)) {
    throw new LedgerSignatureRejected('create_listing: the signed message is not a transaction message.');
  }
  return new Uint8Array(Buffer.from(signed.message.slice(TRANSACTION_MESSAGE_PREFIX.length), 'base64'));
}

function difference(actual: TransactionInstruction, expected: TransactionInstruction): string | undefined {
  if (!actual.programId.equals(expected.programId)) {
    return `its program is ${actual.programId.toBase58()}, not the marketplace program ${expected.programId.toBase58()}`;
  }
  if (actual.keys.length !== expected.keys.length) {
    return `it has ${actual.keys.length} accounts, create_listing has ${expected.keys.length}`;
  }
  for (let i = 0; i < expected.keys.length; i++) {
    const a = actual.keys[i]!;
    const e = expected.keys[i]!;
    if (!a.pubkey.equals(e.pubkey))
      return `account ${i} is ${a.pubkey.toBase58()}, expected ${e.pubkey.toBase58()}`;
    if (a.isSigner !== e.isSigner || a.isWritable !== e.isWritable) {
      return `account ${i} (${e.pubkey.toBase58()}) has other signer/writable flags`;
    }
  }
  if (!Buffer.from(actual.data).equals(Buffer.from(expected.data))) return 'its instruction data differ';
  return undefined;
}
