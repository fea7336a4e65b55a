import { describe, expect, it } from 'vitest';
import { listingPerTest } from '../../../helpers/listingPerTest';

const { ingest, services, listingId } = listingPerTest('JSON');

const stored = (source: string, chunkIndex: number) => ({
  source,
  format: 'json',
  documentId: expect.any(String),
  chunkIndex,
});

describe('JSON without a text field, as stored', () => {
  it('stores a record list wrapped in an object (it was refused: "no text was found")', async () => {
    const { outcome, chunks } = await ingest(
      'articles.json',
      '{"version":3,"articles":[{"title":"First article","body":"The body of the first article talks about rockets."},{"title":"Second","body":"Second body about submarines."}]}',
    );

    expect(outcome).toMatchObject({ status: 'ingested', chunks: 1 });
    expect(chunks).toEqual([
      {
        text: [
          'articles[0].title: First article',
          'articles[0].body: The body of the first article talks about rockets.',
          'articles[1].title: Second',
          'articles[1].body: Second body about submarines.',
        ].join('\n'),
        metadata: { item: 0, version: 3, ...stored('articles.json', 0) },
      },
    ]);
  });

  it('stores the strings inside arrays as text, so a query for them finds the item', async () => {
    const { chunks } = await ingest(
      'widget.json',
      '{"name":"Widget","features":["waterproof","shockproof"],"reviews":[{"user":"bob","comment":"Great product, very durable"}]}',
    );

    expect(chunks).toEqual([
      {
        text: [
          'name: Widget',
          'features: waterproof, shockproof',
          'reviews[0].user: bob',
          'reviews[0].comment: Great product, very durable',
        ].join('\n'),
        metadata: { item: 0, features: ['waterproof', 'shockproof'], ...stored('widget.json', 0) },
      },
    ]);
    const found = await services().retrieval.retrieve(
      { listingId: listingId(), query: 'waterproof shockproof durable', mode: 'lexical' },
      'studio',
    );
    expect(found.chunks.map((c) => c.sourceMetadata.source)).toEqual(['widget.json']);
  });
});
