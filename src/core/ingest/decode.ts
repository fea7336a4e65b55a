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
 * and only then statistical detection (detectLegacyCharset). UTF-8 without a BOM is never guessed as
 * windows-1252.
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
  return iconv.decode(Buffer.from(bytes), asWhatwg(detectLegacyCharset(bytes)));
}

/** The commonest legacy charset, and HTML's default for a page that declares none (WHATWG Encoding). */
const WESTERN_DEFAULT = 'windows-1252';
/** chardet's names for windows-1252 (ISO-8859-1 when the text has no byte in 0x80-0x9F). */
const WESTERN = /^(windows-1252|iso-8859-1)$/i;
/** Charsets of one byte a character, whose differences from windows-1252 can be counted byte by byte. */
const SINGLE_BYTE = /^(iso-8859-\d+|windows-\d+|koi8-r)$/i;
/** Below this chardet's guess is noise. */
const MIN_CONFIDENCE = 10;
/**
 * How much higher than windows-1252 a guess must score when it reads just one character of the text
 * differently: on a few words the scores are noise ("# Doc" over "Café “quoted” – naïve €5 Straße"
 * scored windows-1250 38 and windows-1252 29; the line alone 36 each), but one Lithuanian "š" can
 * score 98 against 15.
 */
const ONE_CHAR_MARGIN = 1.5;
/** Enough text for chardet's statistics; all of a 7.6 MB page took it 3.7 s on the ingesting thread. */
const SAMPLE_BYTES = 16 * 1024;
/** Bytes of context kept on each side of a non-ASCII byte in the sample. */
const CONTEXT_BYTES = 64;

/**
 * The charset of text that is neither UTF-8 nor marked by a BOM or a declaration, from chardet's
 * guesses on the text around its non-ASCII bytes (aroundNonAscii). Any guess of 10 or more used to be
 * taken, but on a few words a tie or a close lead is noise ("naïve" read "naďve" as windows-1250):
 * windows-1252 is kept unless another charset scores higher, by half again when it reads only one
 * character differently (ONE_CHAR_MARGIN). A single-byte charset that leaves one of the bytes undefined
 * cannot be the text's, whatever it scores (windows-1252 has no 0x81, 0x8D, 0x8F, 0x90 or 0x9D, and
 * Czech "ť" is 0x9D in windows-1250). HTML pages get the same rules on their text without the markup
 * (parsers/htmlCharset.ts).
 */
export function detectLegacyCharset(bytes: Uint8Array): string {
  const sample = aroundNonAscii(bytes) ?? bytes;
  const guesses = chardet
    .analyse(sample)
    .filter(({ name }) => !/^(utf|ascii)/i.test(name) && iconv.encodingExists(name))
    .filter(({ name }) => !SINGLE_BYTE.test(name) || readsEveryByte(sample, name));
  const best = guesses[0];
  if (!best || WESTERN.test(best.name)) return WESTERN_DEFAULT;
  // windows-1252 is out only when it cannot read the text; then the best guess that can is likelier.
  if (!readsEveryByte(sample, WESTERN_DEFAULT)) return best.name;
  if (best.confidence < MIN_CONFIDENCE) return WESTERN_DEFAULT;
  const western = guesses.find(({ name }) => WESTERN.test(name))?.confidence ?? 0;
  if (best.confidence <= western) return WESTERN_DEFAULT;
  const oneChar = SINGLE_BYTE.test(best.name) && charsReadDifferently(sample, best.name) <= 1;
  if (oneChar && best.confidence < western * ONE_CHAR_MARGIN) return WESTERN_DEFAULT;
  return best.name;
}

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
const upperHalves = new Map<string, string>();
/** The characters a single-byte charset gives bytes 0x80-0xFF, U+FFFD where it defines none. */
function upperHalf(charset: string): string {
  const key = charset.toLowerCase();
  let chars = upperHalves.get(key);
  if (chars === undefined) upperHalves.set(key, (chars = iconv.decode(UPPER_HALF, key)));
  return chars;
}

/** Whether a single-byte charset defines every byte of the sample. */
function readsEveryByte(sample: Uint8Array, charset: string): boolean {
  const chars = upperHalf(charset);
  for (const byte of sample) if (byte >= 0x80 && chars[byte - 0x80] === '\uFFFD') return false;
  return true;
}

/** How many of the sample's bytes a single-byte charset reads as another character than windows-1252. */
function charsReadDifferently(sample: Uint8Array, charset: string): number {
  const chars = upperHalf(charset);
  const western = upperHalf(WESTERN_DEFAULT);
  let count = 0;
  for (const byte of sample) if (byte >= 0x80 && chars[byte - 0x80] !== western[byte - 0x80]) count++;
  return count;
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
