import { Alert, List, Stack, Text } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { counted } from '../../lib/format';
import { isArchive } from './outcomeOrigins';
import type { NameClash, QueuedFile } from './types';

/** Name clashes spelled out; the others are counted. */
const CLASHES_NAMED = 3;

/**
 * "x.zip › a.md has the same name as a.md, which was stored: ingesting x.zip again replaces the stored
 * a.md. To keep both, rename a.md inside x.zip; to keep the stored one, remove x.zip from the queue." A
 * source name is one document (docs/ingestion.md): the retry is allowed, but not harmless. An archive's
 * entry cannot be renamed here: it is renamed inside its archive.
 */
export function clashSentence(queuedPath: string, clash: NameClash): string {
  const storedAs = clash.storedFrom === clash.name ? '' : ` as ${clash.name}`;
  const rename = isArchive(queuedPath) ? `rename ${clash.name} inside ${queuedPath}` : 'rename one of them';
  return `${clash.file} has the same name as ${clash.storedFrom}, which was stored${storedAs}: ingesting ${queuedPath} again replaces the stored ${clash.name}. To keep both, ${rename}; to keep only the stored one, remove ${queuedPath} from the queue.`;
}

/**
 * The files the last ingestion rejected, kept queued with their reasons: what Ingest does with them next.
 * One refused for a name another file took, and stored, would replace that file: said first, before the
 * retry the others get once their cause is fixed.
 */
export function RejectedFilesAlert({ queue }: { queue: readonly QueuedFile[] }) {
  const rejected = queue.filter((f) => f.rejected !== undefined);
  if (rejected.length === 0) return null;
  const clashes = rejected.flatMap((f) => (f.clashes ?? []).map((c) => clashSentence(f.path, c)));
  const others = rejected.filter((f) => (f.clashes ?? []).length === 0).length;
  const one = others === 1;
  return (
    <Alert
      color="yellow"
      variant="light"
      icon={<IconAlertTriangle size={16} />}
      title={`${counted(rejected.length, 'file was', 'files were')} not ingested`}
    >
      <Stack gap={6}>
        {clashes.length > 0 && (
          <>
            <Text size="sm">
              Ingested again as it is, a file refused for its name replaces the file stored under that name: a
              name is one document in a knowledge base.
            </Text>
            <List size="sm" spacing={2} aria-label="Files that would replace a stored file">
              {clashes.slice(0, CLASHES_NAMED).map((sentence) => (
                <List.Item key={sentence}>{sentence}</List.Item>
              ))}
              {clashes.length > CLASHES_NAMED && (
                <List.Item>and {clashes.length - CLASHES_NAMED} more</List.Item>
              )}
            </List>
          </>
        )}
        {others > 0 && (
          <Text size="sm">
            {clashes.length > 0
              ? one
                ? 'The other stays'
                : 'The others stay'
              : one
                ? 'It stays'
                : 'They stay'}{' '}
            queued, marked with the reason: once that is fixed, Ingest tries {one ? 'it' : 'them'} again.
          </Text>
        )}
      </Stack>
    </Alert>
  );
}
