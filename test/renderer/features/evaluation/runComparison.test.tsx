import { MantineProvider } from '@mantine/core';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { EvalRun } from '../../../../src/renderer/src/features/evaluation/evalTypes';
import { RunComparison } from '../../../../src/renderer/src/features/evaluation/RunComparison';
import {
  compareRuns,
  formatChunking,
  toggleCompared,
  type MetricRow,
  type SettingRow,
} from '../../../../src/renderer/src/features/evaluation/runComparison';
import { histogramData, ScoreBinsList } from '../../../../src/renderer/src/features/evaluation/scoreBins';

function run(
  id: string,
  metrics: Partial<EvalRun['report']['metrics']>,
  settings: Partial<EvalRun['report']['settings']> = {},
): EvalRun {
  return {
    id,
    listingId: 'lst_1',
    name: `run ${id}`,
    createdAt: '2026-11-21T10:00:00.000Z',
    report: {
      settings: {
        mode: 'hybrid',
        k: 10,
        embeddingModel: 'kbs-offline-hybrid-v1',
        documentCount: 3,
        chunkCount: 40,
        dataset: 'BEIR set',
        chunking: { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 },
        denseWeight: 0.3,
        topK: 100,
        ...settings,
      },
      metrics: {
        ndcgAt10: 0.5,
        recallAt10: 0.6,
        recallAt100: 0.9,
        mrr: 0.7,
        p50LatencyMs: 2,
        queries: 8,
        skipped: 0,
        ...metrics,
      },
      questions: [],
      distribution: [],
    },
  };
}

const metric = (rows: ReturnType<typeof compareRuns>, key: string) =>
  rows.find((r) => r.key === key) as MetricRow;
const setting = (rows: ReturnType<typeof compareRuns>, key: string) =>
  rows.find((r) => r.key === key) as SettingRow;

describe('compareRuns', () => {
  const a = run(
    'a',
    { ndcgAt10: 0.62, p50LatencyMs: 3.5 },
    { chunking: { strategy: 'recursive', chunkSize: 256, chunkOverlap: 32 } },
  );
  const b = run('b', { ndcgAt10: 0.55, p50LatencyMs: 1.25 }, { mode: 'lexical', denseWeight: null });
  const rows = compareRuns([a, b]);

  it('marks the higher score and the lower latency as the better value', () => {
    expect(metric(rows, 'ndcgAt10')).toMatchObject({ display: ['0.620', '0.550'], best: [true, false] });
    expect(metric(rows, 'p50LatencyMs')).toMatchObject({
      display: ['3.5 ms', '1.3 ms'],
      best: [false, true],
    });
  });

  it('marks no run best when they tie', () => {
    expect(metric(rows, 'mrr').best).toEqual([false, false]);
  });

  it('lines up the settings and says which ones differ', () => {
    expect(setting(rows, 'mode')).toMatchObject({ display: ['hybrid', 'lexical'], differs: true });
    expect(setting(rows, 'chunkSize')).toMatchObject({ display: ['256', '512'], differs: true });
    expect(setting(rows, 'chunkingStrategy')).toMatchObject({
      display: ['recursive', 'recursive'],
      differs: false,
    });
    expect(setting(rows, 'denseWeight')).toMatchObject({ display: ['0.30', '—'], differs: true });
    expect(setting(rows, 'embeddingModel').differs).toBe(false);
  });

  it('says "not recorded" for runs stored before their settings were kept', () => {
    const old = run('old', {}, { chunking: undefined, denseWeight: undefined, topK: undefined });
    const rows2 = compareRuns([old, a]);
    expect(setting(rows2, 'chunkSize').display).toEqual(['not recorded', '256']);
    expect(setting(rows2, 'denseWeight').display).toEqual(['not recorded', '0.30']);
    expect(setting(rows2, 'topK').display).toEqual(['not recorded', '100']);
  });

  it('formats a knowledge base’s chunking, mixed and pre-built included', () => {
    expect(formatChunking({ strategy: 'mixed', chunkSize: 'mixed', chunkOverlap: 64 })).toBe(
      'mixed · mixed / 64 tokens',
    );
    expect(formatChunking({ strategy: 'pre-built', chunkSize: null, chunkOverlap: null })).toBe(
      'pre-built embeddings',
    );
  });

  it('keeps compared runs in the order they are listed, ticking and unticking', () => {
    const order = ['c', 'b', 'a'];
    expect(toggleCompared(['a'], 'c', order)).toEqual(['c', 'a']);
    expect(toggleCompared(['c', 'a'], 'c', order)).toEqual(['a']);
  });
});

describe('RunComparison', () => {
  it('renders one column per run with the better values highlighted and differing settings marked', () => {
    const html = renderToStaticMarkup(
      <MantineProvider>
        <RunComparison
          runs={[
            run('a', { ndcgAt10: 0.62 }),
            run('b', { ndcgAt10: 0.55 }, { mode: 'dense', denseWeight: null }),
          ]}
          onClear={() => {}}
        />
      </MantineProvider>,
    );
    const text = html.replace(/<style[\s\S]*?<\/style>/g, '').replace(/<!-- -->/g, '');
    expect(text).toContain('Comparing 2 runs');
    expect(text).toMatch(/<th[^>]*>[\s\S]*?run a[\s\S]*?<\/th><th[^>]*>[\s\S]*?run b/);
    // The best nDCG@10 cell is run a's, and only it.
    const best = [...text.matchAll(/<td[^>]*data-best=""[^>]*>([\s\S]*?)<\/td>/g)].map((m) =>
      m[1]!.replace(/<[^>]+>/g, ''),
    );
    expect(best).toEqual(['0.620']);
    expect(text).toMatch(/data-differs=""[^>]*>[\s\S]*?Mode[\s\S]*?differs/);
  });
});

describe('the score plot’s numbers', () => {
  it('turns score bins into one stacked bar per range', () => {
    expect(
      histogramData([
        { from: 0, to: 0.05, relevant: 1, other: 4 },
        { from: 0.95, to: 1, relevant: 3, other: 0 },
      ]),
    ).toEqual([
      { range: '0.00–0.05', relevant: 1, other: 4 },
      { range: '0.95–1.00', relevant: 3, other: 0 },
    ]);
  });

  it('are listed for screen readers, one item per range', () => {
    const html = renderToStaticMarkup(
      <MantineProvider>
        <ScoreBinsList bins={[{ from: 0.5, to: 0.55, relevant: 2, other: 7 }]} />
      </MantineProvider>,
    ).replace(/<!-- -->/g, '');
    expect(html).toContain('<li data-testid="histogram-bin">0.50–0.55: 2 relevant, 7 not relevant</li>');
  });
});
