import { InvalidInput } from '../core/errors';
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
