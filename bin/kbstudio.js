#!/usr/bin/env node
// Runs the CLI from its prebuilt bundle (dist/cli/kbstudio.mjs, `npm run build:cli`, built on install)
// while the bundle is newer than every source it was built from; otherwise from the TypeScript sources
// through tsx, so `npx kbstudio` works right after `npm install` and always runs the code in the tree.
// KBSTUDIO_FROM_SOURCE=1 forces the sources.
import { readFileSync, statSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const bundle = new URL('dist/cli/kbstudio.mjs', root);

function bundleIsFresh() {
  if (process.env.KBSTUDIO_FROM_SOURCE) return false;
  try {
    const built = statSync(bundle).mtimeMs;
    const inputs = JSON.parse(readFileSync(new URL('dist/cli/inputs.json', root), 'utf8'));
    return inputs.every((file) => statSync(new URL(file, root)).mtimeMs <= built);
  } catch {
    return false;
  }
}

let cli;
if (bundleIsFresh()) {
  cli = await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import('../src/cli/main.ts');
}
await cli.main(process.argv);
