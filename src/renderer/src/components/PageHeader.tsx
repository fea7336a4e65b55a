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
        {/* The page's one h1; the titles of its cards are h2 (`CardTitle`). */}
        {/* Focusable from script only: where the focus goes when what had it is gone (a deleted row). */}
        <Title order={1} fz={24} tabIndex={-1} className="kb-focus-target" data-page-title>
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
