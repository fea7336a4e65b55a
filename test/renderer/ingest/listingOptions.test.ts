import { describe, expect, it } from 'vitest';
import { listingOptions } from '../../../src/renderer/src/features/ingest/listingOptions';

const listing = (id: string, title: string, documentCount: number) => ({ id, title, documentCount });

describe('listing picker options', () => {
  it('tells listings of one title apart: the id in the field, documents and id in the list', () => {
    expect(
      listingOptions([
        listing('lst_4fQx9KpZ2mTa7bWc', 'Handbook', 12),
        listing('lst_Zz81aaaaaaaaaaaa', 'Handbook', 1),
        listing('lst_Q2w3eeeeeeeeeeee', 'Case law', 0),
      ]),
    ).toEqual([
      { value: 'lst_4fQx9KpZ2mTa7bWc', label: 'Handbook · lst_4fQx', detail: '12 documents' },
      { value: 'lst_Zz81aaaaaaaaaaaa', label: 'Handbook · lst_Zz81', detail: '1 document' },
      { value: 'lst_Q2w3eeeeeeeeeeee', label: 'Case law', detail: '0 documents · lst_Q2w3' },
    ]);
  });

  it('gives the whole id when the start of it is not enough', () => {
    const labels = listingOptions([
      listing('lst_abcd1111', 'Notes', 1),
      listing('lst_abcd2222', 'Notes', 1),
    ]).map((o) => o.label);
    expect(labels).toEqual(['Notes · lst_abcd1111', 'Notes · lst_abcd2222']);
  });
});
