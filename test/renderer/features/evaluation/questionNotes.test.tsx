import { MantineProvider } from '@mantine/core';
import type { ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { missedLine, MissedIds } from '../../../../src/renderer/src/features/evaluation/MissedIds';
import { UnknownSourcesAlert } from '../../../../src/renderer/src/features/evaluation/UnknownSourcesAlert';

const render = (node: ReactNode) => renderToStaticMarkup(<MantineProvider>{node}</MantineProvider>);
/** The text shown: Mantine's style elements and the tags left out, entities decoded. */
const textOf = (html: string) =>
  html
    .replace(/<style[^>]*>[\s\S]*?<\/style>/g, '')
    .replace(/<[^>]+>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .trim();

describe('missed ids of a question', () => {
  it('writes out the first three and counts the others', () => {
    expect(missedLine(['a'])).toBe('a');
    expect(missedLine(['a', 'b', 'c'])).toBe('a, b, c');
    expect(missedLine(['a', 'b', 'c', 'd', 'e'])).toBe('a, b, c and 2 more');
  });

  it('lets a long id wrap inside itself, with every id in the title', () => {
    const ids = ['<dbpedia:Prime_Minister_of_Canada>', '<dbpedia:B._F._Skinner>', 'c', 'd'];
    const html = render(<MissedIds missed={ids} />);
    expect(html).toContain('overflow-wrap:anywhere');
    expect(html).toContain(`title="${ids.join(', ').replace(/</g, '&lt;').replace(/>/g, '&gt;')}"`);
    expect(textOf(html)).toBe(
      'Missed: <dbpedia:Prime_Minister_of_Canada>, <dbpedia:B._F._Skinner>, c and 1 more',
    );
  });
});

describe('expected sources that name no document', () => {
  it('names each source and its question, and whether it was scored', () => {
    const text = textOf(
      render(
        <UnknownSourcesAlert
          unknown={[
            { id: 'q2', question: 'What is an abomination?', source: 'nonexistent.pdf', scored: false },
            { id: 'q5', question: 'who signs', source: 'Lease.pdf', scored: true, suggestion: 'lease.pdf' },
          ]}
        />,
      ),
    );
    expect(text).toContain('2 expected sources match no document of this listing');
    expect(text).toContain('nonexistent.pdf for “What is an abomination?”: left out of the metrics');
    expect(text).toContain(
      'Lease.pdf for “who signs”: scored by its expected text only (did you mean lease.pdf?)',
    );
    expect(text).not.toContain('left out of the metrics (did you mean');
    expect(text).toContain('1 question was not scored.');
  });

  it('shows nothing when every expected source was found', () => {
    expect(textOf(render(<UnknownSourcesAlert unknown={[]} />))).toBe('');
  });
});
