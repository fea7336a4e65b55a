/**
 * The knowledge-base settings an evaluation run is recorded with, so runs made under different
 * chunking, models or weights can be told apart and compared later.
 */

import type { RunChunking, SharedSetting } from '../../../shared/evaluation';

export type { RunChunking, SharedSetting };

export const PREBUILT = 'pre-built';

function shared<T>(values: T[]): SharedSetting<T> {
  const distinct = [...new Set(values)];
  if (distinct.length === 0) return null;
  return distinct.length === 1 ? distinct[0]! : 'mixed';
}

/**
 * The chunking of a knowledge base from its documents' `metadata.chunking` (one entry per distinct
 * setting is enough): what they share, or `mixed`.
 */
export function knowledgeBaseChunking(chunkings: Record<string, unknown>[]): RunChunking {
  const chunked = chunkings.filter((c) => typeof c.strategy === 'string');
  const strategies = chunkings.map((c) => (typeof c.strategy === 'string' ? c.strategy : PREBUILT));
  const numbers = (key: string) =>
    chunked.map((c) => c[key]).filter((v): v is number => typeof v === 'number');
  return {
    strategy: shared(strategies),
    chunkSize: shared(numbers('chunkSize')),
    chunkOverlap: shared(numbers('chunkOverlap')),
  };
}
