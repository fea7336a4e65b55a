import { describe } from 'vitest';
import { describeParserFuzzing } from '../fuzz/suite';

/** The long parser fuzzing run, for `npm run test:stress` only (the short one is test/fuzz/parsers.test.ts). */
describe.runIf(process.env.KBSTUDIO_STRESS === '1')('long run', () => describeParserFuzzing(true));
