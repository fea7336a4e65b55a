import chardet from 'chardet';
import iconv from 'iconv-lite';

const BOMS: [number[], string][] = [
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xff, 0xfe], 'utf-16le'],
  [[0xfe, 0xff], 'utf-16be'],
];

/**
 * Bytes to text: the BOM first, then a declared charset (HTML meta, HTTP header), then valid UTF-8,
 * and only then statistical detection. UTF-8 without a BOM is never guessed as windows-1252.
 * iconv-lite is used because Node's TextDecoder('windows-1252') is really Latin-1 (loses € and quotes).
 */
export function decodeText(bytes: Uint8Array, declared?: string): string {
  for (const [bom, encoding] of BOMS) {
    if (bom.every((b, i) => bytes[i] === b))
      return iconv.decode(Buffer.from(bytes.subarray(bom.length)), encoding);
  }
  if (declared && iconv.encodingExists(declared)) {
    const normalized = declared.toLowerCase().replace(/^(iso-8859-1|latin1|us-ascii|ascii)$/, 'windows-1252');
    return iconv.decode(Buffer.from(bytes), normalized);
  }
  const utf8 = tryUtf8(bytes);
  if (utf8 !== undefined) return utf8;
  const guess = chardet.detect(bytes);
  return iconv.decode(Buffer.from(bytes), guess && iconv.encodingExists(guess) ? guess : 'windows-1252');
}

function tryUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
