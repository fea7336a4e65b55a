import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PROGRAM_ID,
  credentialPda,
  listingPda,
  resolveProgramId,
} from '../../../../src/core/marketplace/solana';

const programId = Keypair.generate().publicKey;
const creator = Keypair.generate().publicKey;
const holder = Keypair.generate().publicKey;

describe('PDAs (DESIGN §3 seeds)', () => {
  it('listing = ["listing", creator pubkey, listing id utf8], as findProgramAddressSync derives it', () => {
    const expected = PublicKey.findProgramAddressSync(
      [Buffer.from('listing'), creator.toBytes(), Buffer.from('lst_4fQx9KpZ2mTa7bWc')],
      programId,
    );
    expect(listingPda(programId, creator, 'lst_4fQx9KpZ2mTa7bWc')).toEqual(expected);
    // Strings work as well as PublicKeys.
    expect(listingPda(programId.toBase58(), creator.toBase58(), 'lst_4fQx9KpZ2mTa7bWc')[0].toBase58()).toBe(
      expected[0].toBase58(),
    );
    expect(PublicKey.isOnCurve(expected[0].toBytes())).toBe(false);
  });

  it('credential = ["access", listing PDA, holder pubkey]', () => {
    const [listing] = listingPda(programId, creator, 'lst_4fQx9KpZ2mTa7bWc');
    const expected = PublicKey.findProgramAddressSync(
      [Buffer.from('access'), listing.toBytes(), holder.toBytes()],
      programId,
    );
    expect(credentialPda(programId, listing, holder)).toEqual(expected);
  });

  it('differs per program, creator, listing id and holder', () => {
    const other = Keypair.generate().publicKey;
    const base = listingPda(programId, creator, 'lst_a')[0].toBase58();
    expect(listingPda(other, creator, 'lst_a')[0].toBase58()).not.toBe(base);
    expect(listingPda(programId, other, 'lst_a')[0].toBase58()).not.toBe(base);
    expect(listingPda(programId, creator, 'lst_b')[0].toBase58()).not.toBe(base);
    const [listing] = listingPda(programId, creator, 'lst_a');
    expect(credentialPda(programId, listing, holder)[0].toBase58()).not.toBe(
      credentialPda(programId, listing, other)[0].toBase58(),
    );
  });

  it('takes a listing id of 32 bytes and refuses a longer one with a clear error', () => {
    expect(() => listingPda(programId, creator, 'x'.repeat(32))).not.toThrow();
    expect(() => listingPda(programId, creator, 'x'.repeat(33))).toThrow(
      /listingId: 'x{33}' is 33 bytes; a PDA seed holds at most 32/,
    );
    // Multi-byte UTF-8 counts in bytes: 11 × 3 bytes = 33.
    expect(() => listingPda(programId, creator, '€'.repeat(11))).toThrow(/is 33 bytes/);
    expect(() => listingPda(programId, creator, '')).toThrow('listingId: must not be empty.');
  });

  it('refuses addresses that are not 32-byte base58 keys, naming the argument', () => {
    expect(() => listingPda(programId, 'not-base58!', 'lst_a')).toThrow(
      "creator: 'not-base58!' is not a base58 Solana address.",
    );
    expect(() => credentialPda(programId, 'abc', holder)).toThrow(
      "listing: 'abc' is not a base58 Solana address.",
    );
  });

  it('resolves the configured program ID, else the beta default, and refuses a malformed one', () => {
    expect(resolveProgramId().toBase58()).toBe(DEFAULT_PROGRAM_ID);
    expect(resolveProgramId('  ').toBase58()).toBe(DEFAULT_PROGRAM_ID);
    expect(resolveProgramId(programId.toBase58()).equals(programId)).toBe(true);
    expect(() => resolveProgramId('KBS0')).toThrow(
      "solana.programId: 'KBS0' is not a base58 Solana address.",
    );
  });
});
