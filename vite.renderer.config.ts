import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type UserConfig } from 'vite';

const repoRoot = fileURLToPath(new URL('.', import.meta.url));

/**
 * The studio UI build, shared by `npm run build:web` (served by `kbstudio serve`) and the renderer
 * entry of electron.vite.config.ts, so the browser and the desktop app run the same bundle.
 */
export const rendererConfig = {
  root: `${repoRoot}src/renderer`,
  // Relative asset URLs: the same files load from http://127.0.0.1:PORT/ and from inside app.asar.
  base: './',
  plugins: [react()],
  build: {
    outDir: `${repoRoot}out/renderer`,
    emptyOutDir: true,
    minify: true,
    // One bundle, loaded from the local server or the app's own files: no network to split it for.
    chunkSizeWarningLimit: 1000,
  },
} satisfies UserConfig;

export default defineConfig(rendererConfig);
