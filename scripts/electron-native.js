#!/usr/bin/env node
/**
 * Builds better-sqlite3 for Electron without touching node_modules.
 *
 * node_modules/better-sqlite3 stays compiled for plain Node (the CLI, the tests, `kbstudio serve`).
 * Electron has a different native ABI, so `npm start` / `npm run dev` need their own build: this
 * script compiles a temporary copy of the package against Electron's headers with node-gyp and
 * keeps only the result, .cache/electron-native/<electron version>/better_sqlite3.node, which
 * src/main/nativeBinding.ts hands to better-sqlite3. An existing build is reused.
 *
 * Usage: node scripts/electron-native.js [--force] [--arch=<arch>]
 * Packaged apps do not use this: electron-builder rebuilds their node_modules (install-app-deps).
 */
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ELECTRON_HEADERS_URL = 'https://electronjs.org/headers';
const BINDING_FILE = 'better_sqlite3.node';
const NETWORK_FAILURE =
  /network connectivity|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|getaddrinfo|fetch failed|socket hang up/i;

/** The Electron version this repository installs (node_modules/electron/package.json). */
export function electronVersion(root) {
  const file = join(root, 'node_modules', 'electron', 'package.json');
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm install first.`);
  return JSON.parse(readFileSync(file, 'utf8')).version;
}

/** Where the Electron build of better-sqlite3 lives; src/main/nativeBinding.ts reads the same path. */
export function cachedBindingPath(root, version) {
  return join(root, '.cache', 'electron-native', version, BINDING_FILE);
}

/** node-gyp's arguments for compiling against Electron's headers instead of Node's. */
export function nodeGypArgs({ version, arch, devdir }) {
  return [
    'rebuild',
    '--release',
    `--target=${version}`,
    `--arch=${arch}`,
    `--dist-url=${ELECTRON_HEADERS_URL}`,
    '--runtime=electron',
    `--devdir=${devdir}`,
    '--jobs=max',
  ];
}

/** Runs node-gyp in `cwd`, echoing its output and keeping it for the error message. */
export function runNodeGyp(args, cwd) {
  const require = createRequire(import.meta.url);
  const bin = require.resolve('node-gyp/bin/node-gyp.js');
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (stream, sink) =>
      stream.on('data', (chunk) => {
        output += chunk;
        sink.write(chunk);
      });
    keep(child.stdout, process.stdout);
    keep(child.stderr, process.stderr);
    child.on('error', (err) => resolvePromise({ code: 1, output: `${output}\n${err.message}` }));
    child.on('close', (code) => resolvePromise({ code: code ?? 1, output }));
  });
}

/**
 * Returns the process exit code. `run` and `log` are replaceable for tests; nothing else is read
 * from outside `root`.
 */
export async function buildElectronBinding({
  root,
  arch = process.arch,
  force = false,
  run = runNodeGyp,
  log = (message) => console.log(message),
  error = (message) => console.error(message),
}) {
  let version;
  try {
    version = electronVersion(root);
  } catch (err) {
    error(`electron-native: ${err.message}`);
    return 1;
  }
  const target = cachedBindingPath(root, version);
  if (existsSync(target) && !force) {
    log(`electron-native: better-sqlite3 for Electron ${version} is already built (${target}).`);
    return 0;
  }
  const source = join(root, 'node_modules', 'better-sqlite3');
  if (!existsSync(join(source, 'binding.gyp'))) {
    error(`electron-native: ${source} is missing or incomplete: run npm install first.`);
    return 1;
  }

  const work = mkdtempSync(join(tmpdir(), 'kbstudio-electron-native-'));
  try {
    const copy = join(work, 'better-sqlite3');
    // Everything but the Node build output, so node-gyp starts clean and node_modules is only read.
    const nodeBuild = join(source, 'build');
    cpSync(source, copy, {
      recursive: true,
      filter: (path) => path !== nodeBuild && !path.startsWith(nodeBuild + sep),
    });
    log(`electron-native: compiling better-sqlite3 for Electron ${version} (${arch}) in ${copy}`);
    const devdir = join(root, '.cache', 'electron-native', 'headers');
    const result = await run(nodeGypArgs({ version, arch, devdir }), copy);
    const built = join(copy, 'build', 'Release', BINDING_FILE);
    if (result.code !== 0 || !existsSync(built)) {
      error(failureMessage(version, arch, result));
      return 1;
    }
    mkdirSync(dirname(target), { recursive: true });
    const partial = `${target}.partial`;
    copyFileSync(built, partial);
    renameSync(partial, target);
    log(`electron-native: wrote ${target}`);
    return 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function failureMessage(version, arch, result) {
  const lines = [
    `electron-native: could not build better-sqlite3 for Electron ${version} (${arch}); node-gyp exited with code ${result.code}.`,
  ];
  if (NETWORK_FAILURE.test(result.output)) {
    lines.push(
      `Electron's headers could not be downloaded from ${ELECTRON_HEADERS_URL} (offline or blocked?).`,
      'Connect to the internet and run `node scripts/electron-native.js` again.',
    );
  } else {
    lines.push(
      'node-gyp needs Python 3 and a C++ compiler (build-essential, Xcode tools, or Visual Studio Build Tools).',
    );
  }
  lines.push(
    'The CLI, the tests and `kbstudio serve` do not need this build; only the desktop app from source does (npm start, npm run dev).',
  );
  return lines.join('\n');
}

const invokedDirectly = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const args = process.argv.slice(2);
  const archArg = args.find((a) => a.startsWith('--arch='));
  const code = await buildElectronBinding({
    root: fileURLToPath(new URL('..', import.meta.url)),
    force: args.includes('--force'),
    arch: archArg ? archArg.slice('--arch='.length) : process.arch,
  });
  process.exit(code);
}
