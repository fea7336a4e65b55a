import {
  Badge,
  Button,
  Card,
  Group,
  PasswordInput,
  Skeleton,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { EncryptedAtRestBadge } from '../../components/EncryptedAtRestBadge';
import { ErrorState } from '../../components/QueryStates';
import { studioCall } from '../playground/studioCalls';

interface SettingView {
  key: string;
  value: string | null;
  source: 'environment' | 'stored' | 'unset';
  description: string;
  secret: boolean;
  env: string;
  /** A stored secret: sealed with the OS keychain (desktop app) or stored as typed. */
  encryptedAtRest?: boolean;
  /** Stored encrypted, but this keychain cannot open it. */
  unreadable?: true;
}

const PROVIDER_KEYS = ['openai.apiKey', 'openai.baseUrl', 'cohere.apiKey', 'cohere.baseUrl'];
const SOURCE_COLOR = { environment: 'violet', stored: 'teal', unset: 'gray' } as const;

/** Embedding provider keys and base URLs. Secrets are write-only: the server sends them back masked. */
export function ProvidersCard() {
  const settings = useQuery({
    queryKey: ['settings'],
    queryFn: () => studioCall<SettingView[]>('GET', '/settings'),
  });
  return (
    <Card withBorder padding="lg">
      <Title order={3} fz="md" mb={4}>
        Embedding providers
      </Title>
      <Text size="sm" c="dimmed" mb="md">
        Keys and base URLs for OpenAI and Cohere models. Keys are stored on this machine and never shown
        again; an environment variable overrides what is stored here.
      </Text>
      {settings.isError ? (
        <ErrorState
          title="Could not load settings"
          error={settings.error}
          onRetry={() => void settings.refetch()}
        />
      ) : settings.isPending ? (
        <Stack gap="sm">
          {PROVIDER_KEYS.map((k) => (
            <Skeleton key={k} h={56} />
          ))}
        </Stack>
      ) : (
        <Stack gap="md">
          {settings.data
            .filter((s) => PROVIDER_KEYS.includes(s.key))
            .map((s) => (
              <SettingRow key={s.key} setting={s} />
            ))}
        </Stack>
      )}
    </Card>
  );
}

function SettingRow({ setting }: { setting: SettingView }) {
  const client = useQueryClient();
  const [value, setValue] = useState('');
  const save = useMutation({
    mutationFn: (next: string) =>
      studioCall<SettingView>('PUT', `/settings/${encodeURIComponent(setting.key)}`, { value: next }),
    onSuccess: () => {
      setValue('');
      void client.invalidateQueries({ queryKey: ['settings'] });
    },
  });
  const fromEnv = setting.source === 'environment';
  const Input = setting.secret ? PasswordInput : TextInput;
  const current = setting.value ?? '';
  const placeholder = fromEnv
    ? `Set by ${setting.env}`
    : setting.unreadable
      ? 'Stored encrypted, but this keychain cannot open it: set it again'
      : setting.secret
        ? current || 'Not set'
        : current || 'Default';
  const error = save.error instanceof Error ? save.error.message : undefined;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim()) save.mutate(value.trim());
      }}
    >
      <Group align="flex-end" gap="sm" wrap="nowrap">
        <Input
          label={
            <Group gap={6} component="span">
              <span>{setting.key}</span>
              <Badge size="xs" variant="light" color={SOURCE_COLOR[setting.source]}>
                {setting.source}
              </Badge>
              {setting.encryptedAtRest !== undefined && (
                <EncryptedAtRestBadge encrypted={setting.encryptedAtRest} size="xs" />
              )}
            </Group>
          }
          description={setting.description}
          placeholder={placeholder}
          value={value}
          onChange={(e) => setValue(e.currentTarget.value)}
          disabled={fromEnv}
          error={error}
          style={{ flex: 1 }}
          autoComplete="off"
        />
        <Group gap={4} w={168} wrap="nowrap" style={{ flex: 'none' }}>
          <Button type="submit" variant="light" disabled={fromEnv || !value.trim()} loading={save.isPending}>
            Save
          </Button>
          {setting.source === 'stored' && (
            <Button variant="subtle" color="gray" onClick={() => save.mutate('')} disabled={save.isPending}>
              Clear
            </Button>
          )}
        </Group>
      </Group>
    </form>
  );
}
