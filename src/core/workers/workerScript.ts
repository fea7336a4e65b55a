/**
 * How to start a worker script. Plain JavaScript (.mjs, .js) starts as it is. A script written in
 * TypeScript (.ts) starts through tsWorkerBootstrap.mjs, which loads it with tsx: that is how it runs
 * from the sources (tests, `npm run serve`, the CLI bundle, whose workers are the source files). The
 * Electron build has bundled it into a plain .mjs file by then (copyWorkerFiles in
 * electron.vite.config.ts), so the first case applies there.
 */
export function workerStart(script: URL): { file: URL; workerData?: { tsWorkerEntry: string } } {
  if (!/\.m?ts$/.test(script.pathname)) return { file: script };
  return {
    file: new URL('./tsWorkerBootstrap.mjs', import.meta.url),
    workerData: { tsWorkerEntry: script.href },
  };
}
