import { Stack, Text, type ComboboxItem, type SelectProps } from '@mantine/core';
import type { Listing } from '../../../../shared/listings';
import { counted } from '../../lib/format';

export interface ListingOption extends ComboboxItem {
  /** Shown under the label in the list: "12 documents · lst_4fQx" (the id only if not in the label). */
  detail: string;
}

const shortId = (id: string) => id.slice(0, 8);

function countOf(keys: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

/**
 * A listing picker's options. The label is the title, followed by the start of the id when another
 * listing has the same title (the whole id if that is not enough), so the field tells them apart too.
 */
export function listingOptions(listings: Pick<Listing, 'id' | 'title' | 'documentCount'>[]): ListingOption[] {
  const titles = countOf(listings.map((l) => l.title));
  const titlesAndIds = countOf(listings.map((l) => `${l.title} · ${shortId(l.id)}`));
  return listings.map((l) => {
    const sameTitle = (titles.get(l.title) ?? 0) > 1;
    const id = (titlesAndIds.get(`${l.title} · ${shortId(l.id)}`) ?? 0) > 1 ? l.id : shortId(l.id);
    const documents = counted(l.documentCount, 'document');
    return sameTitle
      ? { value: l.id, label: `${l.title} · ${id}`, detail: documents }
      : { value: l.id, label: l.title, detail: `${documents} · ${id}` };
  });
}

/**
 * The Select props of a listing picker: each option's title with its detail underneath, searchable, and
 * a long title cut with an ellipsis in the field (whole on hover, `chosen`'s) and wrapped in the list.
 */
export function listingSelectProps(
  listings: Pick<Listing, 'id' | 'title' | 'documentCount'>[],
  chosen: string | null = null,
): {
  data: ListingOption[];
  renderOption: NonNullable<SelectProps['renderOption']>;
  title: string | undefined;
  searchable: true;
  nothingFoundMessage: string;
  styles: SelectProps['styles'];
} {
  const options = listingOptions(listings);
  const detail = new Map(options.map((o) => [o.value, o.detail]));
  return {
    data: options,
    renderOption: ({ option }) => (
      <Stack gap={0}>
        <Text size="sm">{option.label}</Text>
        <Text size="xs" c="dimmed">
          {detail.get(option.value)}
        </Text>
      </Stack>
    ),
    title: options.find((o) => o.value === chosen)?.label,
    searchable: true,
    nothingFoundMessage: 'No such listing',
    styles: { input: { textOverflow: 'ellipsis' }, option: { overflowWrap: 'anywhere' } },
  };
}
