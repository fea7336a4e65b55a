/**
 * What a free-text search can look for: runs of letters, digits (and private-use characters), as the
 * full-text index cuts text into words and as /v1/retrieve's lexical search reads a query
 * (src/core/retrieve/scoring.ts). A query without one (`"`, `^`, `--`) has nothing to find: it matches
 * no chunk, rather than being taken for no query at all.
 */
const WORD_CHARACTER = /[\p{L}\p{N}\p{Co}]/u;

export function hasSearchableWord(text: string): boolean {
  return WORD_CHARACTER.test(text.normalize('NFC'));
}
