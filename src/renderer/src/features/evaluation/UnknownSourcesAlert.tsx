import { Alert, Code, List, Text } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import type { UnknownSource } from '../../../../shared/evaluation';
import { counted } from '../../lib/format';

/**
 * The expected sources of a run that name no document of its listing: a typo scores nothing whatever
 * the retrieval, so it is said here rather than left to read as a miss.
 */
export function UnknownSourcesAlert({ unknown }: { unknown: readonly UnknownSource[] }) {
  if (unknown.length === 0) return null;
  const leftOut = unknown.filter((u) => !u.scored).length;
  return (
    <Alert
      color="yellow"
      variant="light"
      icon={<IconAlertTriangle size={16} />}
      title={`${counted(unknown.length, 'expected source matches', 'expected sources match')} no document of this listing`}
    >
      <List size="sm" spacing={2}>
        {unknown.map((u) => (
          <List.Item key={u.id}>
            <Code>{u.source}</Code> for “{u.question}”:{' '}
            {u.scored ? 'scored by its expected text only' : 'left out of the metrics'}
            {u.suggestion !== undefined && (
              <>
                {' '}
                (did you mean <Code>{u.suggestion}</Code>?)
              </>
            )}
          </List.Item>
        ))}
      </List>
      <Text size="xs" mt={6}>
        {leftOut > 0 ? `${counted(leftOut, 'question was', 'questions were')} not scored. ` : ''}An expected
        source is a document's name as Inspect lists it, or the end of its path (policies/lease.pdf).
      </Text>
    </Alert>
  );
}
