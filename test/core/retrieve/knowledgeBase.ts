import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { openServices, type ServicesOptions, type StudioServices } from '../../../src/db/services';
import { tempDir } from '../../helpers/studio';

/**
 * A small hand-made corpus: one JSON item per topic, each a document with metadata of every kind the
 * filters handle (strings, numbers, a numeric string as CSV cells have, booleans, arrays, a nested object
 * that becomes the dotted key `author.name`, ISO dates). No two items share a content word with the
 * paraphrase queries of the tests.
 */
export const SAMPLE_ITEMS = [
  {
    text: 'The quick brown fox jumps over the lazy dog near the river bank.',
    topic: 'animals',
    year: 2019,
    rating: '4.5',
    tags: ['fable', 'animals'],
    author: { name: 'Ada' },
    draft: false,
    published: '2019-05-01',
  },
  {
    text: 'A physician prescribed medication to treat the illness after examining her.',
    topic: 'medicine',
    year: 2021,
    rating: '3',
    tags: ['health'],
    author: { name: 'Bob' },
    draft: true,
    published: '2021-02-11',
  },
  {
    text: 'Astronomers observed a distant galaxy through an orbiting telescope.',
    topic: 'space',
    year: 2022,
    rating: '5',
    tags: ['science', 'space'],
    draft: false,
    published: '2022-08-30',
  },
  {
    text: 'Slow cooking of tomatoes and garlic makes a rich pasta sauce.',
    topic: 'cooking',
    year: 2020,
    rating: 'n/a',
    tags: ['food'],
    author: { name: 'Ada' },
    draft: false,
    published: '2020-12-24',
  },
  {
    text: 'Stock markets fell sharply as investors sold shares of banks.',
    topic: 'finance',
    year: 2023,
    rating: '2.5',
    tags: [],
    draft: false,
    published: '2023-03-15',
  },
  {
    text: 'A brown dog sleeps all day on the porch of the farm house.',
    topic: 'animals',
    year: 2018,
    rating: '4',
    tags: ['animals'],
    author: { name: 'Cy' },
    draft: true,
    published: '2018-07-04',
  },
  {
    text: 'The committee approved the annual budget for road repairs.',
    topic: 'politics',
    year: 2021,
    rating: '1',
    tags: ['budget'],
    draft: false,
    published: '2021-11-02',
  },
  {
    text: 'Heavy rain flooded the valley and farmers lost their crops.',
    topic: 'weather',
    year: 2022,
    rating: '3.5',
    tags: ['farming', 'weather'],
    draft: false,
    published: '2022-04-18',
  },
];

export interface TestKnowledgeBase {
  services: StudioServices;
  listingId: string;
  wallet: string;
  /** Ingests JSON items into a listing (a new one unless given) of the default wallet. */
  addListing(items: object[], file?: string): Promise<string>;
  close(): void;
}

/** A fresh data directory holding one listing built from `items` through the real ingestion pipeline. */
export async function buildKnowledgeBase(
  items: object[] = SAMPLE_ITEMS,
  options: ServicesOptions = {},
): Promise<TestKnowledgeBase> {
  const dir = tempDir('kbs-retrieve-');
  const services = openServices(join(dir.path, 'data'), options);
  const wallet = services.wallets.defaultWallet().address;
  const addListing = async (list: object[], file = 'items.json') => {
    const listingId = services.listings.create(
      { title: 'Retrieval test', accessModel: 'one_time', price: 1 },
      wallet,
    ).id;
    const path = join(dir.path, file);
    writeFileSync(path, JSON.stringify(list));
    await services.ingestion.run({
      listingId,
      inputs: [{ path }],
      atomic: true,
      limits: STUDIO_LIMITS,
    });
    return listingId;
  };
  const listingId = await addListing(items);
  return {
    services,
    listingId,
    wallet,
    addListing,
    close() {
      services.close();
      dir.remove();
    },
  };
}
