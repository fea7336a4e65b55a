// Starts a worker thread written in TypeScript from the sources (tests, `npm run serve`, the CLI): the
// script named by workerData.tsWorkerEntry is loaded through tsx, the project's runtime TypeScript
// loader, for its own imports only (tsImport: the worker's other modules load as Node loads them).
// Plain JavaScript on purpose: this is what Node starts before any loader exists. The Electron build
// bundles TypeScript workers into plain .mjs files instead (copyWorkerFiles, electron.vite.config.ts).
import { workerData } from 'node:worker_threads';
import { tsImport } from 'tsx/esm/api';

await tsImport(workerData.tsWorkerEntry, import.meta.url);
