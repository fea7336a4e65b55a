import type { StudioServices } from '../src/db/services';

/**
 * Waits until every commit's worker has exited (each checkpoints on its own after its commit), then
 * copies what is left in the WAL into the database file and truncates the WAL. Before this, a file size
 * read after a large commit missed the pages still in the WAL (169 MB reported for a 4.4 GB knowledge
 * base), and searches timed meanwhile shared the disk and a core with the worker's checkpoint.
 */
export async function checkpointed(services: StudioServices): Promise<void> {
  await services.knowledgeBase.settled();
  const [result] = services.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  if (result?.busy) {
    throw new Error('the WAL could not be checkpointed: another connection still holds the database.');
  }
}
