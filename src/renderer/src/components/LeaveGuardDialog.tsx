import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { usePendingLeave } from '../lib/leaveGuard';

/** Asks before a view with unsaved changes is left for another section or listing (lib/leaveGuard.ts). */
export function LeaveGuardDialog() {
  const { asking, discard, stay } = usePendingLeave();
  return (
    <Modal opened={asking} onClose={stay} title="Discard unsaved changes?" centered>
      <Stack gap="md">
        <Text size="sm">The changes on this page are not saved. Leaving discards them.</Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={stay} data-autofocus>
            Stay
          </Button>
          <Button color="red" onClick={discard}>
            Discard
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
