import { describe, expect, it } from 'vitest';
import {
  extensionOf,
  isPreviewable,
  unsupportedFiles,
  unsupportedSummary,
  unsupportedType,
} from '../../../src/renderer/src/features/ingest/fileTypes';

const queued = (path: string) => ({ path, file: new File(['x'], path.split('/').pop()!) });

describe('the file types an ingestion takes', () => {
  it('names the type the server would refuse, as the server names it', () => {
    expect(unsupportedType('notes.txt')).toBe('.txt');
    expect(unsupportedType('handbook/Policies/LEAVE.TXT')).toBe('.txt');
    expect(unsupportedType('Makefile')).toBe('no extension');
    expect(unsupportedType('config/.gitignore')).toBe('no extension');
    expect(unsupportedType('archive.tar.gz')).toBe('.gz');
  });

  it('takes documents, pre-built embeddings and ZIP archives, whatever the case of the extension', () => {
    for (const path of [
      'a.pdf',
      'b.DOCX',
      'c.html',
      'd.htm',
      'e.md',
      'f.mdx',
      'g.json',
      'h.csv',
      'vectors.jsonl',
      'bundle.zip',
      'folder.v2/readme.md',
    ]) {
      expect(unsupportedType(path), path).toBeUndefined();
    }
  });

  it('previews documents only, not embeddings or archives', () => {
    expect(isPreviewable('paper.PDF')).toBe(true);
    expect(isPreviewable('vectors.jsonl')).toBe(false);
    expect(isPreviewable('bundle.zip')).toBe(false);
    expect(isPreviewable('notes.txt')).toBe(false);
  });

  it('reads the extension of the last path segment only', () => {
    expect(extensionOf('v1.2/notes')).toBe('');
    expect(extensionOf('a\\b.Md')).toBe('.md');
  });

  it('finds the unsupported files of a queue and says what one of them would do', () => {
    const queue = ['a.md', 'notes.txt', 'b.pdf', 'image.png'].map(queued);
    expect(unsupportedFiles(queue).map((f) => f.path)).toEqual(['notes.txt', 'image.png']);
    expect(unsupportedSummary(1)).toBe('1 file of an unsupported type would refuse the whole ingestion');
    expect(unsupportedSummary(2)).toBe('2 files of unsupported types would refuse the whole ingestion');
  });
});
