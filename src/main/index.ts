import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { app, BrowserWindow, dialog, safeStorage } from 'electron';
import { APP_NAME } from '../cli/dataDir';
import { expandHome } from '../core/homePath';
import { openServices, type StudioServices } from '../db/services';
import { createServer, type KbServer } from '../server/createServer';
import { studioLink } from '../server/studioSession';
import { devServerLink } from './devServer';
import { describeStartupError, resolveNativeBinding } from './nativeBinding';
import { chooseSecretBox } from './secretBox';
import { createMainWindow } from './window';
import { relaunchAction } from './windowOnRelaunch';

/**
 * The desktop app's composition root: the same server `kbstudio serve` runs, on 127.0.0.1 and a
 * free port, and a window on it. Everything else lives in server/, core/ and db/.
 */
interface RunningStudio {
  services: StudioServices;
  server: KbServer;
  /** What the window loads. */
  pageUrl: string;
}

const log = (message: string) => console.warn(`[kbstudio] ${message}`);
let studio: RunningStudio | undefined;

// The data directory is the userData folder: KBSTUDIO_DATA_DIR, else <appData>/KB Studio, the CLI's
// default too. Set before anything reads it, so the single-instance lock is per data directory.
const dataDirOverride = process.env.KBSTUDIO_DATA_DIR;
app.setPath(
  'userData',
  dataDirOverride ? resolve(expandHome(dataDirOverride)) : join(app.getPath('appData'), APP_NAME),
);

if (!app.requestSingleInstanceLock()) {
  // Another window already serves this data directory: it gets focused instead (second-instance).
  app.quit();
} else {
  app.on('second-instance', showWindow);
  app.on('activate', showWindow);
  // On macOS too, unlike its custom: the server and its jobs live in this process, and the dialog and
  // docs/desktop.md say that closing the window stops them. A Dock icon without a window would keep a
  // job running unseen and the studio's port open.
  app.on('window-all-closed', () => app.quit());
  // Quitting waits once for the server and the database to close, then quits again.
  app.on('will-quit', (event) => {
    if (!studio) return;
    event.preventDefault();
    const running = studio;
    studio = undefined;
    void stopStudio(running).finally(() => app.quit());
  });
  void app.whenReady().then(async () => {
    try {
      studio = await startStudio();
      openWindow(studio);
    } catch (err) {
      log(err instanceof Error ? (err.stack ?? err.message) : String(err));
      dialog.showErrorBox('KB Studio could not start', describeStartupError(err));
      app.exit(1);
    }
  });
}

async function startStudio(): Promise<RunningStudio> {
  const services = openServices(app.getPath('userData'), {
    environment: process.env,
    secretBox: chooseSecretBox(safeStorage, process.platform, log),
    nativeBinding: resolveNativeBinding({
      isPackaged: app.isPackaged,
      appPath: app.getAppPath(),
      electronVersion: process.versions.electron,
    }),
  });
  try {
    const dev = devServerLink(process.env, app.isPackaged);
    const studioToken = dev?.token ?? randomBytes(32).toString('base64url');
    const server = createServer({
      services,
      studioToken,
      version: app.getVersion(),
      rendererDir: join(import.meta.dirname, '../renderer'),
      log,
    });
    const { url } = await server.listen(dev?.port ?? 0, '127.0.0.1');
    // Large knowledge bases get their search codes loaded now, a slice at a time, not on the first query.
    services.warmSearch().catch((err: unknown) => log(`Search warm-up stopped: ${(err as Error).message}`));
    // Copies of files whose ingestion was killed before its commit are dropped, off the request path.
    services
      .pruneSources()
      .catch((err: unknown) => log(`Kept source files not tidied: ${(err as Error).message}`));
    // The window opens the studio's link, which signs its session in (server/studioSession.ts).
    return { services, server, pageUrl: dev?.rendererUrl ?? studioLink(url, studioToken) };
  } catch (err) {
    services.close();
    throw err;
  }
}

/** A second launch, or a click on the Dock icon: show this instance's window, opening one if needed. */
function showWindow(): void {
  const [window] = BrowserWindow.getAllWindows();
  const action = relaunchAction(window, studio !== undefined);
  if (action === 'open' && studio) openWindow(studio);
  if (action === 'restore') window?.restore();
  if (action === 'restore' || action === 'focus') window?.focus();
}

function openWindow(running: RunningStudio): void {
  createMainWindow({
    url: running.pageUrl,
    preload: join(import.meta.dirname, '../preload/index.cjs'),
    icon: join(app.getAppPath(), 'resources', 'icon.png'),
  });
}

async function stopStudio(running: RunningStudio): Promise<void> {
  try {
    await running.server.close();
  } catch (err) {
    log(`closing the server failed: ${String(err)}`);
  } finally {
    running.services.close();
  }
}
