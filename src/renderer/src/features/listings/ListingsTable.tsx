import { ActionIcon, Group, Stack, Table, Text, Tooltip, VisuallyHidden } from '@mantine/core';
import { IconPencil, IconTrash, IconWorldUpload } from '@tabler/icons-react';
import type { Listing } from '../../../../shared/listings';
import { ACCESS_MODEL_LABELS, formatCount, formatListingPrice } from '../../lib/format';
import { formatSize } from '../ingest/formatSize';
import { ListingStatusBadge } from './ListingStatusBadge';

const plural = (n: number, noun: string) => `${formatCount(n)} ${n === 1 ? noun : `${noun}s`}`;

/** Bytes of each knowledge base's original files, by listing id (GET /studio/knowledge-bases). */
export type KnowledgeBaseBytes = ReadonlyMap<string, number>;

export function ListingsTable({
  listings,
  onPublish,
  onEdit,
  onDelete,
  sizes,
}: {
  listings: Listing[];
  /** Undefined while the sizes load (or when they could not be read): the column shows a dash. */
  sizes?: KnowledgeBaseBytes;
  onPublish: (listing: Listing) => void;
  onEdit: (listing: Listing) => void;
  onDelete: (listing: Listing) => void;
}) {
  return (
    <Table.ScrollContainer minWidth={900} className="kb-table-wrap" type="native">
      <Table
        verticalSpacing="sm"
        horizontalSpacing="xs"
        highlightOnHover
        aria-label="Listings"
        tabIndex={-1}
        className="kb-focus-target"
        data-listings-table
      >
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Title</Table.Th>
            {/* Next to the title: in view whole at any width, never under the pinned actions. */}
            <Table.Th>Status</Table.Th>
            <Table.Th>Domain</Table.Th>
            <Table.Th>Price</Table.Th>
            <Table.Th>Embedding model</Table.Th>
            {/* Chunks, documents and bytes in one column: with a column of its own, the size sat under the
                pinned actions at 1280×800. */}
            <Table.Th ta="right">Contents</Table.Th>
            <Table.Th className="kb-pin-end">
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {listings.map((listing) => (
            <Table.Tr key={listing.id} data-listing-id={listing.id}>
              <Table.Td>
                {/* The width is capped on the content: a cell's own max-width does not bind a table. */}
                <Stack gap={2} maw={256}>
                  <Text fw={600} size="sm" truncate="end" title={listing.title}>
                    {listing.title}
                  </Text>
                  <Text size="xs" c="dimmed" ff="monospace">
                    {listing.id}
                  </Text>
                </Stack>
              </Table.Td>
              <Table.Td miw={104}>
                <ListingStatusBadge status={listing.status} />
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
                <Stack gap={2}>
                  <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                    {formatListingPrice(listing)}
                  </Text>
                  <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
                    {ACCESS_MODEL_LABELS[listing.accessModel]}
                  </Text>
                </Stack>
              </Table.Td>
              <Table.Td>
                <Tooltip
                  label={`${listing.embeddingModel} · ${listing.dimensions} dimensions`}
                  openDelay={300}
                >
                  <Text size="xs" maw={170} truncate="end" data-testid="embedding-model">
                    {listing.embeddingModel}
                  </Text>
                </Tooltip>
              </Table.Td>
              <Table.Td ta="right" style={{ whiteSpace: 'nowrap' }}>
                <Text size="sm">{plural(listing.chunkCount, 'chunk')}</Text>
                <Text size="xs" c="dimmed">
                  {plural(listing.documentCount, 'document')} ·{' '}
                  <span data-testid="listing-size">
                    {sizes ? formatSize(sizes.get(listing.id) ?? 0) : '—'}
                  </span>
                </Text>
              </Table.Td>
              <Table.Td className="kb-pin-end">
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
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
