import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ApiKey } from '../../../../shared/studio';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage } from '../../lib/studioApi';
import { useStudioApi } from '../../lib/studioContext';

/** Confirms revoking a key; `apiKey` undefined = closed. */
export function RevokeKeyModal({ apiKey, onClose }: { apiKey: ApiKey | undefined; onClose: () => void }) {
  const api = useStudioApi();
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: (id: string) => api.keys.revoke(id),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.keys });
      close();
    },
  });

  function close() {
    revoke.reset();
    onClose();
  }

  return (
    <Modal opened={apiKey !== undefined} onClose={close} title="Revoke API key" centered>
      {apiKey && (
        <Stack gap="md">
          <Text size="sm">
            Revoke <b>{apiKey.label || 'the unlabelled key'}</b> (<code>{apiKey.prefix}…</code>)? Every app
            using it is refused from the next request on. This cannot be undone.
          </Text>
          {revoke.error && (
            <Alert color="red" variant="light" title="Not revoked" role="alert">
              {errorMessage(revoke.error)}
            </Alert>
          )}
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={close} data-autofocus>
              Cancel
            </Button>
            <Button color="red" loading={revoke.isPending} onClick={() => revoke.mutate(apiKey.id)}>
              Revoke key
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
