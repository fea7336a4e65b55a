import { CardTitle } from '../../components/CardTitle';
import {
  Badge,
  Button,
  Card,
  Code,
  Group,
  Notification,
  PasswordInput,
  Skeleton,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { EncryptedAtRestBadge } from '../../components/EncryptedAtRestBadge';
import { ErrorState } from '../../components/QueryStates';
import { studioCall, studioCallAnswer } from '../playground/studioCalls';
import {
  environmentNote,
  settingErrorText,
  settingLabel,
  settingPlaceholder,
  type SettingView,
} from './settingPlaceholder';

const PROVIDER_KEYS = ['openai.apiKey', 'openai.baseUrl', 'cohere.apiKey', 'cohere.baseUrl'];
const SOURCE_COLOR = { environment: 'violet', stored: 'teal', unset: 'gray' } as const;

/** The key a base URL is sent with: storing another URL clears it on the server (docs/studio.md). */
const KEY_OF_BASE_URL: Record<string, { key: string; provider: string }> = {
  'openai.baseUrl': { key: 'openai.apiKey', provider: 'OpenAI' },
  'cohere.baseUrl': { key: 'cohere.apiKey', provider: 'Cohere' },
};

/** Embedding provider keys and base URLs. Secrets are write-only: the server sends them back masked. */
export function ProvidersCard() {
  const settings = useQuery({
    queryKey: ['settings'],
    queryFn: () => studioCall<SettingView[]>('GET', '/settings'),
  });
  // The keys the server cleared when a base URL was saved; shown until dismissed or the next save.
  const [cleared, setCleared] = useState<string[]>([]);
  return (
    <Card withBorder padding="lg">
      <CardTitle mb={4}>Embedding providers</CardTitle>
      <Text size="sm" c="dimmed" mb="md">
        Keys and base URLs for OpenAI and Cohere models. Keys are stored on this machine and never shown
        again; an environment variable overrides what is stored here.
      </Text>
      {cleared.length > 0 && (
        <Notification
          color="yellow"
          title={`Cleared ${cleared.map((key) => `the ${settingLabel(key)}`).join(' and ')}`}
          onClose={() => setCleared([])}
          closeButtonProps={{ 'aria-label': 'Dismiss' }}
          withBorder
          mb="md"
          role="status"
        >
          A key is sent only to the address it was stored for: set it again for the new base URL.
        </Notification>
      )}
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
              <SettingRow
                key={s.key}
                setting={s}
                keyStored={settings.data.some(
                  (k) => k.key === KEY_OF_BASE_URL[s.key]?.key && k.source === 'stored',
                )}
                onSaved={setCleared}
              />
            ))}
        </Stack>
      )}
    </Card>
  );
}

function SettingRow({
  setting,
  keyStored,
  onSaved,
}: {
  setting: SettingView;
  /** A base URL whose provider's key is stored (which saving it clears). */
  keyStored: boolean;
  onSaved: (cleared: string[]) => void;
}) {
  const client = useQueryClient();
  const [value, setValue] = useState('');
  const save = useMutation({
    mutationFn: (next: string) =>
      studioCallAnswer<SettingView, { cleared: string[] }>(
        'PUT',
        `/settings/${encodeURIComponent(setting.key)}`,
        { value: next },
      ),
    onSuccess: (answer) => {
      setValue('');
      onSaved(answer.cleared ?? []);
      void client.invalidateQueries({ queryKey: ['settings'] });
    },
  });
  const clears = keyStored ? KEY_OF_BASE_URL[setting.key] : undefined;
  const fromEnv = setting.source === 'environment';
  // What the environment sets is shown as a read-only field's text (a disabled field's placeholder is
  // too faint to read); a secret arrives masked, so it needs no password field then.
  const Input = setting.secret && !fromEnv ? PasswordInput : TextInput;
  const placeholder = settingPlaceholder(setting);
  const note = environmentNote(setting);
  const error = save.error instanceof Error ? settingErrorText(save.error.message, setting.key) : undefined;
  const label = settingLabel(setting.key);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim()) save.mutate(value.trim());
      }}
    >
      <Input
        // The label is the setting's name alone, so that it is the field's accessible name; the key
        // the CLI knows and where the value comes from are secondary text under it.
        label={label}
        description={
          <>
            <Group gap={6} component="span" mb={2}>
              <Code fz="xs">{setting.key}</Code>
              <Badge size="xs" variant="light" color={SOURCE_COLOR[setting.source]}>
                {setting.source}
              </Badge>
              {setting.encryptedAtRest !== undefined && (
                <EncryptedAtRestBadge encrypted={setting.encryptedAtRest} size="xs" />
              )}
            </Group>
            <span style={{ display: 'block' }}>{setting.description}</span>
          </>
        }
        // The buttons sit beside the input itself, top-aligned: a refusal under the field does not
        // push them out of line with it.
        inputContainer={(field) => (
          <Group align="flex-start" gap="sm" wrap="nowrap">
            <div style={{ flex: 1, minWidth: 0 }}>{field}</div>
            <Group gap={4} w={168} wrap="nowrap" style={{ flex: 'none' }}>
              <Button
                type="submit"
                variant="light"
                disabled={fromEnv || !value.trim()}
                loading={save.isPending}
                aria-label={`Save ${label}`}
              >
                Save
              </Button>
              {setting.source === 'stored' && (
                <Button
                  variant="subtle"
                  color="gray"
                  onClick={() => save.mutate('')}
                  disabled={save.isPending}
                  aria-label={`Clear ${label}`}
                >
                  Clear
                </Button>
              )}
            </Group>
          </Group>
        )}
        placeholder={placeholder}
        value={fromEnv ? placeholder : value}
        onChange={(e) => setValue(e.currentTarget.value)}
        readOnly={fromEnv}
        title={fromEnv ? placeholder : undefined}
        variant={fromEnv ? 'filled' : 'default'}
        error={error}
        autoComplete="off"
      />
      {note && (
        <Text size="xs" c="dimmed" mt={4}>
          {note}
        </Text>
      )}
      {clears && !fromEnv && (
        <Text size="xs" c="var(--mantine-color-orange-light-color)" mt={4}>
          Saving a new base URL clears the stored {clears.provider} API key.
        </Text>
      )}
    </form>
  );
}
