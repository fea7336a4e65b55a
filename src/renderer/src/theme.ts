import {
  createTheme,
  darken,
  lighten,
  localStorageColorSchemeManager,
  luminance,
  Modal,
  type CSSVariablesResolver,
} from '@mantine/core';

export const theme = createTheme({
  primaryColor: 'indigo',
  // White on indigo 6 is 4.3:1; indigo 7 reads at AA on filled buttons and badges.
  primaryShade: { light: 7, dark: 8 },
  defaultRadius: 'md',
  cursorType: 'pointer',
  headings: { fontWeight: '650' },
  components: {
    Modal: Modal.extend({
      defaultProps: {
        overlayProps: { backgroundOpacity: 0.45, blur: 2 },
        // Mantine's × has no name of its own: a screen reader would announce a bare "button". Not
        // "Close …": a dialog's own Close button (Re-ingest's, once the job is done) keeps its name.
        closeButtonProps: { 'aria-label': 'Dismiss dialog' },
      },
      styles: { title: { fontWeight: 650, fontSize: 'var(--mantine-font-size-lg)' } },
    }),
  },
});

/** WCAG AA for body text. */
const AA = 4.5;

export function contrastRatio(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

/** `color` darkened (or lightened) in small steps until it reads at AA on `background`. */
export function readableOn(color: string, background: string, direction: 'darker' | 'lighter'): string {
  const shift = direction === 'darker' ? darken : lighten;
  let result = color;
  for (let amount = 0.05; contrastRatio(result, background) < AA && amount < 1; amount += 0.05) {
    result = shift(color, amount);
  }
  return result;
}

/**
 * Mantine's defaults put some text under WCAG AA: dimmed text (gray 6 on white, 3.3:1; dark 2 on the
 * dark body, 4.0:1), white on the primary color (4.3:1) and the text of light badges and alerts in the warm colors (yellow 9 on yellow 1,
 * 2.7:1). Each is made just dark (or light) enough to read at 4.5:1 on the backgrounds it sits on,
 * so the look stays Mantine's.
 */
export const cssVariablesResolver: CSSVariablesResolver = (t) => {
  const lightColors: Record<string, string> = {};
  const darkColors: Record<string, string> = {};
  const lightShade = typeof t.primaryShade === 'number' ? t.primaryShade : t.primaryShade.light;
  for (const [name, shades] of Object.entries(t.colors)) {
    // A light variant's text (color 9) sits on its background (color 1).
    lightColors[`--mantine-color-${name}-light-color`] = readableOn(shades[9], shades[1], 'darker');
    // Colored text (`c="red"`, the filled shade in the light scheme) on white, hovered rows and table
    // headers (gray 1): Test buyers' "404 listing_not_found" (red 7) was 3.8:1, "200 OK" (teal 7) 3.1:1.
    lightColors[`--mantine-color-${name}-text`] = readableOn(shades[lightShade], t.colors.gray[1], 'darker');
    // Colored text (`c="indigo"`, color 4 in the dark scheme) on cards and inset cards (dark 6, dark 5):
    // the Pricing preview's price was 3.8:1.
    darkColors[`--mantine-color-${name}-text`] = readableOn(shades[4], t.colors.dark[5], 'lighter');
  }
  return {
    variables: {},
    light: {
      ...lightColors,
      // Dimmed text also sits on the table headers' and hovered rows' gray 1.
      '--mantine-color-dimmed': readableOn(t.colors.gray[6], t.colors.gray[1], 'darker'),
      // A placeholder says what a field takes ("Search title, description…", "Not set"): gray 5 on a
      // white field was 2.1:1. Read at AA, it still reads as a placeholder: lighter than typed text.
      '--mantine-color-placeholder': readableOn(t.colors.gray[5], t.white, 'darker'),
    },
    dark: {
      ...darkColors,
      // Cards and table headers are dark 6, hovered rows and inset cards dark 5.
      '--mantine-color-dimmed': readableOn(t.colors.dark[2], t.colors.dark[5], 'lighter'),
      // Fields are dark 6 (filled ones dark 5): dark 3 was 2.5:1 there.
      '--mantine-color-placeholder': readableOn(t.colors.dark[3], t.colors.dark[5], 'lighter'),
    },
  };
};

/** The light/dark choice survives restarts (localStorage of the studio's origin). */
export const colorSchemeManager = localStorageColorSchemeManager({ key: 'kbstudio-color-scheme' });
