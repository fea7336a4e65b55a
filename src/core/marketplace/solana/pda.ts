import { PublicKey } from '@solana/web3.js';
import { InvalidInput } from '../../errors';
import { DEFAULT_PROGRAM_ID } from './idl';

/** Seeds of DESIGN §3: listing = ["listing", creator, listing id utf8]; credential = ["access", listing PDA, holder]. */
export const LISTING_SEED = 'listing';
export const ACCESS_SEED = 'access';
/** Solana's limit on one PDA seed; listing ids (`lst_` + 16 base62) are 20 bytes. */
export const MAX_SEED_BYTES = 32;

export type Address = PublicKey | string;

/** A public key from a base58 string (or a PublicKey), or InvalidInput naming `field`. */
export function toPublicKey(value: Address, field: string): PublicKey {
  if (value instanceof PublicKey) return value;
  if (typeof value === 'string') {
    try {
      return new PublicKey(value);
    } catch {
      // Reported below with the field's name.
    }
  }
  throw new InvalidInput(`${field}: '${String(value)}' is not a base58 Solana address.`);
}

/** The configured program ID (setting `solana.programId` / KBSTUDIO_PROGRAM_ID), else the beta default. */
export function resolveProgramId(configured?: string | null): PublicKey {
  const value = configured?.trim();
  return toPublicKey(value || DEFAULT_PROGRAM_ID, 'solana.programId');
}

/** UTF-8 bytes of a listing id as a seed; refuses ids that cannot be one. */
export function listingIdSeed(listingId: string): Buffer {
  const bytes = Buffer.from(listingId, 'utf8');
  if (bytes.length === 0) throw new InvalidInput('listingId: must not be empty.');
  if (bytes.length > MAX_SEED_BYTES) {
    throw new InvalidInput(
      `listingId: '${listingId}' is ${bytes.length} bytes; a PDA seed holds at most ${MAX_SEED_BYTES} (listing ids are lst_ + 16 base62 = 20 bytes).`,
    );
  }
  return bytes;
}

/** The listing account's address and bump, as `PublicKey.findProgramAddressSync` gives them. */
export function listingPda(programId: Address, creator: Address, listingId: string): [PublicKey, number] {
  return PublicKey.findProgramAddressSync(
    [Buffer.from(LISTING_SEED, 'utf8'), toPublicKey(creator, 'creator').toBuffer(), listingIdSeed(listingId)],
    toPublicKey(programId, 'programId'),
  );
}

/** The access credential's address and bump for one holder of one listing. */
export function credentialPda(programId: Address, listing: Address, holder: Address): [PublicKey, number] {
  return PublicKey.findProgramAddressSync(
    [
      Buffer.from(ACCESS_SEED, 'utf8'),
      toPublicKey(listing, 'listing').toBuffer(),
      toPublicKey(holder, 'holder').toBuffer(),
    ],
    toPublicKey(programId, 'programId'),
  );
}
