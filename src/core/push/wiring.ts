import { plainSecretBox, type SecretBox } from '../wallets/wallets';
import { PushTargets, type KeyValueStore } from './targets';

/**
 * The push targets of a data directory's services, sealed with the services' SecretBox when they
 * carry one (the desktop app's OS keychain), else stored as wallet secrets are in the CLI.
 */
export function pushTargetsOf(services: { settings: KeyValueStore; secretBox?: SecretBox }): PushTargets {
  return new PushTargets(services.settings, services.secretBox ?? plainSecretBox);
}
