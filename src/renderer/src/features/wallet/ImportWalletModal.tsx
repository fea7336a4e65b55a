import { Alert, Button, FileInput, Group, Modal, Stack, Text, TextInput } from '@mantine/core';
import { IconFileImport, IconKey } from '@tabler/icons-react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { Wallet } from '../../../../shared/studio';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage } from '../../lib/studioApi';
import { marketplaceApi } from '../../lib/wallet/marketplaceApi';
import { addressInKeypairText, checkKeypairText } from './keypairFile';

/**
 * Imports a Solana CLI keypair (`id.json`), picked as a file or pasted. The secret is never shown: a
 * picked file stays in memory (only the address it names is shown) and the paste field is masked.
 */
export function ImportWalletModal({
  opened,
  onClose,
  onImported,
}: {
  opened: boolean;
  onClose: () => void;
  onImported: (wallet: Wallet) => void;
}) {
  const queryClient = useQueryClient();
  const [file, setFile] = useState<{ file: File; text: string } | null>(null);
  const [pasted, setPasted] = useState('');
  const [name, setName] = useState('');
  const [localError, setLocalError] = useState<string>();
  const importWallet = useMutation({
    mutationFn: marketplaceApi.importWallet,
    onSuccess: async (wallet) => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.wallets });
      onImported(wallet);
      close();
    },
  });

  const text = file ? file.text : pasted;
  const fileName = file?.file.name ?? 'The pasted keypair';
  const address = addressInKeypairText(text);

  function close() {
    setFile(null);
    setPasted('');
    setName('');
    setLocalError(undefined);
    importWallet.reset();
    onClose();
  }

  async function pick(picked: File | null) {
    importWallet.reset();
    setPasted('');
    if (!picked) {
      setFile(null);
      setLocalError(undefined);
      return;
    }
    const read = await picked.text();
    setFile({ file: picked, text: read });
    // Said at once: a file that is no keypair is refused before anything is sent.
    setLocalError(read.trim() ? checkKeypairText(read, picked.name) : undefined);
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const problem = checkKeypairText(text, fileName);
    setLocalError(problem);
    if (problem) return;
    importWallet.mutate({ fileText: text, fileName, name: name.trim() || undefined });
  }

  const error = localError ?? (importWallet.error ? errorMessage(importWallet.error) : undefined);
  return (
    <Modal opened={opened} onClose={close} title="Import a Solana CLI keypair" size="lg" centered>
      <form onSubmit={submit} noValidate>
        <Stack gap="md">
          <Text size="sm" c="dimmed">
            The file <code>solana-keygen new</code> writes (by default <code>~/.config/solana/id.json</code>):
            a JSON array of 64 numbers. Its secret is never shown: it goes to the studio&apos;s server process
            and stays there.
          </Text>
          <FileInput
            label="Keypair file"
            placeholder="Choose id.json"
            accept="application/json,.json"
            value={file?.file ?? null}
            onChange={(f) => void pick(f)}
            clearable
            leftSection={<IconFileImport size={16} />}
            data-autofocus
          />
          <TextInput
            // Masked, and never filled from the file: the secret stays out of view either way.
            type="password"
            label="…or paste its contents"
            description="Masked as you paste."
            placeholder={file ? 'Using the chosen file' : '[174,47,154,16,…]'}
            autoComplete="off"
            spellCheck={false}
            leftSection={<IconKey size={16} />}
            value={pasted}
            onChange={(e) => {
              setPasted(e.currentTarget.value);
              setFile(null);
              setLocalError(undefined);
              importWallet.reset();
            }}
            data-testid="keypair-text"
          />
          {address && (
            <div data-testid="keypair-address">
              <Text size="xs" c="dimmed">
                {file
                  ? `${file.file.name} loaded · the address it names`
                  : 'The address the pasted keypair names'}
              </Text>
              <Text size="sm" ff="monospace" style={{ overflowWrap: 'anywhere' }}>
                {address}
              </Text>
            </div>
          )}
          <TextInput
            label="Name"
            description="Optional; how the studio lists this wallet"
            placeholder="e.g. my CLI wallet"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          {error !== undefined && (
            <Alert color="red" variant="light" title="Not imported" role="alert">
              {error}
            </Alert>
          )}
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button type="submit" loading={importWallet.isPending} disabled={!text.trim()}>
              Import wallet
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
