import type { PublicKey } from '@solana/web3.js';
import { Transaction } from '@solana/web3.js';
import type { PreparedListingTransaction, SubmittedListingTransaction } from '../../../../shared/studio';

/** What signing needs from a wallet adapter: the studio's, or a browser wallet's. */
export interface TransactionSigner {
  name: string;
  publicKey: PublicKey | null;
  signTransaction?: (transaction: Transaction) => Promise<Transaction>;
}

/**
 * Signs the prepared create_listing transaction with the adapter and hands the signed bytes to
 * `submit` (the studio verifies and records them). The connected wallet must be the listing's
 * creator, who is the fee payer and the one signer.
 */
export async function signAndSubmitListing(
  signer: TransactionSigner,
  prepared: PreparedListingTransaction,
  submit: (signedBase64: string) => Promise<SubmittedListingTransaction>,
): Promise<SubmittedListingTransaction> {
  const address = signer.publicKey?.toBase58();
  if (!address) throw new Error(`Connect ${signer.name} first.`);
  if (address !== prepared.summary.feePayer) {
    throw new Error(
      `${signer.name} is connected as ${address}, but this listing was created by ${prepared.summary.feePayer}: only the creator can sign create_listing.`,
    );
  }
  if (!signer.signTransaction) throw new Error(`${signer.name} cannot sign transactions.`);
  const transaction = Transaction.from(fromBase64(prepared.transaction));
  const signed = await signer.signTransaction(transaction);
  return submit(toBase64(signed.serialize({ requireAllSignatures: false, verifySignatures: false })));
}

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
