import { Alert } from '@mantine/core';
import type { Listing } from '../../../../shared/listings';

/** Said before a listing is published, wherever that happens, when it has nothing to retrieve yet. */
export function EmptyKnowledgeBaseAlert({ listing }: { listing: Pick<Listing, 'chunkCount'> }) {
  if (listing.chunkCount > 0) return null;
  return (
    <Alert color="yellow" variant="light">
      Its knowledge base is still empty: buyers would get no results until you ingest documents.
    </Alert>
  );
}
