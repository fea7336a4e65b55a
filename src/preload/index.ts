import { contextBridge } from 'electron';
import type { KbStudioBridge } from './index.d';

/**
 * Runs sandboxed, before the page, in an isolated world. It hands the page plain values only:
 * no ipcRenderer, no Node API.
 */
const bridge = {
  platform: process.platform,
  isolation: {
    sandboxed: process.sandboxed === true,
    contextIsolated: process.contextIsolated === true,
  },
  versions: {
    electron: process.versions.electron ?? '',
    chrome: process.versions.chrome ?? '',
    node: process.versions.node,
  },
} satisfies KbStudioBridge;

contextBridge.exposeInMainWorld('kbstudio', bridge);
