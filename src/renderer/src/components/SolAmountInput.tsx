import { Text, TextInput, type TextInputProps } from '@mantine/core';
import { solAmountText } from './solAmount';

/**
 * An amount of SOL, kept exactly as typed. Not a NumberInput: its sanitizer drops what it does not
 * expect and moves a minus sign to the front, so typing `1e-9` gave `-91`. Here the text stays
 * what the user typed and the form's checks say what is wrong with it.
 */
export function SolAmountInput({
  value,
  onChange,
  ...props
}: Omit<TextInputProps, 'value' | 'onChange'> & {
  value: number | string;
  onChange: (value: string) => void;
}) {
  return (
    <TextInput
      inputMode="decimal"
      autoComplete="off"
      spellCheck={false}
      rightSection={
        <Text size="xs" c="dimmed" pr={6}>
          SOL
        </Text>
      }
      rightSectionWidth={44}
      rightSectionPointerEvents="none"
      {...props}
      value={solAmountText(value)}
      onChange={(event) => onChange(event.currentTarget.value)}
    />
  );
}
