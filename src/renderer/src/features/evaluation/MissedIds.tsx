import { Text } from '@mantine/core';

/** Missed ids written out in a question's row; the others are counted, and all are in the title. */
export const MISSED_SHOWN = 3;

/** "a, b, c and 4 more". */
export function missedLine(missed: readonly string[], max = MISSED_SHOWN): string {
  const more = missed.length - max;
  return missed.slice(0, max).join(', ') + (more > 0 ? ` and ${more} more` : '');
}

/**
 * "Missed: a, b, c and 4 more", wrapped inside an id when it must: a BEIR id such as
 * `<dbpedia:Prime_Minister_of_Canada>` has no place to break, so a line clamped at its first line
 * showed only "Missed:…". Clamped at a few lines for the odd very long id; whole on hover.
 */
export function MissedIds({ missed }: { missed: readonly string[] }) {
  return (
    <Text
      size="xs"
      c="red"
      lineClamp={4}
      title={missed.join(', ')}
      style={{ overflowWrap: 'anywhere' }}
      data-testid="missed-ids"
    >
      Missed: {missedLine(missed)}
    </Text>
  );
}
