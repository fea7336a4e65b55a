/**
 * The renderer's contract with the preload script: what `window.kbstudio` offers inside the desktop
 * app. In a browser (`kbstudio serve`) there is no preload and `window.kbstudio` is undefined.
 */
export interface KbStudioBridge {
  /** Node's `process.platform` of the machine running the app. */
  readonly platform: string;
  /** How this page's renderer runs, as Electron reports it to the preload script. */
  readonly isolation: {
    readonly sandboxed: boolean;
    readonly contextIsolated: boolean;
  };
  readonly versions: {
    readonly electron: string;
    readonly chrome: string;
    readonly node: string;
  };
}

declare global {
  interface Window {
    readonly kbstudio?: KbStudioBridge;
  }
}
