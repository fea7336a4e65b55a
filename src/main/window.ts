import { BrowserWindow, dialog, nativeTheme, shell, type WebContents } from 'electron';
import { isAllowedPermission, isExternalWebUrl, isSameOrigin } from './navigationPolicy';

export const WINDOW_TITLE = 'KB Studio';

export interface MainWindowOptions {
  /** The studio page: the local server's URL (or the renderer dev server in `npm run dev`). */
  url: string;
  /** The built preload script (out/preload/index.cjs). */
  preload: string;
  /** Window icon; Linux only (macOS and Windows take it from the packaged app). */
  icon?: string;
}

export function createMainWindow({ url, preload, icon }: MainWindowOptions): BrowserWindow {
  const window = new BrowserWindow({
    width: 1280,
    height: 800,
    minWidth: 960,
    minHeight: 600,
    title: WINDOW_TITLE,
    show: false,
    autoHideMenuBar: true,
    ...(icon && process.platform === 'linux' ? { icon } : {}),
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#242424' : '#ffffff',
    webPreferences: {
      preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    },
  });
  guardNavigation(window.webContents, new URL(url).origin);
  confirmLeavingRunningJobs(window);
  window.once('ready-to-show', () => window.show());
  void window.loadURL(url);
  return window;
}

/**
 * The window only ever shows the studio's own origin. Links elsewhere open in the system browser
 * (http and https only); new windows are never created; no permission but the clipboard is granted.
 */
function guardNavigation(contents: WebContents, origin: string): void {
  contents.on('will-navigate', (event, target) => {
    if (isSameOrigin(target, origin)) return;
    event.preventDefault();
    openInBrowser(target);
  });
  contents.on('will-redirect', (event, target) => {
    if (!isSameOrigin(target, origin)) event.preventDefault();
  });
  contents.setWindowOpenHandler(({ url }) => {
    openInBrowser(url);
    return { action: 'deny' };
  });
  contents.session.setPermissionRequestHandler((_contents, permission, callback) =>
    callback(isAllowedPermission(permission)),
  );
}

/**
 * While a job runs the page refuses to unload (`useLeaveGuard` in the renderer), which Electron would
 * take as a silent "no": the creator is asked instead, and the window closes (or reloads) only if they
 * choose to.
 */
function confirmLeavingRunningJobs(window: BrowserWindow): void {
  window.webContents.on('will-prevent-unload', (event) => {
    const choice = dialog.showMessageBoxSync(window, {
      type: 'warning',
      title: WINDOW_TITLE,
      // The page asks for either reason (src/renderer/src/lib/leaveGuard.ts); it cannot say which here.
      message: 'A job is running, or changes are not saved',
      detail:
        'Closing the window quits KB Studio: a running job stops (an ingestion stops before storing anything; a push can be resumed later by pushing again) and changes not saved yet, such as prices, are lost. Reloading the page keeps a job running, but no longer shows its progress.',
      buttons: ['Stay', 'Leave anyway'],
      defaultId: 0,
      cancelId: 0,
      noLink: true,
    });
    // preventDefault here overrides the page's refusal: the window goes ahead.
    if (choice === 1) event.preventDefault();
  });
}

function openInBrowser(url: string): void {
  if (isExternalWebUrl(url)) void shell.openExternal(url);
}
