/**
 * `npm run dev`: electron-vite serves the renderer with hot reload and launches Electron with
 * ELECTRON_RENDERER_URL. electron.vite.config.ts picks the studio server's port and token up front
 * and passes them through these variables, so its dev server can proxy /studio and /v1 to the
 * server and put the token in the page, as the server itself does in a build.
 */
export const DEV_PORT_ENV = 'KBSTUDIO_DEV_PORT';
export const DEV_TOKEN_ENV = 'KBSTUDIO_DEV_TOKEN';

export interface DevServerLink {
  rendererUrl: string;
  port: number;
  token: string;
}

export function devServerLink(env: NodeJS.ProcessEnv, isPackaged: boolean): DevServerLink | undefined {
  const rendererUrl = env.ELECTRON_RENDERER_URL;
  const port = Number(env[DEV_PORT_ENV]);
  const token = env[DEV_TOKEN_ENV];
  if (isPackaged || !rendererUrl || !token || !Number.isInteger(port) || port <= 0) return undefined;
  return { rendererUrl, port, token };
}
