import { isUtf8 } from 'node:buffer';
import chardet from 'chardet';
import iconv from 'iconv-lite';
import { byteOrderMark } from '../decode';

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

/** HTML's default for a page that declares no charset, in most locales (WHATWG HTML, "encoding sniffing"). */
const HTML_DEFAULT = 'windows-1252';
/** chardet's names for windows-1252 (ISO-8859-1 when the text has no byte in 0x80-0x9F). */
const WESTERN = /^(windows-1252|iso-8859-1)$/i;
/** Charsets of one byte a character, whose differences from windows-1252 can be counted byte by byte. */
const SINGLE_BYTE = /^(iso-8859-\d+|windows-\d+|koi8-r)$/i;
/** decodeText's floor for a guess. */
const MIN_CONFIDENCE = 10;
/**
 * How much higher than windows-1252 a guess must score when it reads just one character of the text
 * differently: on a few words the scores are noise ("Café “quoted” – naïve €5 Straße" scored windows-1250
 * 38 and windows-1252 29 with its tags, 33 each without), but one Lithuanian "š" can score 98 against 15.
 */
const ONE_CHAR_MARGIN = 1.5;
/** Enough text for chardet's statistics; all of a 7.6 MB page took it 3.7 s on the ingesting thread. */
const SAMPLE_BYTES = 16 * 1024;
/** Bytes of context kept on each side of a non-ASCII byte in the sample. */
const CONTEXT_BYTES = 64;

/**
 * The charset of a page with no BOM and no declaration that is not valid UTF-8 (otherwise undefined:
 * decodeText reads those). chardet looks at the page's text without its markup: the ASCII of tags,
 * scripts and styles drowned the few letters that tell charsets apart, and a Czech, Russian or Greek
 * page with a stylesheet and a script came out as windows-1252. windows-1252, HTML's default, is kept
 * unless another charset scores higher (a tie went to whichever chardet listed first: "naïve" read
 * "naďve"), by half again when it reads only one character differently (ONE_CHAR_MARGIN).
 */
export function detectHtmlCharset(bytes: Uint8Array): string | undefined {
  // A NUL is refused as binary by decodeText, whatever the charset.
  if (byteOrderMark(bytes) || isUtf8(bytes) || bytes.includes(0)) return undefined;
  const text = withoutMarkup(bytes);
  // Non-ASCII only in the markup (an attribute, a script): better that than nothing.
  const sample = aroundNonAscii(text) ?? aroundNonAscii(bytes) ?? bytes;
  const guesses = chardet
    .analyse(sample)
    .filter(({ name }) => !/^(utf|ascii)/i.test(name) && iconv.encodingExists(name));
  const best = guesses[0];
  if (!best || WESTERN.test(best.name) || best.confidence < MIN_CONFIDENCE) return HTML_DEFAULT;
  const western = guesses.find(({ name }) => WESTERN.test(name))?.confidence ?? 0;
  if (best.confidence <= western) return HTML_DEFAULT;
  const oneChar = SINGLE_BYTE.test(best.name) && charsReadDifferently(sample, best.name) <= 1;
  if (oneChar && best.confidence < western * ONE_CHAR_MARGIN) return HTML_DEFAULT;
  return best.name;
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

/**
 * The text around its non-ASCII bytes, which are what tell charsets apart: all of it up to SAMPLE_BYTES,
 * else about that much of it. A cut falls CONTEXT_BYTES away from any non-ASCII byte, so never inside a
 * multi-byte character. Undefined when the text is all ASCII.
 */
function aroundNonAscii(text: Uint8Array): Uint8Array | undefined {
  let first = 0;
  while (first < text.length && text[first]! < 0x80) first++;
  if (first === text.length) return undefined;
  if (text.length <= SAMPLE_BYTES) return text;
  const pieces: Uint8Array[] = [];
  let size = 0;
  let start = Math.max(0, first - CONTEXT_BYTES);
  let end = start;
  for (let i = first; i < text.length && size + end - start < SAMPLE_BYTES; i++) {
    if (text[i]! < 0x80) continue;
    if (i - CONTEXT_BYTES > end) {
      pieces.push(text.subarray(start, end), SPACE);
      size += end - start + 1;
      start = i - CONTEXT_BYTES;
    }
    end = Math.min(text.length, i + CONTEXT_BYTES + 1);
  }
  pieces.push(text.subarray(start, end));
  return Buffer.concat(pieces);
}

const SPACE = Uint8Array.of(0x20);

const UPPER_HALF = Buffer.from(Array.from({ length: 128 }, (_, i) => 0x80 + i));
const WESTERN_UPPER_HALF = iconv.decode(UPPER_HALF, HTML_DEFAULT);

/** How many of the sample's bytes a single-byte charset reads as another character than windows-1252. */
function charsReadDifferently(sample: Uint8Array, charset: string): number {
  const upperHalf = iconv.decode(UPPER_HALF, charset);
  let count = 0;
  for (const byte of sample)
    if (byte >= 0x80 && upperHalf[byte - 0x80] !== WESTERN_UPPER_HALF[byte - 0x80]) count++;
  return count;
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
