import { useLayoutEffect, useRef, useState, type RefObject } from 'react';

/**
 * Whether a table takes its compact layout (fewer, merged columns): when its full layout is wider than
 * its card (`ref`), where the columns at its end would sit under the pinned row actions. The full layout
 * is measured before the screen shows it, and again when the card is resized or one of `shown` (the
 * rows and what they show) changes, for other rows may fit.
 */
export function useCompactTable(shown: readonly unknown[]): {
  ref: RefObject<HTMLDivElement | null>;
  compact: boolean;
} {
  const ref = useRef<HTMLDivElement>(null);
  const [compact, setCompact] = useState(false);
  // The width the full layout needed, and what it showed, when it last did not fit.
  const overflow = useRef<{ width: number; shown: readonly unknown[] }>(undefined);
  // After every render (cheap: a page of rows), so a new `shown` array each render is fine.
  useLayoutEffect(() => {
    const card = ref.current;
    if (!card) return;
    const fit = () => {
      if (!compact) {
        if (card.scrollWidth <= card.clientWidth) return;
        overflow.current = { width: card.scrollWidth, shown };
        setCompact(true);
        return;
      }
      const last = overflow.current;
      const changed =
        !last || last.shown.length !== shown.length || last.shown.some((s, i) => s !== shown[i]);
      if (changed || card.clientWidth >= last.width) setCompact(false);
    };
    fit();
    const observer = new ResizeObserver(fit);
    observer.observe(card);
    return () => observer.disconnect();
  });
  return { ref, compact };
}
