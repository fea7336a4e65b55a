import type { FileWithPath } from '@mantine/dropzone';
import { describe, expect, it } from 'vitest';
import { filesFromDropzone } from '../../../src/renderer/src/features/ingest/dropFiles';

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

  it('falls back to the file name when the drop gave no path', () => {
    expect(filesFromDropzone([new File(['x'], 'notes.csv') as FileWithPath]).map((f) => f.path)).toEqual([
      'notes.csv',
    ]);
  });
});
