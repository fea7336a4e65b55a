import { Alert, Button, Code, CopyButton, Group, Modal, Select, Stack, Text, TextInput } from '@mantine/core';
import { IconAlertTriangle, IconCheck, IconCopy } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { CreatedApiKey } from '../../../../shared/studio';
import { announce } from '../../lib/announce';
import { shortAddress } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage, fieldErrorsOf, type CreateApiKeyBody } from '../../lib/studioApi';
import { useStudioApi } from '../../lib/studioContext';

export function CreateKeyModal({
  opened,
  onClose,
  wallet: preferredWallet = null,
}: {
  opened: boolean;
  onClose: () => void;
  /** The wallet to offer first (the page's filter). */
  wallet?: string | null;
}) {
  const api = useStudioApi();
  const queryClient = useQueryClient();
  const [label, setLabel] = useState('');
  const [wallet, setWallet] = useState<string | null>(null);
  const wallets = useQuery({
    queryKey: queryKeys.wallets,
    queryFn: () => api.wallets.list(),
    enabled: opened,
  });
  const create = useMutation({
    mutationFn: (body: CreateApiKeyBody) => api.keys.create(body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.keys }),
  });

  // The key exists only in this mutation's result: closing the dialog forgets it.
  function close() {
    setLabel('');
    setWallet(null);
    create.reset();
    onClose();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate({ label: label.trim() || undefined, wallet: wallet ?? defaultWallet ?? undefined });
  }

  const walletOptions = (wallets.data ?? []).map((w) => ({
    value: w.address,
    label: `${w.name}${w.isDefault ? ' (default)' : ''} · ${shortAddress(w.address, 6, 6)}`,
  }));
  const defaultWallet =
    (preferredWallet && wallets.data?.some((w) => w.address === preferredWallet) ? preferredWallet : null) ??
    wallets.data?.find((w) => w.isDefault)?.address ??
    null;
  const fieldErrors = fieldErrorsOf(create.error);

  return (
    <Modal
      opened={opened}
      // While the key is shown only "I have copied the key" closes: Escape or a click beside the dialog
      // would lose a key that is never shown again.
      onClose={create.data ? () => {} : close}
      title={create.data ? 'Copy your new API key' : 'Create API key'}
      size="lg"
      centered
      closeOnClickOutside={!create.data}
      closeOnEscape={!create.data}
      withCloseButton={!create.data}
    >
      {create.data ? (
        <CreatedKey created={create.data} onDone={close} />
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack gap="md">
            <Text size="sm" c="dimmed">
              An API key lets an app call this studio&apos;s <Code>/v1</Code> API as one of your wallets. It
              never expires; revoke it when it is no longer needed.
            </Text>
            <TextInput
              label="Label"
              description="Where the key will be used, so you recognise it later"
              placeholder="e.g. Research assistant (staging)"
              data-autofocus
              value={label}
              onChange={(e) => setLabel(e.currentTarget.value)}
              error={fieldErrors.label}
            />
            <Select
              label="Wallet"
              description={
                walletOptions.length === 0 && wallets.isSuccess
                  ? 'No wallet yet: the studio creates its default wallet for this key.'
                  : 'The key acts for this wallet'
              }
              placeholder={wallets.isPending ? 'Loading wallets…' : 'Default wallet'}
              data={walletOptions}
              value={wallet ?? defaultWallet}
              onChange={setWallet}
              disabled={walletOptions.length === 0}
              error={fieldErrors.wallet ?? (wallets.isError ? errorMessage(wallets.error) : undefined)}
              allowDeselect={false}
            />
            {create.error && Object.keys(fieldErrors).length === 0 && (
              <Alert color="red" variant="light" title="The key was not created" role="alert">
                {errorMessage(create.error)}
              </Alert>
            )}
            <Group justify="flex-end" gap="sm" mt="xs">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button type="submit" loading={create.isPending}>
                Create key
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

function CreatedKey({ created, onDone }: { created: CreatedApiKey; onDone: () => void }) {
  // The form (and its Create key button, disabled while the key was made) is gone: the focus would
  // sit on the page's body inside the dialog. It goes to Copy, what to do next.
  const copyButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    copyButton.current?.focus();
    announce('API key created. It is shown only once: copy it now.');
  }, []);
  return (
    <Stack gap="md">
      <Alert color="yellow" variant="light" icon={<IconAlertTriangle size={18} />} title="Shown only once">
        Copy this key now and keep it somewhere safe. The studio stores only a hash of it and cannot show it
        again; if it is lost, create a new key and revoke this one.
      </Alert>
      <Group gap="sm" wrap="nowrap" align="center">
        <Code
          block
          style={{ flex: 1, fontSize: 'var(--mantine-font-size-sm)', wordBreak: 'break-all' }}
          data-testid="new-api-key"
        >
          {created.key}
        </Code>
        <CopyButton value={created.key}>
          {({ copied, copy }) => (
            <Button
              variant={copied ? 'light' : 'filled'}
              color={copied ? 'teal' : undefined}
              leftSection={copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
              onClick={copy}
              w={112}
              ref={copyButton}
            >
              {copied ? 'Copied' : 'Copy'}
            </Button>
          )}
        </CopyButton>
      </Group>
      <Stack gap={2}>
        <Text size="xs" c="dimmed">
          Acts for wallet{' '}
          <span style={{ fontFamily: 'var(--mantine-font-family-monospace)' }}>{created.wallet}</span>
        </Text>
        <Text size="xs" c="dimmed">
          Send it as the header{' '}
          <Code style={{ whiteSpace: 'nowrap' }}>Authorization: Bearer &lt;key&gt;</Code>
        </Text>
      </Stack>
      <Group justify="flex-end">
        <Button onClick={onDone}>I have copied the key</Button>
      </Group>
    </Stack>
  );
}
