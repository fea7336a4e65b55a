import { VisuallyHidden } from '@mantine/core';
import { useAnnouncement } from '../lib/announce';

/** The studio's one polite live region: `announce()` from anywhere says what an action did. */
export function LiveAnnouncer() {
  const message = useAnnouncement();
  return (
    <VisuallyHidden role="status" aria-live="polite" aria-atomic="true" data-testid="live-announcer">
      {message}
    </VisuallyHidden>
  );
}
