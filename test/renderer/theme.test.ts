import { DEFAULT_THEME, mergeMantineTheme } from '@mantine/core';
import { describe, expect, it } from 'vitest';
import { contrastRatio, cssVariablesResolver, theme } from '../../src/renderer/src/theme';

describe('the studio theme', () => {
  const full = mergeMantineTheme(DEFAULT_THEME, theme);
  const { light, dark } = cssVariablesResolver(full);

  it('reads at WCAG AA (4.5:1): dimmed text, light badges, colored text in the dark scheme', () => {
    expect(contrastRatio(light['--mantine-color-dimmed']!, full.colors.gray[1])).toBeGreaterThanOrEqual(4.5);
    expect(contrastRatio(dark['--mantine-color-dimmed']!, full.colors.dark[5])).toBeGreaterThanOrEqual(4.5);
    for (const [name, shades] of Object.entries(full.colors)) {
      const badge = light[`--mantine-color-${name}-light-color`]!;
      expect(contrastRatio(badge, shades[1]), `${name} light badge`).toBeGreaterThanOrEqual(4.5);
      const text = dark[`--mantine-color-${name}-text`]!;
      expect(contrastRatio(text, full.colors.dark[5]), `${name} text, dark`).toBeGreaterThanOrEqual(4.5);
    }
  });
});
