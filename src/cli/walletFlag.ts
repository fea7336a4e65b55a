import { DomainError, InvalidInput } from '../core/errors';
import { isWalletAddress } from '../core/wallets/keypair';
import type { StudioServices } from '../db/services';

/**
 * The address a `--wallet` flag stands for: a wallet of this studio by name (`wallet show` takes names
 * too) or any base58 address; undefined without the flag (the caller's default applies).
 */
export function walletAddressOf(services: StudioServices, flag: string, flagName?: string): string;
export function walletAddressOf(
  services: StudioServices,
  flag: string | undefined,
  flagName?: string,
): string | undefined;
export function walletAddressOf(
  services: StudioServices,
  flag: string | undefined,
  flagName = '--wallet',
): string | undefined {
  if (flag === undefined || isWalletAddress(flag)) return flag;
  const named = services.wallets.list().find((w) => w.name === flag);
  if (named) return named.address;
  throw new InvalidInput(
    `${flagName}: '${flag}' is neither the name of a wallet of this studio (kbstudio wallet list) nor a base58 wallet address.`,
  );
}

/** Whether this studio holds the secret of `address` (one of its wallets), to sign with it here. */
export const holdsWallet = (services: StudioServices, address: string): boolean =>
  services.wallets.list().some((w) => w.address === address);

/** How a wallet this studio does not hold can sign here, or elsewhere (DESIGN §3: browser wallets). */
export const importHint = (address: string): string =>
  `This studio does not hold the secret of wallet ${address}: import its keypair with 'kbstudio wallet import FILE' (Solana CLI id.json format), or sign create_listing with that wallet as a browser wallet on the studio's Wallet page (kbstudio serve).`;

/**
 * Runs `sign`, which signs with `creator`'s secret; a creator this studio does not hold gets its
 * failure reworded with how to sign (importHint), its code kept.
 */
export async function withCreatorSecret<T>(
  services: StudioServices,
  creator: string,
  sign: () => Promise<T>,
): Promise<T> {
  try {
    return await sign();
  } catch (err) {
    if (err instanceof DomainError && err.code === 'not_found' && !holdsWallet(services, creator)) {
      throw new DomainError(err.code, importHint(creator), err.details);
    }
    throw err;
  }
}
