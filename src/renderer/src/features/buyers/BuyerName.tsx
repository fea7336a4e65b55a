import { Text } from '@mantine/core';

/**
 * A test buyer's name, or "Outside wallet" for a wallet the studio does not hold. A name is the
 * creator's text, up to 64 characters without a space: it breaks anywhere rather than push the row's
 * buttons out of the card, or run under the status badge when the row is stacked.
 */
export function BuyerName({ name }: { name: string | null | undefined }) {
  return (
    <Text size="sm" fw={600} className="kb-break" title={name ?? undefined}>
      {name ?? 'Outside wallet'}
    </Text>
  );
}
