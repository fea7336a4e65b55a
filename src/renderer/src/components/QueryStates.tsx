import { Alert, Button, Center, Group, Loader, Text } from '@mantine/core';
import { IconAlertTriangle, IconRefresh } from '@tabler/icons-react';
import { errorMessage, StudioApiError } from '../lib/studioApi';

export function LoadingState({ label }: { label: string }) {
  return (
    <Center py={64}>
      <Group gap="sm" role="status" aria-live="polite">
        <Loader size="sm" />
        <Text c="dimmed" size="sm">
          {label}
        </Text>
      </Group>
    </Center>
  );
}

/** A failed load: what the server said (with its request id), and a way to try again. */
export function ErrorState({
  title,
  error,
  onRetry,
}: {
  title: string;
  error: unknown;
  onRetry?: () => void;
}) {
  const requestId = error instanceof StudioApiError ? error.requestId : undefined;
  return (
    <Alert color="red" variant="light" title={title} icon={<IconAlertTriangle size={18} />} role="alert">
      <Text size="sm">{errorMessage(error)}</Text>
      {requestId && (
        <Text size="xs" c="dimmed" mt={4}>
          Request id: {requestId}
        </Text>
      )}
      {onRetry && (
        <Button
          mt="sm"
          size="xs"
          variant="light"
          color="red"
          leftSection={<IconRefresh size={14} />}
          onClick={onRetry}
        >
          Try again
        </Button>
      )}
    </Alert>
  );
}
