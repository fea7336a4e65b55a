import { Group, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

export function PageHeader({
  title,
  description,
  actions,
}: {
  title: string;
  description: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <Group justify="space-between" align="flex-start" wrap="nowrap" mb="lg" gap="xl">
      <Stack gap={4}>
        <Title order={2} fz={24}>
          {title}
        </Title>
        <Text c="dimmed" size="sm" maw={680}>
          {description}
        </Text>
      </Stack>
      {actions && (
        <Group gap="sm" wrap="nowrap" style={{ flex: 'none' }}>
          {actions}
        </Group>
      )}
    </Group>
  );
}
