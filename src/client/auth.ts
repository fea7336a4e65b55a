import bs58 from 'bs58';
import { KnowledgeClientError } from './errors';

/**
 * A wallet that signs messages with its ed25519 key, e.g. a Solana wallet adapter
 * (`{ address: publicKey.toBase58(), sign: (m) => adapter.signMessage(m) }`) or a Keypair with tweetnacl.
 */
export interface WalletSigner {
  /** The wallet's base58 address (its public key). */
  address: string;
  /** The raw 64-byte ed25519 signature of `message`. */
  sign(message: Uint8Array): Promise<Uint8Array> | Uint8Array;
}

export type AuthMethod = { kind: 'apiKey'; apiKey: string } | { kind: 'wallet'; signer: WalletSigner };

export interface SignedRequestParts {
  method: string;
  /** Path and query exactly as sent: `/v1/credentials?status=active`. */
  pathWithQuery: string;
  /** The exact body bytes; absent for requests without a body. */
  body?: Uint8Array;
}

const WALLET_AUTH_PREFIX = 'kbs-auth:v1';

export function authMethodOf(options: { apiKey?: string; signer?: WalletSigner }): AuthMethod {
  if (options.apiKey !== undefined && options.signer !== undefined) {
    throw new KnowledgeClientError('Pass either apiKey or signer, not both.');
  }
  if (options.signer) return { kind: 'wallet', signer: options.signer };
  if (typeof options.apiKey === 'string' && options.apiKey.trim() !== '') {
    return { kind: 'apiKey', apiKey: options.apiKey.trim() };
  }
  throw new KnowledgeClientError(
    'Missing credentials: pass apiKey (an API key of the marketplace, "kbs_...") or signer (a wallet).',
  );
}

/**
 * The `Authorization` value for one attempt. A wallet signature is made per attempt: the server
 * accepts each signature once and only within five minutes of its timestamp.
 */
export async function authorization(
  auth: AuthMethod,
  request: SignedRequestParts,
  now: number = Date.now(),
): Promise<string> {
  if (auth.kind === 'apiKey') return `Bearer ${auth.apiKey}`;
  const message = await walletAuthMessage(request, now);
  const signature = await auth.signer.sign(new TextEncoder().encode(message));
  return `Wallet ${auth.signer.address}:${bs58.encode(signature)}:${now}`;
}

/** `kbs-auth:v1:<METHOD>:<path with query>:<timestampMs>:<sha256 hex of body>` (DESIGN §2). */
export async function walletAuthMessage(request: SignedRequestParts, timestampMs: number): Promise<string> {
  return [
    WALLET_AUTH_PREFIX,
    request.method.toUpperCase(),
    request.pathWithQuery,
    String(timestampMs),
    await sha256Hex(request.body ?? new Uint8Array()),
  ].join(':');
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) {
    throw new KnowledgeClientError(
      'Wallet-signature authentication needs Web Crypto (crypto.subtle): Node 20 or later, or a browser page served over HTTPS or from localhost.',
    );
  }
  const digest = new Uint8Array(await subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}
