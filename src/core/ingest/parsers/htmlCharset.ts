import { isUtf8 } from 'node:buffer';
import { byteOrderMark, detectLegacyCharset } from '../decode';

/**
 * The character set an HTML file declares in its first bytes: `<meta charset>`, `<meta http-equiv=
 * "Content-Type" content="...; charset=...">`, or an XML declaration (XHTML, SEC filings). Read as
 * latin1, which any ASCII-compatible encoding agrees with for these tags.
 */
const SNIFF_BYTES = 4096;
const META = /<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([\w.:-]+)/i;
const XML_DECLARATION = /^\s*<\?xml\b[^>]*?\bencoding\s*=\s*["']([\w.:-]+)["']/i;

export function sniffHtmlCharset(bytes: Uint8Array): string | undefined {
  const head = latin1(bytes.subarray(0, SNIFF_BYTES));
  const declared = (META.exec(head) ?? XML_DECLARATION.exec(head))?.[1]?.toLowerCase();
  if (!declared) return undefined;
  // As browsers do: a UTF-16 label found by an ASCII scan cannot be true (a real UTF-16 file has a BOM).
  if (/^utf-?16/.test(declared)) return 'utf-8';
  if (declared === 'x-user-defined') return 'windows-1252';
  return declared;
}

/**
 * The charset of a page with no BOM and no declaration that is not valid UTF-8 (otherwise undefined:
 * decodeText reads those). chardet looks at the page's text without its markup: the ASCII of tags,
 * scripts and styles drowned the few letters that tell charsets apart, and a Czech, Russian or Greek
 * page with a stylesheet and a script came out as windows-1252. Then the rules of all legacy text
 * (detectLegacyCharset): windows-1252, HTML's default too, unless another charset clearly scores higher.
 */
export function detectHtmlCharset(bytes: Uint8Array): string | undefined {
  // A NUL is refused as binary by decodeText, whatever the charset.
  if (byteOrderMark(bytes) || isUtf8(bytes) || bytes.includes(0)) return undefined;
  const text = withoutMarkup(bytes);
  // Non-ASCII only in the markup (an attribute, a script): better that than nothing.
  return detectLegacyCharset(text.some((byte) => byte >= 0x80) ? text : bytes);
}

// Tags, comments and the content of scripts and styles, found with indexOf so that an unclosed one
// costs one scan to the end, not one per later tag.
const MARKUP_START = /<(?:!--|(script|style)\b|[a-z!?/])/gi;
const RAW_TEXT_END: Record<string, RegExp> = { script: /<\/script\b/gi, style: /<\/style\b/gi };
const CHARACTER_REFERENCE = /&#?\w{1,32};/g;

/** The page's bytes with its markup replaced by spaces (a multi-byte character never holds '<' or '>'). */
function withoutMarkup(bytes: Uint8Array): Buffer {
  const html = latin1(bytes);
  const text: string[] = [];
  let at = 0;
  MARKUP_START.lastIndex = 0;
  for (let start = MARKUP_START.exec(html); start; start = MARKUP_START.exec(html)) {
    text.push(html.slice(at, start.index), ' ');
    at = start[0] === '<!--' ? after(html, '-->', start.index + 4) : after(html, '>', start.index);
    const close = start[1] && RAW_TEXT_END[start[1].toLowerCase()];
    if (close) {
      close.lastIndex = at;
      at = close.exec(html) ? after(html, '>', close.lastIndex) : html.length;
    }
    MARKUP_START.lastIndex = at;
  }
  text.push(html.slice(at));
  return Buffer.from(text.join('').replace(CHARACTER_REFERENCE, ' '), 'latin1');
}

const after = (html: string, end: string, from: number): number => {
  const found = html.indexOf(end, from);
  return found === -1 ? html.length : found + end.length;
};

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
