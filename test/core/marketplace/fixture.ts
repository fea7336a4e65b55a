import { generateKeypair } from '../../../src/core/wallets/keypair';
import type { CreateListingInput, Listing } from '../../../src/shared/listings';
import { openServices, type StudioServices } from '../../../src/db/services';
import { tempDir } from '../../helpers/studio';

/** A studio over a fresh database whose clock the test moves by hand. */
export interface MarketplaceFixture {
  services: StudioServices;
  creator: string;
  /** A buyer wallet this studio holds (it can sign its own purchases). */
  buyer: string;
  /** A wallet this studio does not hold (only the creator can sign for it: test grants). */
  outsider: string;
  clock: { now: Date; advanceDays(days: number): void; set(iso: string): void };
  /** Creates and publishes a listing of the creator. */
  listing(
    input: Partial<CreateListingInput> & Pick<CreateListingInput, 'accessModel' | 'price'>,
  ): Promise<Listing>;
  close(): void;
}

export const DAY_MS = 86_400_000;

export function marketplaceFixture(): MarketplaceFixture {
  const dir = tempDir('kbs-market-');
  const clock = {
    now: new Date('2030-01-01T00:00:00.000Z'),
    advanceDays(days: number) {
      this.now = new Date(this.now.getTime() + days * DAY_MS);
    },
    set(iso: string) {
      this.now = new Date(iso);
    },
  };
  const services = openServices(dir.path, { now: () => clock.now });
  const creator = services.wallets.defaultWallet().address;
  const buyer = services.wallets.create('buyer').address;
  return {
    services,
    creator,
    buyer,
    outsider: generateKeypair().address,
    clock,
    async listing(input) {
      const draft = services.listings.create({ title: 'Case law digest', ...input }, creator);
      return services.publishing.publish(draft.id);
    },
    close() {
      services.close();
      dir.remove();
    },
  };
}
