import type { FileWithPath } from '@mantine/dropzone';
import { describe, expect, it } from 'vitest';
import { filesFromDropzone, filesFromInput } from '../../../src/renderer/src/features/ingest/dropFiles';

/** A file as Mantine's dropzone hands it over: `path` and `relativePath` set from the drop. */
function dropped(name: string, path: string): FileWithPath {
  const file = new File(['x'], name);
  Object.defineProperty(file, 'path', { value: path });
  Object.defineProperty(file, 'relativePath', { value: path });
  return file as FileWithPath;
}

describe('filesFromDropzone', () => {
  it('names files by their path inside a dropped folder, and plain files by their name', () => {
    const queued = filesFromDropzone([
      dropped('intro.md', '/handbook/intro.md'),
      dropped('table.md', '/handbook/policies/table.md'),
      dropped('paper.pdf', './paper.pdf'),
    ]);
    expect(queued.map((f) => f.path)).toEqual([
      'handbook/intro.md',
      'handbook/policies/table.md',
      'paper.pdf',
    ]);
    expect(queued[0]!.file.name).toBe('intro.md');
  });

  it('leaves OS litter out of dropped folders', () => {
    const queued = filesFromDropzone([
      dropped('.DS_Store', '/handbook/.DS_Store'),
      dropped('._intro.md', '/handbook/._intro.md'),
      dropped('Thumbs.db', '/handbook/img/Thumbs.db'),
      dropped('intro.md', '/handbook/intro.md'),
    ]);
    expect(queued.map((f) => f.path)).toEqual(['handbook/intro.md']);
  });

  it('leaves out what `kbstudio ingest <folder>` leaves out: dot-files, dot-folders, Office lock files', () => {
    const queued = filesFromDropzone([
      dropped('.draft.md', '/handbook/.draft.md'),
      dropped('CONTRIBUTING.md', '/handbook/.github/CONTRIBUTING.md'),
      dropped('app.json', '/handbook/.obsidian/app.json'),
      dropped('~$simple.docx', '/handbook/~$simple.docx'),
      dropped('simple.docx', '/handbook/simple.docx'),
      dropped('intro.md', '/handbook/guides/intro.md'),
    ]);
    expect(queued.map((f) => f.path)).toEqual(['handbook/simple.docx', 'handbook/guides/intro.md']);
  });

  it('keeps a file dropped by itself, as the CLI reads a file it is named', () => {
    expect(filesFromDropzone([dropped('.draft.md', './.draft.md')]).map((f) => f.path)).toEqual([
      '.draft.md',
    ]);
  });

  it('falls back to the file name when the drop gave no path', () => {
    expect(filesFromDropzone([new File(['x'], 'notes.csv') as FileWithPath]).map((f) => f.path)).toEqual([
      'notes.csv',
    ]);
  });
});

/** A file as an <input type="file" webkitdirectory> gives it: its path below the chosen folder's parent. */
function chosen(name: string, relativePath: string): File {
  const file = new File(['x'], name);
  Object.defineProperty(file, 'webkitRelativePath', { value: relativePath });
  return file;
}

describe('filesFromInput', () => {
  it('leaves OS litter out of a chosen folder by the same rule, and keeps files chosen by themselves', () => {
    const queued = filesFromInput([
      chosen('.draft.md', 'handbook/.draft.md'),
      chosen('app.json', 'handbook/.obsidian/app.json'),
      chosen('~$simple.docx', 'handbook/~$simple.docx'),
      chosen('.DS_Store', 'handbook/.DS_Store'),
      chosen('intro.md', 'handbook/intro.md'),
    ]);
    expect(queued.map((f) => f.path)).toEqual(['handbook/intro.md']);
    // "Choose files": no relative path, each file picked by itself.
    expect(filesFromInput([new File(['x'], '.draft.md')]).map((f) => f.path)).toEqual(['.draft.md']);
  });
});
