import { ActionIcon, Button, Group, Stack, Table, Text, Tooltip, VisuallyHidden } from '@mantine/core';
import { IconPencil, IconTrash, IconWorldUpload } from '@tabler/icons-react';
import type { Listing } from '../../../../shared/listings';
import { ACCESS_MODEL_LABELS, formatCount, formatListingPrice } from '../../lib/format';
import { ListingStatusBadge } from './ListingStatusBadge';

export function ListingsTable({
  listings,
  onPublish,
  onEdit,
  onDelete,
}: {
  listings: Listing[];
  onPublish: (listing: Listing) => void;
  onEdit: (listing: Listing) => void;
  onDelete: (listing: Listing) => void;
}) {
  return (
    <div className="kb-table-wrap">
      <Table verticalSpacing="sm" horizontalSpacing="md" highlightOnHover aria-label="Listings">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Title</Table.Th>
            <Table.Th>Domain</Table.Th>
            <Table.Th>Access model</Table.Th>
            <Table.Th>Price</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th ta="right">Docs</Table.Th>
            <Table.Th ta="right">Chunks</Table.Th>
            <Table.Th>
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {listings.map((listing) => (
            <Table.Tr key={listing.id} data-listing-id={listing.id}>
              <Table.Td maw={360}>
                <Stack gap={2}>
                  <Text fw={600} size="sm" truncate="end">
                    {listing.title}
                  </Text>
                  <Text size="xs" c="dimmed" ff="monospace">
                    {listing.id}
                  </Text>
                </Stack>
              </Table.Td>
              <Table.Td>
                {listing.domain ? (
                  <Text size="sm">{listing.domain}</Text>
                ) : (
                  <Text size="sm" c="dimmed">
                    —
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <Text size="sm">{ACCESS_MODEL_LABELS[listing.accessModel]}</Text>
              </Table.Td>
              <Table.Td>
                <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                  {formatListingPrice(listing)}
                </Text>
              </Table.Td>
              <Table.Td miw={104}>
                <ListingStatusBadge status={listing.status} />
              </Table.Td>
              <Table.Td ta="right">
                <Text size="sm" ff="monospace">
                  {formatCount(listing.documentCount)}
                </Text>
              </Table.Td>
              <Table.Td ta="right">
                <Text size="sm" ff="monospace">
                  {formatCount(listing.chunkCount)}
                </Text>
              </Table.Td>
              <Table.Td>
                <Group gap={6} justify="flex-end" wrap="nowrap">
                  {listing.status === 'draft' && (
                    <Button
                      size="xs"
                      variant="light"
                      leftSection={<IconWorldUpload size={14} />}
                      onClick={() => onPublish(listing)}
                      aria-label={`Publish ${listing.title}`}
                    >
                      Publish
                    </Button>
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
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </div>
  );
}
