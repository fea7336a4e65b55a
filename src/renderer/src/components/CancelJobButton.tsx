import { Button } from '@mantine/core';
import { IconPlayerStop } from '@tabler/icons-react';

/** The Cancel button of a running studio job's panel. */
export function CancelJobButton({ onCancel, cancelling }: { onCancel: () => void; cancelling: boolean }) {
  return (
    <Button
      size="xs"
      variant="light"
      color="red"
      leftSection={<IconPlayerStop size={14} />}
      onClick={onCancel}
      loading={cancelling}
      // Beside a panel's title, which wraps: the button keeps its width, never cut to "Canc".
      style={{ flexShrink: 0 }}
    >
      Cancel
    </Button>
  );
}
