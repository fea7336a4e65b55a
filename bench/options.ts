import { parseArgs } from 'node:util';
import type { BenchOptions } from './suite';

/** --smoke multiplies the default sizes by this: 25 KB per format, 500 KB mixed, a 5 MB archive. */
const SMOKE_SCALE = 1 / 200;

export interface CliOptions extends BenchOptions {
  json: boolean;
  only?: string;
  list: boolean;
  help: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]   (or: npx tsx bench/index.ts [options])

  --json            print one JSON document with every figure (progress still goes to stderr;
                    through npm, run it as npm run --silent bench -- --json, or npm adds its banner)
  --only NAMES      comma-separated suite names or prefixes (e.g. ingest, ingest.upload)
  --list            list the suites and exit
  --scale N         multiply every default size by N (default 1: 5 MB per format, 100 MB mixed,
                    20 MB single documents, 1 GB archive)
  --smoke           tiny sizes (scale ${SMOKE_SCALE}), for CI; runs in seconds
  --repeat N        runs per measurement, medians reported (default 1)
  --seed N          seed of the synthetic corpora (default 1)
  --format-mb N     size of each per-format corpus, overriding the scale
  --mixed-mb N      size of the mixed corpus, overriding the scale
  --archive-mb N    size of the bulk-upload archive, overriding the scale
  --large-mb N      size of each single large document, overriding the scale
  --vectors N,N     chunk counts of retrieve.dense (default 10000,100000 × --scale; --scale 5: 500k)
  --dims D,D        vector dimensions of retrieve.dense (default 1024,1536,3072)
  --dense-vectors K retrieve.dense's vectors: clustered (default: seeded clusters) or text (each text
                    embedded by the offline model, projected to the dimensions)
  --help            this text`;

export function parseOptions(argv: string[]): CliOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      json: { type: 'boolean', default: false },
      only: { type: 'string' },
      list: { type: 'boolean', default: false },
      scale: { type: 'string' },
      smoke: { type: 'boolean', default: false },
      repeat: { type: 'string', default: '1' },
      seed: { type: 'string', default: '1' },
      'format-mb': { type: 'string' },
      'mixed-mb': { type: 'string' },
      'archive-mb': { type: 'string' },
      'large-mb': { type: 'string' },
      vectors: { type: 'string' },
      dims: { type: 'string' },
      'dense-vectors': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const scale = positive('--scale', values.scale ?? '1') * (values.smoke ? SMOKE_SCALE : 1);
  const repeat = positive('--repeat', values.repeat);
  if (!Number.isInteger(repeat)) throw new Error(`--repeat: '${values.repeat}' is not a whole number.`);
  const seed = Number(values.seed);
  if (!Number.isInteger(seed)) throw new Error(`--seed: '${values.seed}' is not an integer.`);
  return {
    json: values.json,
    only: values.only,
    list: values.list,
    help: values.help,
    scale,
    smoke: values.smoke,
    repeat,
    seed,
    formatMb: optionalPositive('--format-mb', values['format-mb']),
    mixedMb: optionalPositive('--mixed-mb', values['mixed-mb']),
    archiveMb: optionalPositive('--archive-mb', values['archive-mb']),
    largeMb: optionalPositive('--large-mb', values['large-mb']),
    vectors: optionalIntegers('--vectors', values.vectors),
    dims: optionalIntegers('--dims', values.dims),
    denseVectors: denseVectors(values['dense-vectors']),
  };
}

function denseVectors(raw: string | undefined): 'clustered' | 'text' | undefined {
  if (raw === undefined || raw === 'clustered' || raw === 'text') return raw;
  throw new Error(`--dense-vectors: '${raw}' is not clustered or text.`);
}

function positive(flag: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${flag}: '${raw}' is not a positive number.`);
  return value;
}

const optionalPositive = (flag: string, raw: string | undefined) =>
  raw === undefined ? undefined : positive(flag, raw);

function optionalIntegers(flag: string, raw: string | undefined): number[] | undefined {
  if (raw === undefined) return undefined;
  return raw.split(',').map((part) => {
    const value = positive(flag, part.trim());
    if (!Number.isInteger(value)) throw new Error(`${flag}: '${part}' is not a whole number.`);
    return value;
  });
}
