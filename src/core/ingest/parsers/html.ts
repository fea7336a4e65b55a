import rehypeParse from 'rehype-parse';
import { select } from 'hast-util-select';
import { unified } from 'unified';
import { decodeText } from '../decode';
import type { Metadata, Parser } from '../types';
import { sniffHtmlCharset } from './htmlCharset';
import { guardNesting, htmlToSections, inlineText } from './htmlSections';
import { parseDeadline, type ParseBudget } from './parseBudget';

export interface HtmlParserOptions {
  /** Time allowed for one page (checked after each step); see DEFAULT_PARSE_BUDGET. */
  budget?: ParseBudget;
}

/**
 * HTML/HTM parser: the text a reader sees, without navigation, header, footer, scripts, styles, form
 * controls and hidden elements; one section per heading block ({ headings }); document metadata
 * { title, lang } from <title> and <html lang>. The character set comes from the BOM, then the page's
 * own declaration, then detection (decodeText). A page that takes far longer than its size warrants is
 * refused (parseDeadline); the check runs between steps, as a parse in progress cannot be interrupted.
 */
export function createHtmlParser(options: HtmlParserOptions = {}): Parser {
  return async ({ bytes, source }) => {
    const html = decodeText(bytes, sniffHtmlCharset(bytes));
    const checkTime = parseDeadline(source, 'HTML', html.length, options.budget);
    return guardNesting(source, () => {
      const tree = unified().use(rehypeParse).parse(html);
      checkTime();
      const metadata: Metadata = {};
      const titleElement = select('head > title', tree);
      const title = titleElement ? inlineText(titleElement) : '';
      if (title) metadata.title = title;
      const lang = select('html', tree)?.properties.lang;
      if (typeof lang === 'string' && lang.trim()) metadata.lang = lang.trim();
      const sections = htmlToSections(tree);
      checkTime();
      const warnings = sections.length === 0 ? [`${source}: the page has no visible text.`] : undefined;
      return { format: 'html', sections, metadata, ...(warnings ? { warnings } : {}) };
    });
  };
}

export const parseHtml: Parser = createHtmlParser();
