import { describe, expect, it } from 'vitest';
import {
  expectedQuestionSet,
  parseQuestionFile,
  runEvaluation,
  withKnownSources,
  type RunSettings,
} from '../../../../src/core/retrieve/eval/runs';
import type { Chunk } from '../../../../src/shared/retrieval';

const SETTINGS: RunSettings = {
  mode: 'lexical',
  k: 10,
  embeddingModel: 'kbs-offline-hybrid-v1',
  documentCount: 2,
  chunkCount: 2,
  dataset: 'hand-written questions',
};

const chunk = (source: string, text: string, score: number): Chunk =>
  ({ text, score, sourceMetadata: { source, chunkIndex: 0 } }) as unknown as Chunk;

/** A listing of two documents, `policies/lease.md` and `faq.md`, whatever the query. */
const search = async () => ({
  chunks: [
    chunk('policies/lease.md', 'The notice period is three months.', 0.9),
    chunk('faq.md', 'Ask us.', 0.4),
  ],
  latencyMs: 1,
});
const documentSources = () => ['faq.md', 'policies/lease.md'];

describe('question files', () => {
  it('names the columns a CSV lacks, and those it found, rather than blaming its first row', () => {
    expect(() => parseQuestionFile('bad.csv', 'q,answer\nwho signs,lease.pdf\n')).toThrow(
      'bad.csv: no "question" column in its header (found "q", "answer"); the first line must name a "question" column and an "expected_source" or "expected_text" column (or both).',
    );
    expect(() => parseQuestionFile('bad.csv', 'question,answer\nwho signs,lease.pdf\n')).toThrow(
      'bad.csv: no "expected_source" or "expected_text" column in its header (found "question", "answer"); the first line must name a "question" column and an "expected_source" or "expected_text" column (or both).',
    );
  });

  it('reads a CSV whose header is written in camel case or with spaces', () => {
    expect(
      parseQuestionFile('ok.csv', 'Question,expectedSource,Expected Text\nwho signs,lease.pdf,\n'),
    ).toEqual([{ question: 'who signs', expectedSource: 'lease.pdf', expectedText: undefined }]);
  });

  it('names the keys a JSONL line has when it has no question, by its line number', () => {
    expect(() => parseQuestionFile('q.jsonl', '\n{"q":"who signs","expected_source":"lease.pdf"}\n')).toThrow(
      'q.jsonl line 2: no "question" (found "q", "expected_source");',
    );
    expect(parseQuestionFile('q.jsonl', '{"question":"who signs","expectedText":"the tenant"}\n')).toEqual([
      { question: 'who signs', expectedSource: undefined, expectedText: 'the tenant' },
    ]);
  });
});

describe('expected sources that name no document', () => {
  it('leaves a question expecting an unknown source out of the metrics and reports it', async () => {
    const set = expectedQuestionSet([
      { question: 'notice period', expectedSource: 'lease.md' },
      { question: 'What is an abomination?', expectedSource: 'nonexistent.pdf' },
    ]);
    const report = await runEvaluation({ set, settings: SETTINGS, documentSources, search });
    expect(report.unknownSources).toEqual([
      { id: 'q2', question: 'What is an abomination?', source: 'nonexistent.pdf', scored: false },
    ]);
    expect(report.questions.map((q) => q.id)).toEqual(['q1']);
    expect(report.metrics).toMatchObject({ queries: 1, skipped: 0, mrr: 1 });
  });

  it('scores a question with an unknown source by its expected text alone', async () => {
    const set = expectedQuestionSet([
      { question: 'notice period', expectedSource: 'lease.pdf', expectedText: 'no such words' },
    ]);
    const report = await runEvaluation({ set, settings: SETTINGS, documentSources, search });
    expect(report.unknownSources).toEqual([
      { id: 'q1', question: 'notice period', source: 'lease.pdf', scored: true, suggestion: 'lease.md' },
    ]);
    expect(report.questions[0]).toMatchObject({ reciprocalRank: 0, missed: ['text: no such words'] });
  });

  it('matches a document by its whole source or the end of its path, as retrieval hits do', () => {
    const set = expectedQuestionSet([
      { question: 'a', expectedSource: 'policies/lease.md' },
      { question: 'b', expectedSource: 'lease.md' },
      { question: 'c', expectedSource: 'icies/lease.md' },
      { question: 'd', expectedText: 'three months' },
    ]);
    const checked = withKnownSources(set, documentSources);
    expect(checked.unknownSources.map((u) => u.source)).toEqual(['icies/lease.md']);
    expect(checked.set.queries.map((q) => q.id)).toEqual(['q1', 'q2', 'q4']);
  });

  it('refuses a run in which no question is left to score, naming the sources', async () => {
    const set = expectedQuestionSet([
      { question: 'What is an abomination?', expectedSource: 'nonexistent.pdf' },
    ]);
    await expect(runEvaluation({ set, settings: SETTINGS, documentSources, search })).rejects.toThrow(
      'No question can be scored: no document of the listing is named "nonexistent.pdf".',
    );
  });

  it('suggests the document an unknown source most likely meant, in the report and the refusal', async () => {
    const unknown = [
      { question: 'notice period', expectedSource: 'Policies/Lease.md' },
      { question: 'ask', expectedSource: 'fqa.md' },
    ];
    const set = expectedQuestionSet(unknown);
    const withKnown = expectedQuestionSet([...unknown, { question: 'notice', expectedSource: 'lease.md' }]);
    expect(withKnownSources(withKnown, documentSources).unknownSources).toEqual([
      {
        id: 'q1',
        question: 'notice period',
        source: 'Policies/Lease.md',
        scored: false,
        suggestion: 'policies/lease.md',
      },
      { id: 'q2', question: 'ask', source: 'fqa.md', scored: false, suggestion: 'faq.md' },
    ]);
    await expect(runEvaluation({ set, settings: SETTINGS, documentSources, search })).rejects.toThrow(
      'No question can be scored: no document of the listing is named "Policies/Lease.md" (did you mean "policies/lease.md"?) or "fqa.md" (did you mean "faq.md"?).',
    );
  });

  it('reads no documents for a set without expected sources', async () => {
    const set = expectedQuestionSet([{ question: 'notice period', expectedText: 'three months' }]);
    const report = await runEvaluation({
      set,
      settings: SETTINGS,
      documentSources: () => {
        throw new Error('not asked');
      },
      search,
    });
    expect(report.unknownSources).toEqual([]);
    expect(report.metrics.mrr).toBe(1);
  });
});
