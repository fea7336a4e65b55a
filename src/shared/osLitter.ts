/**
 * The one rule for the files operating systems and editors leave behind, which are never ingested from
 * a folder or an archive: the CLI's folder walk, ZIP extraction, the studio's drop (its page, and the
 * server for the names a drop sends) all apply it, so a folder gives the same sources whichever way it
 * comes in (docs/ingestion.md).
 */

const LITTER_NAMES = new Set(['thumbs.db', 'desktop.ini', 'ehthumbs.db']);

/**
 * Whether a path inside a folder or an archive (forward slashes) is litter: macOS resource forks
 * (`__MACOSX/`, `._*`, `.DS_Store`), Windows thumbnails and `desktop.ini`, any dot-file or dot-folder
 * (`.obsidian/app.json`, `.github/CONTRIBUTING.md`, `.draft.md`), and Office lock files (`~$x.docx`).
 */
export function isOsLitter(pathInside: string): boolean {
  const segments = pathInside.split('/');
  if (segments.some((s) => s.startsWith('.') || s.toUpperCase() === '__MACOSX')) return true;
  const base = segments[segments.length - 1] ?? '';
  return LITTER_NAMES.has(base.toLowerCase()) || base.startsWith('~$');
}

/**
 * Whether a file of a drop, named by its path in the drop (`handbook/.obsidian/app.json`), is litter
 * inside a dropped folder. The first segment is the folder the creator chose, which is not judged (as
 * `kbstudio ingest .vault` reads the folder it is given); a name without a folder part is a file picked
 * by itself, which is read as the CLI reads a file it is given by name.
 */
export function isLitterInDrop(dropPath: string): boolean {
  const slash = dropPath.indexOf('/');
  return slash >= 0 && isOsLitter(dropPath.slice(slash + 1));
}
