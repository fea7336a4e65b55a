import { MantineProvider } from '@mantine/core';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ChunkCard } from '../../../src/renderer/src/features/ingest/ChunkCard';

const render = (node: React.ReactNode) => renderToStaticMarkup(<MantineProvider>{node}</MantineProvider>);

describe('ChunkCard', () => {
  it('shows the position, token count, page and text, with the overlap set apart', () => {
    const html = render(
      <ChunkCard
        index={1}
        text="shared part. New text here."
        tokenCount={7}
        metadata={{ page: 3, source: 'paper.pdf', chunkIndex: 1 }}
        overlap={12}
      />,
    );
    expect(html).toContain('aria-label="Chunk 2"');
    const text = html
      .replace(/<style[\s\S]*?<\/style>/g, '')
      .replace(/<!-- -->/g, '')
      .replace(/<[^>]+>/g, '|');
    expect(text).toContain('|#2|');
    expect(text).toContain('|7 tokens|');
    expect(text).toContain('|Page: 3|');
    expect(html).not.toContain('paper.pdf');
    expect(html).toMatch(
      /title="Shared with the previous chunk \(overlap\)"[^>]*>shared part\.<\/span> New text here\./,
    );
  });
});
