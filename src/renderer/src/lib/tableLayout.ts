import { useLayoutEffect, useRef, useState, type RefObject } from 'react';

/**
 * How a table in a card is laid out, from the most columns to the fewest: its full layout, a compact
 * one (fewer, merged columns) and rows stacked as blocks (styles.css, `[data-layout='stacked']`).
 */
export type TableLayout = 'full' | 'compact' | 'stacked';

/**
 * The first of `layouts` (in order, most columns first) that fits the table's card (`ref`) without
 * scrolling sideways, where the columns at its end would sit under the pinned row actions; the last one
 * when none does. Each layout is measured before the screen shows it, and again when the card is resized
 * or one of `shown` (the rows and what they show) changes, for a wider layout may fit then.
 */
export function useTableLayout(
  shown: readonly unknown[],
  layouts: readonly TableLayout[],
): { ref: RefObject<HTMLDivElement | null>; layout: TableLayout } {
  const ref = useRef<HTMLDivElement>(null);
  const [level, setLevel] = useState(0);
  // For each layout that did not fit: the width it needed and what it showed then.
  const overflow = useRef<({ width: number; shown: readonly unknown[] } | undefined)[]>([]);
  // After every render (cheap: a page of rows), so a new `shown` array each render is fine.
  useLayoutEffect(() => {
    const card = ref.current;
    if (!card) return;
    const fit = () => {
      if (level < layouts.length - 1 && card.scrollWidth > card.clientWidth) {
        overflow.current[level] = { width: card.scrollWidth, shown };
        setLevel(level + 1);
        return;
      }
      if (level === 0) return;
      // The wider layout is tried again (and stepped back from at once when it still does not fit).
      const wider = overflow.current[level - 1];
      const changed =
        !wider || wider.shown.length !== shown.length || wider.shown.some((s, i) => s !== shown[i]);
      if (changed || card.clientWidth >= wider.width) setLevel(level - 1);
    };
    fit();
    const observer = new ResizeObserver(fit);
    observer.observe(card);
    return () => observer.disconnect();
  });
  return { ref, layout: layouts[Math.min(level, layouts.length - 1)]! };
}

/**
 * Whether the card given to `setCard` (a callback ref) is at most `maxWidth` px wide (its client width):
 * measured before it shows and again whenever it is resized, a card rendered later (once its rows have
 * loaded) too.
 */
export function useNarrowCard(maxWidth: number): {
  setCard: (card: HTMLDivElement | null) => void;
  narrow: boolean;
} {
  const [card, setCard] = useState<HTMLDivElement | null>(null);
  const [narrow, setNarrow] = useState(false);
  useLayoutEffect(() => {
    if (!card) return;
    const measure = () => setNarrow(card.clientWidth <= maxWidth);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(card);
    return () => observer.disconnect();
  }, [card, maxWidth]);
  return { setCard, narrow };
}
