import { useLocalStorage } from '@mantine/hooks';

/**
 * The listing Ingest and Inspect work on, shared between them and kept across launches. Read at once
 * (no server rendering here): read in an effect, the first render of a view saw no choice, and the
 * listing picker then chose the first listing in place of the creator's.
 */
export function useListingChoice() {
  return useLocalStorage<string | null>({
    key: 'kbstudio.workListing',
    defaultValue: null,
    getInitialValueInEffect: false,
  });
}
