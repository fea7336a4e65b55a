import { createTheme, localStorageColorSchemeManager, Modal } from '@mantine/core';

export const theme = createTheme({
  primaryColor: 'indigo',
  defaultRadius: 'md',
  cursorType: 'pointer',
  headings: { fontWeight: '650' },
  components: {
    Modal: Modal.extend({
      defaultProps: { overlayProps: { backgroundOpacity: 0.45, blur: 2 } },
      styles: { title: { fontWeight: 650, fontSize: 'var(--mantine-font-size-lg)' } },
    }),
  },
});

/** The light/dark choice survives restarts (localStorage of the studio's origin). */
export const colorSchemeManager = localStorageColorSchemeManager({ key: 'kbstudio-color-scheme' });
