import { Badge } from '@mantine/core';
import type { ListingStatus } from '../../../../shared/listings';

export function ListingStatusBadge({ status }: { status: ListingStatus }) {
  return status === 'published' ? (
    <Badge color="teal" variant="light">
      Published
    </Badge>
  ) : (
    <Badge color="yellow" variant="light">
      Draft
    </Badge>
  );
}
