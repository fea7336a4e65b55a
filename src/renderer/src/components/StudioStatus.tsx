import { Group, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { queryKeys } from '../lib/queryClient';
import { useStudioApi } from '../lib/studioContext';

/** Sidebar footer: whether the local server answers, and its version. */
export function StudioStatus() {
  const api = useStudioApi();
  // Asked again now and then, so a server that stopped is shown as such (and at once when a job loses
  // it); every 2 s while it is unreachable, so a server started again is found soon (and the page then
  // reads its new token and asks every view again, lib/studioToken.ts).
  const info = useQuery({
    queryKey: queryKeys.info,
    queryFn: () => api.info(),
    refetchInterval: (query) => (query.state.status === 'error' ? 2_000 : 15_000),
  });
  const [color, text] = info.isSuccess
    ? ['var(--mantine-color-teal-6)', `Local server · v${info.data.version}`]
    : info.isError
      ? ['var(--mantine-color-red-6)', 'Server unreachable']
      : ['var(--mantine-color-gray-5)', 'Connecting…'];
  return (
    <Group gap={8} px="xs" py={6} wrap="nowrap" role="status">
      <span aria-hidden style={{ width: 8, height: 8, borderRadius: 4, background: color, flex: 'none' }} />
      <Text size="xs" c="dimmed" truncate>
        {text}
      </Text>
    </Group>
  );
}
