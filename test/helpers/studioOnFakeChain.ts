import { openServices, type StudioServices } from '../../src/db/services';
import { startFakeSolanaRpc, type FakeSolanaRpc } from './fakeSolanaRpc';
import { tempDir } from './studio';

export const SOL = 1_000_000_000;

/** A studio on a fresh data directory whose Solana RPC is a local fake cluster, its creator funded. */
export interface StudioOnFakeChain {
  rpc: FakeSolanaRpc;
  services: StudioServices;
  /** The data directory: open it again for a second process's services. */
  dataDir: string;
  /** The default wallet's address, funded with 10 SOL. */
  creator: string;
  /** Switches the studio to the embedded ledger (no RPC URL). */
  useEmbeddedLedger(): void;
  close(): Promise<void>;
}

export async function openStudioOnFakeChain(prefix: string): Promise<StudioOnFakeChain> {
  const dir = tempDir(prefix);
  const rpc = await startFakeSolanaRpc({ confirmAfterPolls: 0 });
  const services = openServices(dir.path);
  services.settings.set('solana.rpcUrl', rpc.url);
  const creator = services.wallets.defaultWallet().address;
  rpc.fund(creator, 10 * SOL);
  return {
    rpc,
    services,
    dataDir: dir.path,
    creator,
    useEmbeddedLedger: () => services.settings.set('solana.rpcUrl', ''),
    close: async () => {
      services.close();
      await rpc.close();
      dir.remove();
    },
  };
}
