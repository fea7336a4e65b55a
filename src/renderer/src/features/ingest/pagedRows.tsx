import { Group, Pagination, Text } from '@mantine/core';
import { useState } from 'react';

/**
 * Rows drawn at once in a list of an ingestion's files (queue, outcome): a folder of 1,500 files drawn
 * whole made every change of the page take seconds. More are paged.
 */
export const ROWS_PER_PAGE = 50;

export interface PagedRows<T> {
  rows: T[];
  page: number;
  pages: number;
  /** Index of the first row shown. */
  first: number;
  total: number;
  setPage: (page: number) => void;
}

/** One page of `items`; the page stays in range when the list shrinks (files removed, a filter). */
export function usePagedRows<T>(items: readonly T[], perPage = ROWS_PER_PAGE): PagedRows<T> {
  const [wanted, setPage] = useState(1);
  const pages = Math.max(1, Math.ceil(items.length / perPage));
  const page = Math.min(wanted, pages);
  const first = (page - 1) * perPage;
  return { rows: items.slice(first, first + perPage), page, pages, first, total: items.length, setPage };
}

/** "51–100 of 1,500 files" and the page buttons, under a list longer than a page (nothing otherwise). */
export function RowPager({ paged, noun, label }: { paged: PagedRows<unknown>; noun: string; label: string }) {
  if (paged.pages <= 1) return null;
  const last = paged.first + paged.rows.length;
  return (
    <Group justify="space-between" gap="xs" component="nav" aria-label={label}>
      <Text size="xs" c="dimmed">
        {(paged.first + 1).toLocaleString('en-US')}–{last.toLocaleString('en-US')} of{' '}
        {paged.total.toLocaleString('en-US')} {noun}
      </Text>
      <Pagination value={paged.page} onChange={paged.setPage} total={paged.pages} size="sm" />
    </Group>
  );
}
