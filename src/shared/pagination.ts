import { z } from 'zod';
import { queryInteger } from './queryNumbers';

export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;

/** Query parameters shared by every list endpoint. */
export const PageQuerySchema = z.object({
  limit: queryInteger((n) => n.min(1).max(LIST_LIMIT_MAX))
    .default(LIST_LIMIT_DEFAULT)
    .meta({ description: `Results per page, 1..${LIST_LIMIT_MAX} (default ${LIST_LIMIT_DEFAULT}).` }),
  offset: queryInteger((n) => n.min(0))
    .default(0)
    .meta({ description: 'Pagination offset.' }),
});

export const PaginationSchema = z
  .object({
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
    hasMore: z.boolean(),
  })
  .meta({ id: 'Pagination' });

export type Pagination = z.infer<typeof PaginationSchema>;

export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}

export function paginationOf<T>(page: Page<T>): Pagination {
  return {
    total: page.total,
    limit: page.limit,
    offset: page.offset,
    hasMore: page.offset + page.items.length < page.total,
  };
}
