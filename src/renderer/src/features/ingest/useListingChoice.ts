import { useLocalStorage } from '@mantine/hooks';

/** The listing Ingest and Inspect work on, shared between them and kept across launches. */
export function useListingChoice() {
  return useLocalStorage<string | null>({ key: 'kbstudio.workListing', defaultValue: null });
}
