#!/usr/bin/env node
// Runs the CLI from its prebuilt bundle (dist/cli/kbstudio.mjs, `npm run build:cli`, built on install)
// while the bundle is newer than every source it was built from; otherwise from the TypeScript sources
// through tsx, so `npx kbstudio` works right after `npm install` and always runs the code in the tree.
// KBSTUDIO_FROM_SOURCE=1 forces the sources.
import { readFileSync, statSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const bundle = new URL('dist/cli/kbstudio.mjs', root);

/** Why the sources run instead of the bundle ('asked', 'missing', 'stale'), or undefined to run the bundle. */
function reasonForSources() {
  if (process.env.KBSTUDIO_FROM_SOURCE) return 'asked';
  let built;
  try {
    built = statSync(bundle).mtimeMs;
  } catch {
    return 'missing';
  }
  try {
    const inputs = JSON.parse(readFileSync(new URL('dist/cli/inputs.json', root), 'utf8'));
    return inputs.every((file) => statSync(new URL(file, root)).mtimeMs <= built) ? undefined : 'stale';
  } catch {
    return 'stale';
  }
}

// Starting from the sources takes a second or more longer: say why, and how to have the bundle again,
// unless the sources were asked for. main() prints the note on a terminal only, never with --json.
const NOTES = {
  missing:
    'kbstudio: no prebuilt CLI (dist/cli/kbstudio.mjs): running from the TypeScript sources, a slower start. Build it with `npm run build:cli`.',
  stale:
    'kbstudio: the prebuilt CLI (dist/cli/kbstudio.mjs) is older than its sources: running from the sources, a slower start. Rebuild it with `npm run build:cli`.',
};

const reason = reasonForSources();
let cli;
if (reason === undefined) {
  cli = await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import('../src/cli/main.ts');
}
await cli.main(process.argv, { startupNote: reason && NOTES[reason] });
