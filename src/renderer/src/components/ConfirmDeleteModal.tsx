import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { errorMessage } from '../lib/studioApi';

/**
 * Asks before something is deleted for good: what goes, "Keep it" (focused first) or the red confirm
 * button, and the server's refusal when the deletion failed.
 */
export function ConfirmDeleteModal({
  opened,
  title,
  confirmLabel,
  pending,
  error,
  onConfirm,
  onClose,
  children,
}: {
  opened: boolean;
  title: string;
  confirmLabel: string;
  pending: boolean;
  /** The failed deletion's error, shown as "Not deleted". */
  error: unknown;
  onConfirm: () => void;
  onClose: () => void;
  /** What is deleted, said in a sentence or two. */
  children: ReactNode;
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={title} centered>
      <Stack gap="md">
        <Text size="sm">{children}</Text>
        {error ? (
          <Alert color="red" variant="light" title="Not deleted" role="alert">
            {errorMessage(error)}
          </Alert>
        ) : null}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose} data-autofocus>
            Keep it
          </Button>
          <Button color="red" loading={pending} onClick={onConfirm}>
            {confirmLabel}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
