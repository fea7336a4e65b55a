import {
  BaseMessageSignerWalletAdapter,
  WalletAccountError,
  WalletConnectionError,
  WalletError,
  WalletNotConnectedError,
  WalletPublicKeyError,
  WalletReadyState,
  WalletSignMessageError,
  WalletSignTransactionError,
  type WalletName,
} from '@solana/wallet-adapter-base';
import { PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { ErrorBody } from '../../../../shared/errors';
import type { Wallet } from '../../../../shared/studio';
import { StudioApiError } from '../studioApi';

export const StudioWalletName = 'KB Studio wallet' as WalletName<'KB Studio wallet'>;

/** What the adapter needs from the studio server; the secret never crosses it, only bytes to sign. */
export interface StudioWalletTransport {
  listWallets(): Promise<Wallet[]>;
  /** Returns the 64-byte ed25519 signature. */
  signMessage(address: string, message: Uint8Array): Promise<Uint8Array>;
  /** Returns the serialized transaction with the wallet's signature added. */
  signTransaction(address: string, transaction: Uint8Array): Promise<Uint8Array>;
}

export interface StudioWalletTransportOptions {
  token: string | undefined;
  /** Origin of the studio server; '' = the page's own. */
  baseUrl?: string;
  fetch?: typeof fetch;
}

/** The transport over the studio's HTTP API (`/studio/wallets...`, with the studio token). */
export function createStudioWalletTransport(options: StudioWalletTransportOptions): StudioWalletTransport {
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  const base = `${options.baseUrl ?? ''}/studio/wallets`;

  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    if (!options.token) {
      throw new StudioApiError({
        code: 'missing_token',
        status: 0,
        message: 'This page has no studio token.',
      });
    }
    const headers: Record<string, string> = { Accept: 'application/json', 'X-Studio-Token': options.token };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetchImpl(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!response.ok) {
      const error = (json as Partial<ErrorBody> | undefined)?.error;
      throw new StudioApiError({
        code: error?.code ?? `http_${response.status}`,
        status: response.status,
        message:
          error?.message ?? (text.trim().slice(0, 300) || `The studio server answered ${response.status}.`),
        requestId: error?.requestId,
        details: error?.details,
      });
    }
    return (json as { data: T }).data;
  }

  const at = (address: string) => `/${encodeURIComponent(address)}`;
  return {
    listWallets: () => call<Wallet[]>('GET', ''),
    async signMessage(address, message) {
      const out = await call<{ signature: string }>('POST', `${at(address)}/sign-message`, {
        message: toBase64(message),
      });
      return bs58.decode(out.signature);
    },
    async signTransaction(address, transaction) {
      const out = await call<{ transaction: string }>('POST', `${at(address)}/sign-transaction`, {
        transaction: toBase64(transaction),
      });
      return fromBase64(out.transaction);
    },
  };
}

export interface StudioWalletAdapterConfig {
  transport: StudioWalletTransport;
  /** The wallet to connect; without one, the studio's default wallet. */
  address?: string;
  /** The wallet's page in wallet pickers; defaults to the studio's own origin. */
  url?: string;
}

const ICON =
  'data:image/svg+xml;base64,' +
  btoa(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1c7ed6"/>' +
      '<path d="M8 11h16v12H8z" fill="none" stroke="#fff" stroke-width="2"/><circle cx="20" cy="17" r="2" fill="#fff"/></svg>',
  );

/**
 * A wallet adapter for the wallets the studio holds (DESIGN §3): the renderer signs through the same
 * interface as a browser wallet, while the secret stays in the server process. Legacy transactions
 * only, like the marketplace program's. `sendTransaction` is the base class's: sign here, then
 * `connection.sendRawTransaction`.
 */
export class StudioWalletAdapter extends BaseMessageSignerWalletAdapter<'KB Studio wallet'> {
  name = StudioWalletName;
  url: string;
  icon = ICON;
  readonly supportedTransactionVersions = null;

  private readonly transport: StudioWalletTransport;
  private readonly wantedAddress: string | undefined;
  private _publicKey: PublicKey | null = null;
  private _connecting = false;

  constructor(config: StudioWalletAdapterConfig) {
    super();
    this.transport = config.transport;
    this.wantedAddress = config.address;
    this.url = config.url ?? globalThis.location?.origin ?? '';
  }

  get publicKey(): PublicKey | null {
    return this._publicKey;
  }

  get connecting(): boolean {
    return this._connecting;
  }

  get readyState(): WalletReadyState {
    return WalletReadyState.Installed;
  }

  async connect(): Promise<void> {
    if (this.connected || this._connecting) return;
    this._connecting = true;
    try {
      let wallets: Wallet[];
      try {
        wallets = await this.transport.listWallets();
      } catch (err) {
        throw new WalletConnectionError(messageOf(err), err);
      }
      const wallet = this.wantedAddress
        ? wallets.find((w) => w.address === this.wantedAddress)
        : wallets.find((w) => w.isDefault);
      if (!wallet) {
        throw new WalletAccountError(
          this.wantedAddress
            ? `This studio holds no wallet ${this.wantedAddress}.`
            : 'This studio holds no wallet yet: create or import one first.',
        );
      }
      try {
        this._publicKey = new PublicKey(wallet.address);
      } catch (err) {
        throw new WalletPublicKeyError(messageOf(err), err);
      }
      this.emit('connect', this._publicKey);
    } catch (err) {
      this.emit('error', err as WalletError);
      throw err;
    } finally {
      this._connecting = false;
    }
  }

  async disconnect(): Promise<void> {
    if (!this._publicKey) return;
    // Nothing to tear down: the studio keeps no session for the adapter.
    this._publicKey = null;
    this.emit('disconnect');
  }

  async signMessage(message: Uint8Array): Promise<Uint8Array> {
    try {
      const address = this.address();
      try {
        return await this.transport.signMessage(address, message);
      } catch (err) {
        throw new WalletSignMessageError(messageOf(err), err);
      }
    } catch (err) {
      this.emit('error', err as WalletError);
      throw err;
    }
  }

  async signTransaction<T extends Transaction>(transaction: T): Promise<T> {
    try {
      const address = this.address();
      try {
        const bytes = transaction.serialize({ requireAllSignatures: false, verifySignatures: false });
        const signed = Transaction.from(await this.transport.signTransaction(address, bytes));
        // Copy the server's signature onto the caller's object, as browser wallets return it signed in place.
        const signature = signed.signatures.find((s) => s.publicKey.toBase58() === address)?.signature;
        if (!signature)
          throw new Error('the studio returned the transaction without this wallet’s signature.');
        transaction.addSignature(new PublicKey(address), signature);
        return transaction;
      } catch (err) {
        throw new WalletSignTransactionError(messageOf(err), err);
      }
    } catch (err) {
      this.emit('error', err as WalletError);
      throw err;
    }
  }

  private address(): string {
    if (!this._publicKey) throw new WalletNotConnectedError('Connect the KB Studio wallet first.');
    return this._publicKey.toBase58();
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
