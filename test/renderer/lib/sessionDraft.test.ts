import { describe, expect, it } from 'vitest';
import { createSessionDraft, readDraft, writeDraft } from '../../../src/renderer/src/lib/sessionDraft';

interface Form {
  query: string;
  topK: number;
}
const EMPTY: Form = { query: '', topK: 5 };

describe('drafts kept for the session, per listing (Playground, Evaluation)', () => {
  it('keeps each listing’s draft, and starts one not written yet from the initial value', () => {
    const store = createSessionDraft(EMPTY);
    expect(readDraft(store, 'lst_a')).toBe(EMPTY);
    writeDraft(store, 'lst_a', { query: 'notice period', topK: 7 });
    expect(readDraft(store, 'lst_a')).toEqual({ query: 'notice period', topK: 7 });
    // Results belong to their listing: another one has none.
    expect(readDraft(store, 'lst_b')).toBe(EMPTY);
  });

  it('applies an update to the draft as it is when written, so two in a row both count', () => {
    const store = createSessionDraft(EMPTY);
    writeDraft(store, 'lst_a', (f) => ({ ...f, query: 'rent' }));
    writeDraft(store, 'lst_a', (f) => ({ ...f, topK: 9 }));
    expect(readDraft(store, 'lst_a')).toEqual({ query: 'rent', topK: 9 });
  });

  it('starts a listing without a draft from the last one written, with carryOver', () => {
    const store = createSessionDraft(EMPTY, { carryOver: true });
    writeDraft(store, 'lst_a', { query: 'notice period', topK: 7 });
    expect(readDraft(store, 'lst_b')).toEqual({ query: 'notice period', topK: 7 });
    writeDraft(store, 'lst_b', (f) => ({ ...f, query: 'rent' }));
    expect(readDraft(store, 'lst_b')).toEqual({ query: 'rent', topK: 7 });
    // Each keeps its own once written.
    expect(readDraft(store, 'lst_a')).toEqual({ query: 'notice period', topK: 7 });
  });

  it('writes nothing without a listing, and tells those listening of each write', () => {
    const store = createSessionDraft(EMPTY);
    let told = 0;
    store.listeners.add(() => told++);
    writeDraft(store, null, { query: 'lost', topK: 1 });
    expect(readDraft(store, null)).toBe(EMPTY);
    expect(told).toBe(0);
    writeDraft(store, 'lst_a', { query: 'kept', topK: 1 });
    expect(told).toBe(1);
  });
});
