import { describe, expect, it } from 'vitest';
import { isLitterInDrop, isOsLitter } from '../../src/shared/osLitter';

describe('isOsLitter: a path inside a folder or an archive', () => {
  it.each([
    '.DS_Store',
    'docs/.DS_Store',
    '._intro.md',
    '__MACOSX/docs/._intro.md',
    'img/Thumbs.db',
    'desktop.ini',
    '.draft.md',
    '.github/CONTRIBUTING.md',
    '.obsidian/app.json',
    'notes/.obsidian/workspace.json',
    '~$simple.docx',
    'reports/~$q3.docx',
  ])('leaves %j out', (path) => expect(isOsLitter(path)).toBe(true));

  it.each(['intro.md', 'docs/guides/intro.md', 'simple.docx', 'a.b/c.md', 'x~$y.md'])('keeps %j', (path) =>
    expect(isOsLitter(path)).toBe(false),
  );
});

describe('isLitterInDrop: a path in a drop on the studio', () => {
  it('judges the files inside a dropped folder by the same rule', () => {
    for (const path of [
      'handbook/.draft.md',
      'handbook/.github/CONTRIBUTING.md',
      'handbook/.obsidian/app.json',
      'handbook/~$simple.docx',
      'handbook/img/Thumbs.db',
      'handbook/__MACOSX/._a.md',
    ])
      expect(isLitterInDrop(path), path).toBe(true);
    expect(isLitterInDrop('handbook/guides/intro.md')).toBe(false);
  });

  it('never judges a file picked by itself, nor the name of the folder chosen', () => {
    // `kbstudio ingest .draft.md` reads the file it is named; `kbstudio ingest .vault` the folder.
    expect(isLitterInDrop('.draft.md')).toBe(false);
    expect(isLitterInDrop('~$simple.docx')).toBe(false);
    expect(isLitterInDrop('.vault/notes.md')).toBe(false);
    expect(isLitterInDrop('.vault/.obsidian/app.json')).toBe(true);
  });
});
