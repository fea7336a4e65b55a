import {
  Alert,
  Badge,
  Card,
  Code,
  Divider,
  Group,
  Rating,
  SimpleGrid,
  Stack,
  Tabs,
  Text,
} from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import type { Listing } from '../../../../shared/listings';
import { CardTitle } from '../../components/CardTitle';
import { ACCESS_MODEL_LABELS, formatCount, formatListingPrice, shortAddress } from '../../lib/format';

/**
 * A listing as a marketplace shows it to buyers, and the exact `GET /v1/listings/:id` body behind it.
 * `listing` undefined: the form holds an error, so there are no new terms to show; `errorFields`
 * names the fields to fix.
 */
export function ListingPreview({
  listing,
  unsaved,
  errorFields = [],
}: {
  listing: Listing | undefined;
  unsaved: boolean;
  errorFields?: string[];
}) {
  return (
    <Card withBorder padding="lg" aria-label="Marketplace preview">
      <Group justify="space-between" mb="sm">
        <CardTitle>How buyers see it</CardTitle>
        {unsaved ? (
          <Badge color="orange" variant="light">
            Unsaved changes
          </Badge>
        ) : (
          listing && (
            <Badge color={listing.status === 'published' ? 'teal' : 'gray'} variant="light">
              {listing.status === 'published' ? 'Published' : 'Draft: only you can see it'}
            </Badge>
          )
        )}
      </Group>
      {listing ? (
        <ListingTerms listing={listing} />
      ) : (
        <Alert
          color="red"
          variant="light"
          icon={<IconAlertTriangle size={16} />}
          title="The form has an error"
          data-testid="preview-form-error"
        >
          <Text size="sm">
            Fix {errorFields.length === 1 ? 'the field' : 'the fields'} marked in red
            {errorFields.length > 0 ? ` (${errorFields.join(', ')})` : ''} to see the listing with the new
            terms. The saved terms stay as they are until you save.
          </Text>
        </Alert>
      )}
    </Card>
  );
}

function ListingTerms({ listing }: { listing: Listing }) {
  return (
    <Tabs defaultValue="card">
      <Tabs.List mb="md">
        <Tabs.Tab value="card">Listing</Tabs.Tab>
        <Tabs.Tab value="json">GET /v1/listings/:id</Tabs.Tab>
      </Tabs.List>
      <Tabs.Panel value="card">
        <Card withBorder padding="md" radius="md" bg="var(--mantine-color-default-hover)">
          <Stack gap="xs">
            <Group justify="space-between" align="flex-start" wrap="nowrap">
              <Text fw={650} size="lg" lh={1.3} className="kb-break">
                {listing.title}
              </Text>
              <Text
                fw={700}
                size="lg"
                c="indigo"
                style={{ whiteSpace: 'nowrap' }}
                data-testid="preview-price"
              >
                {formatListingPrice(listing)}
              </Text>
            </Group>
            <Group gap={6}>
              <Badge variant="filled" size="sm">
                {ACCESS_MODEL_LABELS[listing.accessModel]}
              </Badge>
              {listing.domain && (
                <Badge variant="light" color="grape" size="sm">
                  {listing.domain}
                </Badge>
              )}
              {listing.tags.map((tag) => (
                <Badge key={tag} variant="outline" color="gray" size="sm">
                  {tag}
                </Badge>
              ))}
            </Group>
            <Text size="sm" c={listing.description ? undefined : 'dimmed'} lineClamp={4}>
              {listing.description || 'No description yet.'}
            </Text>
            <Group gap={6}>
              <Rating value={listing.rating} readOnly fractions={2} size="sm" />
              <Text size="xs" c="dimmed">
                {listing.ratingCount === 0
                  ? 'No ratings yet'
                  : `${listing.rating.toFixed(1)} (${listing.ratingCount})`}
              </Text>
            </Group>
            <Divider />
            <SimpleGrid cols={3} spacing="xs">
              <Fact label="Documents" value={formatCount(listing.documentCount)} />
              <Fact label="Chunks" value={formatCount(listing.chunkCount)} />
              <Fact label="Rate limit" value={`${formatCount(listing.retrievalRateLimit)} / min`} />
              <Fact label="Embedding model" value={listing.embeddingModel} />
              <Fact label="Creator" value={shortAddress(listing.creatorWallet, 6, 6)} />
              <Fact
                label="On chain"
                value={listing.pdaAddress ? shortAddress(listing.pdaAddress, 6, 6) : 'Not yet'}
              />
            </SimpleGrid>
          </Stack>
        </Card>
      </Tabs.Panel>
      <Tabs.Panel value="json">
        <Code block fz="xs" style={{ maxHeight: 420, overflow: 'auto' }} data-testid="preview-json">
          {JSON.stringify({ data: listing }, null, 2)}
        </Code>
      </Tabs.Panel>
    </Tabs>
  );
}

function Fact({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" fw={500} truncate title={value}>
        {value}
      </Text>
    </div>
  );
}
