import { ActionIcon, Group, Tooltip } from '@mantine/core';
import { IconPencil, IconTrash, IconWorldUpload } from '@tabler/icons-react';
import type { Listing } from '../../../../shared/listings';

/** A listing's row actions: Publish and Delete for a draft, Edit for any listing. */
export function ListingRowActions({
  listing,
  onPublish,
  onEdit,
  onDelete,
}: {
  listing: Listing;
  onPublish: (listing: Listing) => void;
  onEdit: (listing: Listing) => void;
  onDelete: (listing: Listing) => void;
}) {
  return (
    <Group gap={6} justify="flex-end" wrap="nowrap">
      {listing.status === 'draft' && (
        <Tooltip label="Publish">
          <ActionIcon
            variant="light"
            onClick={() => onPublish(listing)}
            aria-label={`Publish ${listing.title}`}
          >
            <IconWorldUpload size={16} />
          </ActionIcon>
        </Tooltip>
      )}
      <Tooltip label="Edit">
        <ActionIcon
          variant="subtle"
          color="gray"
          onClick={() => onEdit(listing)}
          aria-label={`Edit ${listing.title}`}
        >
          <IconPencil size={16} />
        </ActionIcon>
      </Tooltip>
      {listing.status === 'draft' && (
        <Tooltip label="Delete">
          <ActionIcon
            variant="subtle"
            color="red"
            onClick={() => onDelete(listing)}
            aria-label={`Delete ${listing.title}`}
          >
            <IconTrash size={16} />
          </ActionIcon>
        </Tooltip>
      )}
    </Group>
  );
}
