import { Alert, Stack, Text } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { queryKeys } from '../../lib/queryClient';
import { useStudioApi } from '../../lib/studioContext';
import { studioJson } from '../../lib/studioFetch';
import { limitNotice, type KnowledgeBaseSize } from './knowledgeBaseLimits';

/**
 * Said before a drop, not after: the chosen listing's knowledge base is at or past the studio's limits
 * (given by /studio/info), and what a drop then does. The sizes are the Listings view's query (the same
 * key: an ingestion's end refreshes both).
 */
export function LimitNoticeAlert({ listingId }: { listingId: string | null }) {
  const api = useStudioApi();
  const info = useQuery({ queryKey: queryKeys.info, queryFn: () => api.info() });
  const sizes = useQuery({
    queryKey: [...queryKeys.listings, 'sizes'],
    queryFn: () => studioJson<KnowledgeBaseSize[]>('/knowledge-bases'),
  });
  const limits = info.data?.ingestLimits;
  if (!listingId || !limits) return null;
  const notice = limitNotice(
    sizes.data?.find((s) => s.listingId === listingId),
    limits,
  );
  if (!notice) return null;
  return (
    <Alert color="yellow" variant="light" icon={<IconAlertTriangle size={16} />} title={notice.title}>
      <Stack gap={6}>
        {notice.paragraphs.map((p) => (
          <Text size="sm" key={p}>
            {p}
          </Text>
        ))}
      </Stack>
    </Alert>
  );
}
