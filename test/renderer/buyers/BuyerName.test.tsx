import { MantineProvider } from '@mantine/core';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { BuyerName } from '../../../src/renderer/src/features/buyers/BuyerName';

const render = (name: string | null) =>
  renderToStaticMarkup(
    <MantineProvider>
      <BuyerName name={name} />
    </MantineProvider>,
  ).replace(/<style[\s\S]*?<\/style>/g, '');

describe('a test buyer’s name', () => {
  it('breaks a long name without spaces rather than widen the table, and keeps it whole in a title', () => {
    const name = 'b'.repeat(64);
    const html = render(name);
    // kb-break: overflow-wrap anywhere (styles.css); nowrap pushed Set credential and Query out of the card.
    expect(html).toMatch(/class="[^"]*\bkb-break\b/);
    expect(html).not.toContain('nowrap');
    expect(html).toContain(`title="${name}"`);
    expect(html).toContain(`>${name}</p>`);
  });

  it('names a wallet the studio does not hold', () => {
    const html = render(null);
    expect(html).toContain('>Outside wallet</p>');
    expect(html).not.toContain('title=');
  });
});
