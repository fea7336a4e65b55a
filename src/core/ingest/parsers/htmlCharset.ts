/**
 * The character set an HTML file declares in its first bytes: `<meta charset>`, `<meta http-equiv=
 * "Content-Type" content="...; charset=...">`, or an XML declaration (XHTML, SEC filings). Read as
 * latin1, which any ASCII-compatible encoding agrees with for these tags.
 */
const SNIFF_BYTES = 4096;
const META = /<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([\w.:-]+)/i;
const XML_DECLARATION = /^\s*<\?xml\b[^>]*?\bencoding\s*=\s*["']([\w.:-]+)["']/i;

export function sniffHtmlCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, SNIFF_BYTES)).toString(
    'latin1',
  );
  const declared = (META.exec(head) ?? XML_DECLARATION.exec(head))?.[1]?.toLowerCase();
  if (!declared) return undefined;
  // As browsers do: a UTF-16 label found by an ASCII scan cannot be true (a real UTF-16 file has a BOM).
  if (/^utf-?16/.test(declared)) return 'utf-8';
  if (declared === 'x-user-defined') return 'windows-1252';
  return declared;
}
