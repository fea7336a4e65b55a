import { Title, type TitleProps } from '@mantine/core';
import { forwardRef } from 'react';

/**
 * A card's title: an h2 under the page's h1 (`PageHeader`), on every page alike, so a screen reader's
 * list of headings holds each card. `size` keeps the look each card had ("sm" in the work areas of
 * Ingest and Publish, "md" on Wallet and Settings).
 */
export const CardTitle = forwardRef<
  HTMLHeadingElement,
  Omit<TitleProps, 'order' | 'size'> & { size?: 'sm' | 'md' }
>(function CardTitle({ size = 'md', ...props }, ref) {
  return <Title ref={ref} order={2} fz={size} {...props} />;
});
