import { readdirSync, readFileSync } from 'node:fs';
import { join, matchesGlob } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config';
import { REPO_ROOT } from '../helpers/studio';

interface Project {
  test: { name: string; include: string[]; exclude?: string[]; isolate?: boolean };
}

const projects = (config.test?.projects ?? []) as unknown as Project[];

/** Every test file of the repository, relative to it, with forward slashes. */
const testFiles = (readdirSync(join(REPO_ROOT, 'test'), { recursive: true }) as string[])
  .map((f) => `test/${f.split('\\').join('/')}`)
  .filter((f) => /\.test\.tsx?$/.test(f));

const matches = (file: string, patterns: string[] = []) => patterns.some((p) => matchesGlob(file, p));
const projectsOf = (file: string) =>
  projects.filter((p) => matches(file, p.test.include) && !matches(file, p.test.exclude));

// A module mock, a stubbed global or fake timers left by one file would reach the next one run by the
// same test process, in the projects whose files share their modules (isolate: false).
const LEAKS = /\bvi\.(mock|doMock|stubGlobal|stubEnv|resetModules|useFakeTimers)\(/;

describe('vitest.config.ts projects', () => {
  it('puts every test file in exactly one project', () => {
    expect(testFiles.length).toBeGreaterThan(200);
    const wrong = testFiles
      .map((file) => ({ file, in: projectsOf(file).map((p) => p.test.name) }))
      .filter((f) => f.in.length !== 1);
    expect(wrong).toEqual([]);
  });

  it('runs every file that mocks modules or globals in a project of its own modules', () => {
    const mocking = testFiles.filter((f) => LEAKS.test(readFileSync(join(REPO_ROOT, f), 'utf8')));
    expect(mocking.length).toBeGreaterThan(0);
    const sharing = mocking.filter((file) => projectsOf(file).some((p) => p.test.isolate === false));
    // Each of these belongs in `ownModules` in vitest.config.ts.
    expect(sharing).toEqual([]);
  });
});
