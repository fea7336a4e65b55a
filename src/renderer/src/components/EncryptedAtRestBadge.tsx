import { Badge, Tooltip, type MantineSize } from '@mantine/core';

/** Whether a stored secret (a wallet's, an API key) is sealed with the OS keychain or stored as typed. */
export function EncryptedAtRestBadge({ encrypted, size = 'sm' }: { encrypted: boolean; size?: MantineSize }) {
  return (
    <Tooltip
      label={
        encrypted
          ? 'Sealed with the OS keychain (Electron safeStorage)'
          : 'Stored unencrypted in the data directory (kbstudio serve / CLI have no OS keychain)'
      }
      withArrow
      multiline
      w={260}
    >
      <Badge size={size} variant="light" color={encrypted ? 'teal' : 'yellow'}>
        {encrypted ? 'Encrypted' : 'Plain'}
      </Badge>
    </Tooltip>
  );
}
