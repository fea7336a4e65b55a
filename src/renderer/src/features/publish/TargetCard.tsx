import {
  ActionIcon,
  Button,
  Card,
  Code,
  Group,
  PasswordInput,
  Select,
  Stack,
  Text,
  TextInput,
  Tooltip,
} from '@mantine/core';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { CardTitle } from '../../components/CardTitle';
import { useEffect, useMemo, useState } from 'react';
import type { PushTarget } from '../../../../shared/push';
import { ConfirmDeleteModal } from '../../components/ConfirmDeleteModal';
import { EncryptedAtRestBadge } from '../../components/EncryptedAtRestBadge';
import { errorMessage } from '../../lib/studioApi';
import { hostedUrl, listTargets, removeTarget, saveTarget } from './publishApi';

export const TARGETS_KEY = ['push-targets'] as const;

/** Chooses where to push: a remembered target, or a new one (base URL + API key, masked once saved). */
export function TargetCard({
  targetId,
  onChange,
  disabled,
}: {
  targetId: string | null;
  onChange: (id: string | null) => void;
  disabled: boolean;
}) {
  const queryClient = useQueryClient();
  const targets = useQuery({ queryKey: TARGETS_KEY, queryFn: listTargets });
  const [adding, setAdding] = useState(false);
  const list = useMemo(() => targets.data ?? [], [targets.data]);
  const selected = list.find((t) => t.id === targetId);
  const showForm = adding || (targets.isSuccess && list.length === 0);

  useEffect(() => {
    if (targets.isSuccess && !selected && list[0]) onChange(list[0].id);
  }, [targets.isSuccess, list, selected, onChange]);

  // Forgetting a target drops its API key too: asked first. Kept while the dialog closes.
  const [forgetting, setForgetting] = useState<PushTarget>();
  const [confirmOpened, setConfirmOpened] = useState(false);
  const remove = useMutation({
    mutationFn: removeTarget,
    onSuccess: async (removed) => {
      setConfirmOpened(false);
      if (removed.id === targetId) onChange(null);
      await queryClient.invalidateQueries({ queryKey: TARGETS_KEY });
    },
  });

  return (
    <Card withBorder radius="md" p="md">
      <Stack gap="sm">
        <Group justify="space-between">
          <CardTitle size="sm">Hosted service</CardTitle>
          {!showForm && (
            <Button
              size="xs"
              variant="subtle"
              leftSection={<IconPlus size={14} />}
              onClick={() => setAdding(true)}
              disabled={disabled}
            >
              Add target
            </Button>
          )}
        </Group>
        {list.length > 0 && (
          <Select
            label="Target"
            data={list.map((t) => ({
              value: t.id,
              label: t.label ? `${t.label} · ${t.baseUrl}` : t.baseUrl,
            }))}
            value={selected?.id ?? null}
            onChange={(value) => value && onChange(value)}
            allowDeselect={false}
            disabled={disabled}
          />
        )}
        {selected && (
          <TargetDetails
            target={selected}
            onRemove={() => {
              remove.reset();
              setForgetting(selected);
              setConfirmOpened(true);
            }}
            disabled={disabled}
          />
        )}
        {targets.isError && (
          <Text size="sm" c="red" role="alert">
            Could not load the saved targets: {errorMessage(targets.error)}
          </Text>
        )}
        {showForm && (
          <NewTargetForm
            canCancel={list.length > 0}
            onCancel={() => setAdding(false)}
            onSaved={async (target) => {
              await queryClient.invalidateQueries({ queryKey: TARGETS_KEY });
              onChange(target.id);
              setAdding(false);
            }}
          />
        )}
      </Stack>
      <ConfirmDeleteModal
        opened={confirmOpened}
        title="Forget target"
        confirmLabel="Forget target"
        pending={remove.isPending}
        error={remove.error}
        onConfirm={() => forgetting && remove.mutate(forgetting.id)}
        onClose={() => setConfirmOpened(false)}
      >
        Forget <b>{forgetting?.label || forgetting?.baseUrl}</b> and its saved API key{' '}
        <Code>{forgetting?.maskedKey}</Code>? Pushing there again needs the key again. Nothing on the service
        is deleted.
      </ConfirmDeleteModal>
    </Card>
  );
}

function TargetDetails({
  target,
  onRemove,
  disabled,
}: {
  target: PushTarget;
  onRemove: () => void;
  disabled: boolean;
}) {
  return (
    <Group justify="space-between" wrap="nowrap" align="flex-start">
      <Stack gap={4} style={{ minWidth: 0 }}>
        <Text size="xs" c="dimmed">
          API key
        </Text>
        <Group gap="xs">
          <Code aria-label="Saved API key (masked)">{target.maskedKey}</Code>
          {/* As the Settings and Wallet pages show a stored secret: the server says how it stored it. */}
          <EncryptedAtRestBadge encrypted={target.encryptedAtRest} size="xs" />
        </Group>
      </Stack>
      <Tooltip label="Forget this target and its key">
        <ActionIcon
          variant="subtle"
          color="red"
          aria-label={`Forget ${target.baseUrl}`}
          onClick={onRemove}
          disabled={disabled}
        >
          <IconTrash size={16} />
        </ActionIcon>
      </Tooltip>
    </Group>
  );
}

function NewTargetForm({
  canCancel,
  onCancel,
  onSaved,
}: {
  canCancel: boolean;
  onCancel: () => void;
  onSaved: (target: PushTarget) => Promise<void>;
}) {
  // The hosted.url setting (or KBSTUDIO_HOSTED_URL) fills the address until the user types one.
  const hosted = useQuery({ queryKey: ['settings', 'hosted.url'], queryFn: hostedUrl });
  const [typedUrl, setBaseUrl] = useState<string | null>(null);
  const baseUrl = typedUrl ?? hosted.data ?? '';
  const [apiKey, setApiKey] = useState('');
  const [label, setLabel] = useState('');
  const save = useMutation({
    mutationFn: () =>
      saveTarget({ baseUrl: baseUrl.trim(), apiKey: apiKey.trim(), label: label.trim() || undefined }),
    onSuccess: onSaved,
  });
  const urlError =
    baseUrl.trim() !== '' && !/^https?:\/\/\S+$/i.test(baseUrl.trim()) ? 'An http(s) address' : null;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <Stack gap="xs">
        <TextInput
          label="Base URL"
          description="The service's /v1 address"
          placeholder="https://api.example.com/v1"
          value={baseUrl}
          onChange={(e) => setBaseUrl(e.currentTarget.value)}
          error={urlError}
          required
        />
        <PasswordInput
          label="API key"
          // Before it is saved the page cannot know which: the server that stores it decides.
          description="Shown masked once saved, with a badge saying how it is stored. Like wallet secrets: encrypted with the OS keychain in the desktop app (when the OS has one), plain in the data directory under kbstudio serve."
          placeholder="kbs_…"
          value={apiKey}
          onChange={(e) => setApiKey(e.currentTarget.value)}
          required
        />
        <TextInput
          label="Label"
          placeholder="Optional, e.g. Hosted (beta)"
          value={label}
          onChange={(e) => setLabel(e.currentTarget.value)}
        />
        {save.isError && (
          <Text size="sm" c="red" role="alert">
            {errorMessage(save.error)}
          </Text>
        )}
        <Group justify="flex-end" gap="xs">
          {canCancel && (
            <Button variant="default" size="xs" onClick={onCancel}>
              Cancel
            </Button>
          )}
          <Button
            type="submit"
            size="xs"
            loading={save.isPending}
            disabled={!baseUrl.trim() || !apiKey.trim() || urlError !== null}
          >
            Save target
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
