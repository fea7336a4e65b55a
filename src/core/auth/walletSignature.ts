import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { Unauthorized } from '../errors';
import { isWalletAddress, signMessage, verifySignature } from '../wallets/keypair';

/** Signatures are accepted within this distance of the server's clock, either way (DESIGN §2). */
export const WALLET_AUTH_WINDOW_MS = 5 * 60_000;
export const WALLET_AUTH_PREFIX = 'kbs-auth:v1';

export interface SignedRequest {
  method: string;
  /** The path as sent, with its query string: `/v1/credentials?status=active`. */
  pathWithQuery: string;
  /** The raw body bytes; absent or empty for requests without a body. */
  body?: Uint8Array | string;
}

export const sha256Hex = (body: Uint8Array | string = ''): string =>
  createHash('sha256').update(body).digest('hex');

/** `kbs-auth:v1:<METHOD>:<path with query>:<timestampMs>:<sha256 hex of body>` */
export function walletAuthMessage(request: SignedRequest, timestampMs: number): string {
  return [
    WALLET_AUTH_PREFIX,
    request.method.toUpperCase(),
    request.pathWithQuery,
    String(timestampMs),
    sha256Hex(request.body),
  ].join(':');
}

/** The `Authorization` header value for a request signed by a wallet (clients and tests). */
export function walletAuthorization(
  wallet: { address: string; secretKey: Uint8Array },
  request: SignedRequest,
  timestampMs: number = Date.now(),
): string {
  const message = new TextEncoder().encode(walletAuthMessage(request, timestampMs));
  return `Wallet ${wallet.address}:${bs58.encode(signMessage(wallet.secretKey, message))}:${timestampMs}`;
}

/** Remembers signatures already accepted; `claim` is false for one seen before. */
export interface UsedSignatureStore {
  claim(signature: string, expiresAtMs: number, nowMs: number): boolean;
}

const FORMAT = '"Authorization: Wallet <address>:<base58 signature>:<timestampMs>"';

/**
 * Wallet-signature authentication (DESIGN §2): the wallet signs the method, path, time and body hash
 * of its request. Forged, stale, future-dated and replayed signatures are refused with a 401 saying
 * which; the checks that cost nothing come first, and only verified signatures are remembered.
 */
export class WalletSignatureAuth {
  constructor(
    private readonly used: UsedSignatureStore,
    private readonly now: () => Date = () => new Date(),
    private readonly windowMs: number = WALLET_AUTH_WINDOW_MS,
  ) {}

  /** `credentials` is what follows `Wallet ` in the header. Returns the authenticated wallet. */
  authenticate(credentials: string, request: SignedRequest): string {
    const parts = credentials.split(':');
    if (parts.length !== 3 || parts.some((p) => p === '')) {
      throw new Unauthorized(`Malformed wallet signature header: expected ${FORMAT}.`);
    }
    const [address, signatureText, timestampText] = parts as [string, string, string];
    if (!isWalletAddress(address)) {
      throw new Unauthorized(`Wallet signature: '${address}' is not a base58 wallet address.`);
    }
    if (!/^\d{1,16}$/.test(timestampText)) {
      throw new Unauthorized(
        `Wallet signature: the timestamp '${timestampText}' is not a Unix time in milliseconds.`,
      );
    }
    const timestampMs = Number(timestampText);
    // Before 1973 in milliseconds, but now in seconds: a client's Unix time in the wrong unit (it would
    // otherwise read as a signature made 55 years ago).
    if (timestampMs < 1e11) {
      throw new Unauthorized(
        `Wallet signature: the timestamp '${timestampText}' is not a Unix time in milliseconds (it reads as one in seconds: multiply it by 1000).`,
      );
    }
    const nowMs = this.now().getTime();
    const skew = nowMs - timestampMs;
    const window = Math.round(this.windowMs / 1000);
    if (skew > this.windowMs) {
      throw new Unauthorized(
        `Wallet signature expired: it was made ${Math.round(skew / 1000)} s ago; signatures are accepted for ${window} s. Sign the request again.`,
      );
    }
    if (-skew > this.windowMs) {
      throw new Unauthorized(
        `Wallet signature timestamp is ${Math.round(-skew / 1000)} s in the future (more than ${window} s ahead of the server clock); check your clock.`,
      );
    }
    const message = walletAuthMessage(request, timestampMs);
    let signature: Uint8Array;
    try {
      signature = bs58.decode(signatureText);
    } catch {
      throw new Unauthorized('Wallet signature: the signature is not base58.');
    }
    if (!verifySignature(address, new TextEncoder().encode(message), signature)) {
      throw new Unauthorized(
        `Wallet signature does not verify: it must be ${address}'s ed25519 signature of "${message}".`,
      );
    }
    // Kept until the timestamp itself falls out of the window; after that the time check refuses it.
    if (!this.used.claim(bs58.encode(signature), timestampMs + this.windowMs, nowMs)) {
      throw new Unauthorized(
        'Wallet signature already used: each signature is accepted once. Sign the request again.',
      );
    }
    return address;
  }
}
