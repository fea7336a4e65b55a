import chardet from 'chardet';
import iconv from 'iconv-lite';
import type { EventLoopTurns } from './eventLoopTurns';

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
  const bom = byteOrderMark(bytes);
  if (bom) return iconv.decode(Buffer.from(bytes.subarray(bom.length)), bom.encoding);
  if (declared && iconv.encodingExists(declared)) return iconv.decode(Buffer.from(bytes), asWhatwg(declared));
  const utf8 = tryUtf8(bytes);
  if (utf8 !== undefined) return utf8;
  // Not UTF-8, so a UTF-8 or ASCII guess is wrong; without a better one, windows-1252 is the commonest legacy charset.
  const guess = chardet
    .analyse(bytes)
    .find((c) => !/^(utf-8|ascii)$/i.test(c.name) && c.confidence >= 10 && iconv.encodingExists(c.name));
  return iconv.decode(Buffer.from(bytes), guess ? asWhatwg(guess.name) : 'windows-1252');
}

/** The byte order mark the bytes start with, if any: its length and the encoding it stands for. */
export function byteOrderMark(bytes: Uint8Array): { length: number; encoding: string } | undefined {
  const found = BOMS.find(([bom]) => bom.every((b, i) => bytes[i] === b));
  return found && { length: found[0].length, encoding: found[1] };
}

/** As browsers do (WHATWG Encoding): Latin-1 and ASCII labels mean windows-1252, which adds € and curly quotes. */
const asWhatwg = (label: string) =>
  label.toLowerCase().replace(/^(iso-8859-1|latin1|us-ascii|ascii)$/, 'windows-1252');

function tryUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Bytes decoded between two looks at the clock (decodeTextInTurns). */
export const DECODE_PIECE_BYTES = 1 << 20;

/**
 * decodeText's text, decoded a piece at a time in turns with the thread's other work when the file is
 * UTF-8 (with or without its byte order mark), as most are: decoding 6.8 MB at once held the server's
 * thread 15–40 ms. Anything else is decoded as decodeText does.
 */
export async function decodeTextInTurns(bytes: Uint8Array, turns: EventLoopTurns): Promise<string> {
  const bom = byteOrderMark(bytes);
  if ((bom && bom.encoding !== 'utf-8') || bytes.length <= DECODE_PIECE_BYTES) return decodeText(bytes);
  // Like decodeText's: a leading UTF-8 byte order mark is dropped, and invalid UTF-8 is not guessed at.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const parts: string[] = [];
  try {
    for (let at = 0; at < bytes.length; at += DECODE_PIECE_BYTES) {
      const end = at + DECODE_PIECE_BYTES;
      parts.push(decoder.decode(bytes.subarray(at, end), { stream: end < bytes.length }));
      await turns.take();
    }
  } catch {
    return decodeText(bytes);
  }
  return parts.join('');
}
