import { Button, FileInput, Group, Modal, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { IconFileImport } from '@tabler/icons-react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { Wallet } from '../../../../shared/studio';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage } from '../../lib/studioApi';
import { marketplaceApi } from '../../lib/wallet/marketplaceApi';
import { checkKeypairText } from './keypairFile';

/** Imports a Solana CLI keypair (`id.json`), picked as a file or pasted. */
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
  const [file, setFile] = useState<File | null>(null);
  const [text, setText] = useState('');
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

  function close() {
    setFile(null);
    setText('');
    setName('');
    setLocalError(undefined);
    importWallet.reset();
    onClose();
  }

  async function pick(picked: File | null) {
    setFile(picked);
    setLocalError(undefined);
    importWallet.reset();
    if (picked) setText(await picked.text());
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const fileName = file?.name ?? 'The pasted keypair';
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
            a JSON array of 64 numbers. The secret stays in the studio&apos;s server process and is never
            shown again.
          </Text>
          <FileInput
            label="Keypair file"
            placeholder="Choose id.json"
            accept="application/json,.json"
            value={file}
            onChange={(f) => void pick(f)}
            clearable
            leftSection={<IconFileImport size={16} />}
          />
          <Textarea
            label="…or paste its contents"
            placeholder="[174,47,154,16,…]"
            autosize
            minRows={3}
            maxRows={6}
            value={text}
            onChange={(e) => {
              setText(e.currentTarget.value);
              setFile(null);
              setLocalError(undefined);
            }}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 12 } }}
            error={error}
            data-testid="keypair-text"
          />
          <TextInput
            label="Name"
            description="Optional; how the studio lists this wallet"
            placeholder="e.g. my CLI wallet"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
          />
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
