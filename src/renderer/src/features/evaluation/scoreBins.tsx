import { VisuallyHidden } from '@mantine/core';
import type { EvalRun } from './evalTypes';

type Bins = EvalRun['report']['distribution'];

/** The bins as chart rows: one bar per score range, relevant chunks stacked under the others. */
export function histogramData(bins: Bins) {
  return bins.map((bin) => ({
    range: `${bin.from.toFixed(2)}–${bin.to.toFixed(2)}`,
    relevant: bin.relevant,
    other: bin.other,
  }));
}

/**
 * The numbers behind the score plot, for screen readers (a chart is a picture to them). Kept out of
 * the lazily loaded chart so they are in the page at once.
 */
export function ScoreBinsList({ bins }: { bins: Bins }) {
  return (
    <VisuallyHidden>
      <ul aria-label="Score distribution, by range">
        {histogramData(bins).map((bin) => (
          <li key={bin.range} data-testid="histogram-bin">
            {bin.range}: {bin.relevant} relevant, {bin.other} not relevant
          </li>
        ))}
      </ul>
    </VisuallyHidden>
  );
}
