import type { Root, Yaml } from 'mdast';
import remarkFrontmatter from 'remark-frontmatter';
import remarkGfm from 'remark-gfm';
import remarkMdx from 'remark-mdx';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { decodeText } from '../decode';
import { InvalidDocument } from '../errors';
import type { Metadata, ParsedDocument, Parser } from '../types';
import { normalizeFrontMatterFence, readFrontMatter } from './markdownFrontMatter';
import { markdownPieces } from './markdownPieces';
import { MarkdownSectionBuilder } from './markdownSections';
import { parseDeadline, type ParseBudget } from './parseBudget';

const markdownProcessor = unified().use(remarkParse).use(remarkFrontmatter, ['yaml']).use(remarkGfm);
const mdxProcessor = unified()
  .use(remarkParse)
  .use(remarkFrontmatter, ['yaml'])
  .use(remarkGfm)
  .use(remarkMdx);

export interface MarkdownParserOptions {
  /** Time allowed for one document (checked between its parts); see DEFAULT_PARSE_BUDGET. */
  budget?: ParseBudget;
}

/**
 * Markdown (CommonMark + GitHub tables) and, for `.mdx` sources only, MDX. YAML front matter becomes the
 * document metadata (read with the `yaml` package and an alias limit, never with gray-matter, which runs
 * `---js` front matter); the body becomes one section per heading (see markdownSections). A large
 * document is parsed a piece at a time (markdownPieces) and each piece's tree dropped once its text is
 * taken, so memory stays near the size of the text; a document that parses far slower than its size
 * warrants is refused (parseDeadline).
 */
export function createMarkdownParser(options: MarkdownParserOptions = {}): Parser {
  return async ({ bytes, source }) => {
    const text = normalizeFrontMatterFence(decodeText(bytes), source);
    const warnings: string[] = [];
    const checkTime = parseDeadline(source, 'Markdown', text.length, options.budget);
    const builder = new MarkdownSectionBuilder();
    let frontMatter: Yaml | undefined;
    const sections = withinStack(source, () => {
      const pieces = /\.mdx$/i.test(source) ? [text] : markdownPieces(text);
      for (let i = 0; i < pieces.length; i++) {
        const tree = parseTree(pieces[i]!, source);
        pieces[i] = '';
        const first = tree.children[0];
        if (i === 0 && first?.type === 'yaml') frontMatter = first;
        builder.add(tree.children);
        checkTime();
      }
      return builder.finish();
    });

    let metadata: Metadata = {};
    if (frontMatter) {
      metadata = readFrontMatter(frontMatter.value, frontMatter.position?.start.line ?? 1, source, warnings);
    }

    if (sections.length === 0) warnings.push('The document has no text.');
    const document: ParsedDocument = { format: 'markdown', sections, metadata };
    if (warnings.length > 0) document.warnings = warnings;
    return document;
  };
}

export const parseMarkdown: Parser = createMarkdownParser();

/** micromark and the tree walk recurse per nesting level: thousands of nested quotes or lists overflow the stack. */
function withinStack<T>(source: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new InvalidDocument(
      source,
      'the document nests too deeply to be read (block quotes, lists, emphasis or HTML thousands of levels deep).',
    );
  }
}

/** CommonMark never fails; MDX does, with a position. */
function parseTree(text: string, source: string): Root {
  if (!/\.mdx$/i.test(source)) return markdownProcessor.parse(text);
  try {
    return mdxProcessor.parse(text);
  } catch (error) {
    if (isPositionedMessage(error)) {
      // Some messages carry their place only in the reason: "Expected a closing tag for `<Note>` (3:1-3:7)".
      const inReason = /\s*\((\d+):(\d+)-\d+:\d+\)$/.exec(error.reason);
      const line = error.line ?? inReason?.[1];
      const column = error.column ?? inReason?.[2];
      const reason = inReason ? error.reason.slice(0, inReason.index) : error.reason;
      const where = line ? ` at line ${line}${column ? `, column ${column}` : ''}` : '';
      throw new InvalidDocument(source, `invalid MDX${where}: ${reason}.`);
    }
    throw error;
  }
}

/** A VFileMessage (micromark's MDX errors), recognised by shape so no transitive package is imported. */
function isPositionedMessage(
  error: unknown,
): error is Error & { reason: string; line?: number; column?: number } {
  return error instanceof Error && typeof (error as { reason?: unknown }).reason === 'string';
}
