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

describe('the studio theme, light scheme colored text and placeholders', () => {
  const full = mergeMantineTheme(DEFAULT_THEME, theme);
  const { light, dark } = cssVariablesResolver(full);

  it('reads colored text (c="red", c="teal") at AA on white and on hovered rows in the light scheme', () => {
    for (const name of Object.keys(full.colors)) {
      const text = light[`--mantine-color-${name}-text`];
      expect(text, `${name} text, light`).toBeDefined();
      expect(contrastRatio(text!, full.colors.gray[1]), `${name} text, light`).toBeGreaterThanOrEqual(4.5);
      expect(contrastRatio(text!, full.white), `${name} text, light`).toBeGreaterThanOrEqual(4.5);
    }
  });

  it('reads placeholders at AA on the fields of both schemes, still lighter than typed text', () => {
    const lightPlaceholder = light['--mantine-color-placeholder']!;
    const darkPlaceholder = dark['--mantine-color-placeholder']!;
    expect(contrastRatio(lightPlaceholder, full.white)).toBeGreaterThanOrEqual(4.5);
    expect(contrastRatio(darkPlaceholder, full.colors.dark[6])).toBeGreaterThanOrEqual(4.5);
    expect(contrastRatio(darkPlaceholder, full.colors.dark[5])).toBeGreaterThanOrEqual(4.5);
    // Typed text is black (light) and dark 0 (dark): the placeholder stays the fainter of the two.
    expect(contrastRatio(lightPlaceholder, full.white)).toBeLessThan(contrastRatio(full.black, full.white));
    expect(contrastRatio(darkPlaceholder, full.colors.dark[6])).toBeLessThan(
      contrastRatio(full.colors.dark[0], full.colors.dark[6]),
    );
  });
});
