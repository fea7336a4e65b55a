import { describe, expect, it } from 'vitest';
import { nearestSources } from '../../../../src/core/retrieve/eval/nearestSource';

/** The names of `contracts/lease.pdf`, `handbook.md` and `notes` (each source and each end of its path). */
const NAMES = new Set(['contracts/lease.pdf', 'lease.pdf', 'handbook.md', 'notes']);
const suggest = (source: string) => nearestSources([source], NAMES).get(source);

describe('the document an unknown expected source most likely meant', () => {
  it('finds the same name in other letter case', () => {
    expect(suggest('Lease.PDF')).toBe('lease.pdf');
    expect(suggest('Contracts/Lease.pdf')).toBe('contracts/lease.pdf');
  });

  it('finds the same name with another extension, or none', () => {
    expect(suggest('lease.docx')).toBe('lease.pdf');
    expect(suggest('lease')).toBe('lease.pdf');
    expect(suggest('notes.txt')).toBe('notes');
  });

  it('finds a name a few typing mistakes away, and nothing farther', () => {
    expect(suggest('leese.pdf')).toBe('lease.pdf');
    expect(suggest('handbok.md')).toBe('handbook.md');
    expect(suggest('hnadbook.md')).toBe('handbook.md');
    expect(suggest('contract/lease.pdf')).toBe('contracts/lease.pdf');
    expect(suggest('nonexistent.pdf')).toBeUndefined();
    expect(suggest('faq.md')).toBeUndefined();
  });

  it('compares only names of as many path parts as the source', () => {
    // The creator wrote a folder: the suggestion names one too (the same file in another folder).
    expect(suggest('x/lease.pdf')).toBe('contracts/lease.pdf');
    expect(nearestSources(['a/b/lease.pdf'], NAMES).size).toBe(0);
  });

  it('breaks ties by the name sorted first, and suggests once per distinct source', () => {
    const names = new Set(['guide-2023.md', 'guide-2024.md']);
    const found = nearestSources(['guide-2025.md', 'guide-2025.md', 'Guide-2024.md'], names);
    expect([...found]).toEqual([
      ['guide-2025.md', 'guide-2023.md'],
      ['Guide-2024.md', 'guide-2024.md'],
    ]);
  });

  it('suggests for the first 50 distinct sources only', () => {
    const unknown = Array.from({ length: 51 }, (_, i) => `Lease-${i}.pdf`);
    const names = new Set(unknown.map((s) => s.toLowerCase()));
    const found = nearestSources(unknown, names);
    expect(found.size).toBe(50);
    expect(found.get('Lease-49.pdf')).toBe('lease-49.pdf');
    expect(found.has('Lease-50.pdf')).toBe(false);
  });
});
