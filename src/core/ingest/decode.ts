import chardet from 'chardet';
import iconv from 'iconv-lite';
import { DomainError } from '../errors';
import { InvalidDocument } from './errors';
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
 * Binary content is refused (refuseBinary): the windows-1252 fallback reads any bytes at all, so a PDF
 * renamed `.md` was ingested as 554 chunks of mojibake. `source` names the file in that refusal.
 */
export function decodeText(bytes: Uint8Array, declared?: string, source?: string): string {
  const bom = byteOrderMark(bytes);
  const wide = bom ? bom.encoding !== 'utf-8' : declared !== undefined && isWideCharset(declared);
  if (!wide) refuseNulBytes(bytes, source);
  const text = decodeUnchecked(bytes, bom, declared);
  refuseBinary(text, source);
  return text;
}

function decodeUnchecked(
  bytes: Uint8Array,
  bom: { length: number; encoding: string } | undefined,
  declared: string | undefined,
): string {
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

/** UTF-16 and UTF-32, whose text holds NUL bytes (the high bytes of ASCII characters). */
const isWideCharset = (label: string) => /^(utf-?16|utf-?32|ucs-?2|ucs-?4)/i.test(label.trim());

/**
 * C0 control characters that text does not hold in number: all but tab, line feed, vertical tab (a
 * line break in text copied from Word), form feed, carriage return and escape (colours in terminal
 * logs). NUL is refused on its own, even once.
 */
// eslint-disable-next-line no-control-regex
const STRAY_CONTROLS = /[\u0001-\u0008\u000e-\u001a\u001c-\u001f]/;
/** More stray controls than this share of the characters (and at least two) is binary: random bytes hold about 10%. */
const MAX_CONTROL_SHARE = 0.01;

/** NUL bytes outside UTF-16 or UTF-32: no text file holds one, and nearly every binary file does. */
function refuseNulBytes(bytes: Uint8Array, source: string | undefined): void {
  if (Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(0) !== -1)
    throw binaryContent(source);
}

/**
 * Counts what makes decoded text binary, a piece at a time (decodeTextInTurns looks at each piece
 * between turns): a NUL character, or more stray controls than MAX_CONTROL_SHARE of the characters.
 */
class BinaryCheck {
  private controls = 0;
  private chars = 0;
  /** Past this many stray controls the text is binary however long it turns out (it has at most maxChars). */
  private readonly surelyBinary: number;

  constructor(
    private readonly source: string | undefined,
    maxChars: number,
  ) {
    this.surelyBinary = allowedControls(maxChars);
  }

  add(piece: string): void {
    if (piece.includes('\0')) throw binaryContent(this.source);
    const found = new RegExp(STRAY_CONTROLS.source, 'g');
    while (found.exec(piece) !== null)
      if (++this.controls > this.surelyBinary) throw binaryContent(this.source);
    this.chars += piece.length;
  }

  finish(): void {
    if (this.controls > allowedControls(this.chars)) throw binaryContent(this.source);
  }
}

const allowedControls = (chars: number) => Math.max(1, Math.floor(chars * MAX_CONTROL_SHARE));

function refuseBinary(text: string, source: string | undefined): void {
  const check = new BinaryCheck(source, text.length);
  check.add(text);
  check.finish();
}

function binaryContent(source: string | undefined): DomainError {
  const advice =
    'is it a PDF, an image or an archive under a text extension? Give the file its real extension, or save it as text (UTF-8).';
  return source === undefined
    ? new DomainError('invalid_document', `Binary content, not text; ${advice}`)
    : new InvalidDocument(source, `binary content, not text; ${advice}`);
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
export async function decodeTextInTurns(
  bytes: Uint8Array,
  turns: EventLoopTurns,
  source?: string,
): Promise<string> {
  const bom = byteOrderMark(bytes);
  if ((bom && bom.encoding !== 'utf-8') || bytes.length <= DECODE_PIECE_BYTES)
    return decodeText(bytes, undefined, source);
  refuseNulBytes(bytes, source);
  // Like decodeText's: a leading UTF-8 byte order mark is dropped, and invalid UTF-8 is not guessed at.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const parts: string[] = [];
  // UTF-8 has no more characters than bytes.
  const check = new BinaryCheck(source, bytes.length);
  try {
    for (let at = 0; at < bytes.length; at += DECODE_PIECE_BYTES) {
      const end = at + DECODE_PIECE_BYTES;
      const part = decoder.decode(bytes.subarray(at, end), { stream: end < bytes.length });
      check.add(part);
      parts.push(part);
      await turns.take();
    }
  } catch (err) {
    if (err instanceof DomainError) throw err;
    return decodeText(bytes, undefined, source);
  }
  check.finish();
  return parts.join('');
}
