import mammoth from 'mammoth';
import rehypeParse from 'rehype-parse';
import { unified } from 'unified';
import type { Element } from 'hast';
import { InvalidDocument } from '../errors';
import type { Metadata, Parser } from '../types';
import { DEFAULT_DOCX_LIMITS, screenDocxArchive, type DocxArchiveLimits } from './docxArchive';
import { guardNesting, htmlToSections } from './htmlSections';

export interface DocxParserOptions {
  limits?: Partial<DocxArchiveLimits>;
}

const MAMMOTH_OPTIONS = {
  // Word's "Title" paragraph style heads the document like a level-1 heading.
  styleMap: ["p[style-name='Title'] => h1:fresh"],
  // Images carry no text: skip them without reading their data (the default inlines them as base64).
  convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })),
};

/**
 * DOCX parser: body text (headers and footers left out, as mammoth does) converted to HTML by mammoth,
 * then cut into one section per heading block ({ headings }); tables one row per line with ' | ' between
 * cells, list items one per line. The ZIP is screened first (sizes, ratios, encryption). Document metadata
 * { title, author } from the document's properties.
 */
export function createDocxParser(options: DocxParserOptions = {}): Parser {
  const limits = { ...DEFAULT_DOCX_LIMITS, ...options.limits };
  return async ({ bytes, source }) => {
    const properties = await screenDocxArchive(bytes, source, limits);
    let html: string;
    let messages: { type: string; message: string }[];
    try {
      const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      ({ value: html, messages } = await mammoth.convertToHtml({ buffer }, MAMMOTH_OPTIONS));
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
      throw new InvalidDocument(source, `could not be read as a Word document (${reason}).`);
    }
    const sections = guardNesting(source, () =>
      htmlToSections(unified().use(rehypeParse).parse(html), { strip: isFootnoteBacklink }),
    );
    const warnings = messages.filter((m) => m.type === 'error').map((m) => `${source}: ${m.message}`);
    if (sections.length === 0) warnings.push(`${source}: the document has no text.`);
    const metadata: Metadata = { ...properties };
    return { format: 'docx', sections, metadata, ...(warnings.length > 0 ? { warnings } : {}) };
  };
}

export const parseDocx: Parser = createDocxParser();

/** mammoth ends each footnote with a "↑" link back to its reference: not text. */
function isFootnoteBacklink(element: Element): boolean {
  const href = element.properties.href;
  return element.tagName === 'a' && typeof href === 'string' && /^#(footnote|endnote)-ref-/.test(href);
}
