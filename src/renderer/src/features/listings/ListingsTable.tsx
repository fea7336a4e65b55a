import { Stack, Table, Text, Tooltip, VisuallyHidden } from '@mantine/core';
import type { Listing } from '../../../../shared/listings';
import { ACCESS_MODEL_LABELS, formatCount, formatListingPrice } from '../../lib/format';
import { useTableLayout, type TableLayout } from '../../lib/tableLayout';
import { formatSize } from '../ingest/formatSize';
import { ListingRowActions } from './ListingRowActions';
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
  // Where the seven columns do not fit (a 1024 px window), Domain and Embedding model move into the
  // Title cell: Price and Contents would otherwise sit under the pinned actions. Where even those five
  // do not (the desktop window at its narrowest), each listing is a block of its own.
  const { ref, layout } = useTableLayout([listings, sizes], LAYOUTS);
  const full = layout === 'full';
  return (
    <Table.ScrollContainer
      ref={ref}
      minWidth={full ? 900 : 0}
      className="kb-table-wrap"
      type="native"
      data-layout={layout}
    >
      {/* Roles given explicitly: stacked rows are blocks, which drop the table's own (styles.css). */}
      <Table
        verticalSpacing="sm"
        horizontalSpacing="xs"
        highlightOnHover
        aria-label="Listings"
        role="table"
        tabIndex={-1}
        className="kb-focus-target"
        data-listings-table
      >
        <Table.Thead role="rowgroup">
          <Table.Tr role="row">
            <Table.Th role="columnheader">Title</Table.Th>
            {/* Next to the title: in view whole at any width, never under the pinned actions. */}
            <Table.Th role="columnheader">Status</Table.Th>
            {full && <Table.Th role="columnheader">Domain</Table.Th>}
            <Table.Th role="columnheader">Price</Table.Th>
            {full && <Table.Th role="columnheader">Embedding model</Table.Th>}
            {/* Chunks, documents and bytes in one column: with a column of its own, the size sat under the
                pinned actions at 1280×800. */}
            <Table.Th role="columnheader" ta="right">
              Contents
            </Table.Th>
            <Table.Th role="columnheader" className="kb-pin-end">
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody role="rowgroup">
          {listings.map((listing) => (
            <Table.Tr key={listing.id} data-listing-id={listing.id} role="row">
              <Table.Td role="cell" className="kb-listing-title">
                {/* The width is capped on the content: a cell's own max-width does not bind a table. A
                    stacked block's title has the width its status badge leaves. */}
                <Stack gap={2} maw={layout === 'stacked' ? undefined : 256}>
                  <Text fw={600} size="sm" truncate="end" title={listing.title}>
                    {listing.title}
                  </Text>
                  <Text size="xs" c="dimmed" ff="monospace" truncate="end">
                    {listing.id}
                  </Text>
                  {!full && <DomainAndModel listing={listing} />}
                </Stack>
              </Table.Td>
              <Table.Td role="cell" miw={104} data-stack="end">
                <ListingStatusBadge status={listing.status} />
              </Table.Td>
              {full && (
                <Table.Td role="cell">
                  {listing.domain ? (
                    <Text size="sm">{listing.domain}</Text>
                  ) : (
                    <Text size="sm" c="dimmed">
                      —
                    </Text>
                  )}
                </Table.Td>
              )}
              <Table.Td role="cell" data-label="Price">
                <Stack gap={2}>
                  <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                    {formatListingPrice(listing)}
                  </Text>
                  <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
                    {ACCESS_MODEL_LABELS[listing.accessModel]}
                  </Text>
                </Stack>
              </Table.Td>
              {full && (
                <Table.Td role="cell">
                  <Tooltip label={modelDetails(listing)} openDelay={300}>
                    <Text size="xs" maw={170} truncate="end" data-testid="embedding-model">
                      {listing.embeddingModel}
                    </Text>
                  </Tooltip>
                </Table.Td>
              )}
              <Table.Td
                role="cell"
                ta="right"
                style={{ whiteSpace: 'nowrap' }}
                data-label="Contents"
                data-stack="end"
              >
                <Text size="sm">{plural(listing.chunkCount, 'chunk')}</Text>
                <Text size="xs" c="dimmed">
                  {plural(listing.documentCount, 'document')} ·{' '}
                  <span data-testid="listing-size">
                    {sizes ? formatSize(sizes.get(listing.id) ?? 0) : '—'}
                  </span>
                </Text>
              </Table.Td>
              <Table.Td role="cell" className="kb-pin-end" data-stack="wide">
                <ListingRowActions
                  listing={listing}
                  onPublish={onPublish}
                  onEdit={onEdit}
                  onDelete={onDelete}
                />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

const LAYOUTS: readonly TableLayout[] = ['full', 'compact', 'stacked'];

const modelDetails = (listing: Listing) => `${listing.embeddingModel} · ${listing.dimensions} dimensions`;

/** The compact table's line under the title's id: the domain (when set) and the embedding model. */
function DomainAndModel({ listing }: { listing: Listing }) {
  return (
    <Tooltip
      label={`${listing.domain ? `${listing.domain} · ` : ''}${modelDetails(listing)}`}
      openDelay={300}
    >
      <Text size="xs" c="dimmed" truncate="end">
        {listing.domain && (
          <>
            <VisuallyHidden>Domain: </VisuallyHidden>
            {listing.domain} ·{' '}
          </>
        )}
        <VisuallyHidden>Embedding model: </VisuallyHidden>
        {listing.embeddingModel}
      </Text>
    </Tooltip>
  );
}
