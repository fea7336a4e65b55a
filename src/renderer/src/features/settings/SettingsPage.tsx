import { CardTitle } from '../../components/CardTitle';
import {
  Card,
  DataList,
  SegmentedControl,
  Skeleton,
  Stack,
  Text,
  useMantineColorScheme,
} from '@mantine/core';
import type { MantineColorScheme } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { CopyValue } from '../../components/CopyValue';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState } from '../../components/QueryStates';
import { queryKeys } from '../../lib/queryClient';
import { useStudioApi } from '../../lib/studioContext';
import { ProvidersCard } from './ProvidersCard';

const SCHEMES: { value: MantineColorScheme; label: string }[] = [
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
  { value: 'auto', label: 'System' },
];

export function SettingsPage() {
  return (
    <>
      <PageHeader
        title="Settings"
        description="This studio's installation, its embedding providers and how it looks."
      />
      <Stack gap="lg" maw={860}>
        <StudioCard />
        <ProvidersCard />
        <AppearanceCard />
      </Stack>
    </>
  );
}

function StudioCard() {
  const api = useStudioApi();
  const info = useQuery({ queryKey: queryKeys.info, queryFn: () => api.info() });
  const bridge = window.kbstudio;
  const runtime = bridge
    ? `Desktop app · Electron ${bridge.versions.electron}, Chromium ${bridge.versions.chrome}, Node ${bridge.versions.node} (${bridge.platform})` +
      (bridge.isolation.sandboxed && bridge.isolation.contextIsolated ? ' · sandboxed, context-isolated' : '')
    : 'Browser · served by kbstudio serve';

  return (
    <Card withBorder padding="lg">
      <CardTitle mb={4}>Studio</CardTitle>
      <Text size="sm" c="dimmed" mb="md">
        Where this studio keeps its data, and where its local API answers.
      </Text>
      {info.isError ? (
        <ErrorState
          title="Could not load the studio information"
          error={info.error}
          onRetry={() => void info.refetch()}
        />
      ) : (
        <DataList labelWidth={160} withDivider aria-label="Studio information">
          <DataList.Item>
            <DataList.ItemLabel>Version</DataList.ItemLabel>
            <DataList.ItemValue>
              {info.data ? info.data.version : <Skeleton h={14} w={80} />}
            </DataList.ItemValue>
          </DataList.Item>
          <DataList.Item>
            <DataList.ItemLabel>Data directory</DataList.ItemLabel>
            <DataList.ItemValue miw={0}>
              {info.data ? (
                <CopyValue value={info.data.dataDir} label="data directory" />
              ) : (
                <Skeleton h={14} w={260} />
              )}
            </DataList.ItemValue>
          </DataList.Item>
          <DataList.Item>
            <DataList.ItemLabel>API base URL</DataList.ItemLabel>
            <DataList.ItemValue miw={0}>
              {info.data ? (
                <CopyValue value={info.data.apiBaseUrl} label="API base URL" />
              ) : (
                <Skeleton h={14} w={220} />
              )}
            </DataList.ItemValue>
          </DataList.Item>
          <DataList.Item>
            <DataList.ItemLabel>Runtime</DataList.ItemLabel>
            <DataList.ItemValue>{runtime}</DataList.ItemValue>
          </DataList.Item>
        </DataList>
      )}
    </Card>
  );
}

function AppearanceCard() {
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  return (
    <Card withBorder padding="lg">
      <CardTitle mb={4} id="theme-label">
        Theme
      </CardTitle>
      <Text size="sm" c="dimmed" mb="md">
        Remembered on this machine. System follows your operating system&apos;s setting.
      </Text>
      <SegmentedControl
        aria-labelledby="theme-label"
        data={SCHEMES}
        value={colorScheme}
        onChange={(value) => setColorScheme(value as MantineColorScheme)}
        w={320}
      />
    </Card>
  );
}
