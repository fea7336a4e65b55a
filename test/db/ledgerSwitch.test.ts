import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openServices, type StudioServices } from '../../src/db/services';
import { tempDir } from '../helpers/studio';
import { startFakeSolanaRpc } from '../helpers/fakeSolanaRpc';

let dir: ReturnType<typeof tempDir>;
let services: StudioServices;
beforeEach(() => {
  dir = tempDir();
  services = openServices(join(dir.path, 'data'));
});
afterEach(() => {
  services.close();
  dir.remove();
});

it('follows solana.rpcUrl at once: choosing a network in the studio needs no restart', async () => {
  expect(services.ledger.kind).toBe('local');
  expect((await services.ledger.recentBlockhash()).length).toBeGreaterThan(30);

  const rpc = await startFakeSolanaRpc();
  try {
    services.settings.set('solana.rpcUrl', rpc.url);
    expect(services.ledger.kind).toBe('solana');
    // The blockhash now comes from the node.
    await services.ledger.recentBlockhash();
    expect(rpc.calls('getLatestBlockhash')).toHaveLength(1);

    services.settings.set('solana.rpcUrl', '');
    expect(services.ledger.kind).toBe('local');
  } finally {
    await rpc.close();
  }
});
