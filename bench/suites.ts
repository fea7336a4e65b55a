import { ingestFormatsSuite, ingestMixedSuite } from './ingest';
import { ingestFloorSuite } from './ingestFloor';
import { ingestLargeFilesSuite } from './largeFiles';
import type { Suite } from './suite';
import { retrieveLatencySuite, retrieveQualitySuite } from './retrieve';
import { retrieveDenseSuite } from './retrieveDense';
import { retrieveLexicalSuite } from './retrieveLexical';
import { studioDeleteSuite } from './studioDelete';
import { ingestUploadSuite } from './upload';

/** Every suite `npm run bench` knows, in the order they run. A new suite only needs adding here. */
export const SUITES: Suite[] = [
  ingestFormatsSuite,
  ingestMixedSuite,
  ingestFloorSuite,
  ingestLargeFilesSuite,
  ingestUploadSuite,
  retrieveQualitySuite,
  retrieveLatencySuite,
  retrieveDenseSuite,
  retrieveLexicalSuite,
  studioDeleteSuite,
];

/** The suites named by --only: exact names or dotted prefixes (`ingest` selects `ingest.*`). */
export function selectSuites(only: string | undefined, suites: Suite[] = SUITES): Suite[] {
  if (!only) return suites;
  const wanted = only
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = wanted.filter((w) => !suites.some((s) => matches(s.name, w)));
  if (unknown.length > 0) {
    throw new Error(
      `--only: no suite named ${unknown.map((u) => `'${u}'`).join(', ')}; suites: ${suites.map((s) => s.name).join(', ')}.`,
    );
  }
  return suites.filter((s) => wanted.some((w) => matches(s.name, w)));
}

const matches = (name: string, wanted: string) => name === wanted || name.startsWith(`${wanted}.`);
