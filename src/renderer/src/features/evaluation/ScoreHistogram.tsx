import { BarChart } from '@mantine/charts';
import type { EvalRun } from './evalTypes';
import { histogramData } from './scoreBins';

type Bins = EvalRun['report']['distribution'];

/** Scores of the top-10 chunks of every question, in bins of 0.05: relevant stacked under the rest. */
export function ScoreHistogram({ bins }: { bins: Bins }) {
  const data = histogramData(bins);
  return (
    <div role="img" aria-label="Score distribution">
      <BarChart
        h={240}
        data={data}
        dataKey="range"
        type="stacked"
        series={[
          { name: 'relevant', label: 'Relevant', color: 'teal.6' },
          { name: 'other', label: 'Not relevant', color: 'gray.5' },
        ]}
        withLegend
        legendProps={{ verticalAlign: 'bottom', height: 36 }}
        xAxisLabel="Score"
        yAxisLabel="Chunks"
        tickLine="none"
        maxBarWidth={40}
        xAxisProps={{ interval: 3, tickFormatter: (v: string) => v.split('–')[0]! }}
        yAxisProps={{ allowDecimals: false, width: 48 }}
        tooltipAnimationDuration={0}
        barProps={{ isAnimationActive: false }}
      />
    </div>
  );
}
