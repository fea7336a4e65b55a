import { createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';
import bs58 from 'bs58';
import { InvalidInput } from '../errors';

/** An ed25519 keypair in Solana's layout: 64-byte secret = 32-byte seed followed by the public key. */
export interface SolanaKeypair {
  address: string;
  secretKey: Uint8Array;
}

const b64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');

/**
 * A new keypair from a random 32-byte seed (any seed is a valid ed25519 key). Not generateKeyPairSync:
 * on Node 20, exporting its key as JWK can deadlock the thread for good when a garbage collection during
 * the export destroys an earlier call's key-generation job, whose destructor waits for the mutex the
 * export holds (seen in CI: the test process hung in ~KeyGenJob under ExportJWKEdKey).
 */
export function generateKeypair(): SolanaKeypair {
  const seed = new Uint8Array(randomBytes(32));
  const pub = publicKeyOfSeed(seed);
  const secretKey = new Uint8Array(64);
  secretKey.set(seed);
  secretKey.set(pub, 32);
  return { address: bs58.encode(pub), secretKey };
}

/** Reads a Solana CLI `id.json` (a JSON array of 64 bytes) and checks the halves belong together. */
export function keypairFromSolanaCliJson(text: string, fileName = 'id.json'): SolanaKeypair {
  let bytes: unknown;
  try {
    bytes = JSON.parse(text);
  } catch {
    throw new InvalidInput(
      `${fileName} is not JSON: expected the Solana CLI format, an array of 64 numbers.`,
    );
  }
  if (
    !Array.isArray(bytes) ||
    bytes.length !== 64 ||
    !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)
  ) {
    throw new InvalidInput(`${fileName} must be the Solana CLI format: a JSON array of 64 numbers 0..255.`);
  }
  const secretKey = new Uint8Array(bytes as number[]);
  const derived = publicKeyOfSeed(secretKey.subarray(0, 32));
  if (!Buffer.from(derived).equals(Buffer.from(secretKey.subarray(32)))) {
    throw new InvalidInput(`${fileName}: the public half does not match the secret half of the keypair.`);
  }
  return { address: bs58.encode(derived), secretKey };
}

function privateKeyOf(secretKey: Uint8Array) {
  return createPrivateKey({
    key: {
      kty: 'OKP',
      crv: 'Ed25519',
      d: b64url(secretKey.subarray(0, 32)),
      x: b64url(secretKey.subarray(32)),
    },
    format: 'jwk',
  });
}

function publicKeyOfSeed(seed: Uint8Array): Uint8Array {
  // Node derives the public key from the private JWK's `d`; `x` is only checked for shape.
  const jwk = createPublicKey(
    createPrivateKey({
      key: { kty: 'OKP', crv: 'Ed25519', d: b64url(seed), x: b64url(new Uint8Array(32)) },
      format: 'jwk',
    }),
  ).export({ format: 'jwk' });
  return new Uint8Array(Buffer.from(jwk.x as string, 'base64url'));
}

export function signMessage(secretKey: Uint8Array, message: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, privateKeyOf(secretKey)));
}

export function verifySignature(address: string, message: Uint8Array, signature: Uint8Array): boolean {
  let pub: Uint8Array;
  try {
    pub = bs58.decode(address);
  } catch {
    return false;
  }
  if (pub.length !== 32 || signature.length !== 64) return false;
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(pub) }, format: 'jwk' });
  return verify(null, message, key, signature);
}

export function isWalletAddress(value: string): boolean {
  try {
    return bs58.decode(value).length === 32;
  } catch {
    return false;
  }
}
