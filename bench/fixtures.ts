import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from '../src/core/ingest/parse';
import { FORMAT_BY_EXTENSION, type DocumentFormat } from '../src/core/ingest/types';

/** The shared fixtures sit beside the repository (CI clones `shared/` next to it). */
export const FIXTURES_DIR = fileURLToPath(new URL('../../shared/fixtures/docs', import.meta.url));

/** Image-only, so ingestion refuses it (no_text_layer): it would measure nothing. */
const EXCLUDED = new Set(['loremipsum-flat.pdf']);

export interface Fixture {
  name: string;
  path: string;
  format: DocumentFormat;
}

export function fixturesByFormat(): Record<DocumentFormat, Fixture[]> {
  const out: Record<DocumentFormat, Fixture[]> = {
    pdf: [],
    docx: [],
    html: [],
    markdown: [],
    json: [],
    csv: [],
  };
  for (const name of readdirSync(FIXTURES_DIR).sort()) {
    const format = FORMAT_BY_EXTENSION[extname(name).toLowerCase()];
    if (format && !EXCLUDED.has(name)) out[format].push({ name, path: join(FIXTURES_DIR, name), format });
  }
  return out;
}

/** Words and sentences of the fixtures' prose, from which synthetic documents are built and perturbed. */
export interface TextPool {
  words: string[];
  sentences: string[];
}

/**
 * Reads the prose of the HTML and DOCX fixtures through the studio's own parsers (which also loads those
 * parsers before anything is timed). The PDFs are left out: each one costs a pdfjs worker start.
 */
export async function loadTextPool(): Promise<TextPool> {
  const fixtures = fixturesByFormat();
  const texts: string[] = [];
  for (const fixture of [...fixtures.html, ...fixtures.docx]) {
    const bytes = new Uint8Array(await readFile(fixture.path));
    const parsed = await parseDocument(fixture.format, { bytes, source: fixture.name });
    texts.push(...parsed.sections.map((s) => s.text));
  }
  const words = new Set<string>();
  const sentences = new Set<string>();
  for (const text of texts) {
    for (const word of text.match(/\p{L}{3,}/gu) ?? []) words.add(word.toLowerCase());
    for (const raw of text.split(/(?<=[.!?])\s+|\n{2,}/)) {
      const sentence = raw.replace(/\s+/g, ' ').trim();
      if (sentence.split(' ').length >= 6 && sentence.length <= 600) sentences.add(sentence);
    }
  }
  return { words: [...words].sort(), sentences: [...sentences].sort() };
}
