import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { DECODE_PIECE_BYTES, decodeText, decodeTextInTurns } from '../../../src/core/ingest/decode';
import { EventLoopTurns } from '../../../src/core/ingest/eventLoopTurns';

describe('decodeText', () => {
  it('reads windows-1252 as windows-1252 whether declared as Latin-1 or guessed', () => {
    const bytes = iconv.encode('Café “quoted” costs 5 €', 'windows-1252');
    expect(decodeText(bytes, 'iso-8859-1')).toBe('Café “quoted” costs 5 €');
    expect(decodeText(iconv.encode('Café', 'windows-1252'))).toBe('Café');
  });
  it('keeps valid UTF-8 without a BOM as UTF-8', () => {
    expect(decodeText(new TextEncoder().encode('Grüße, 東京 🚀'))).toBe('Grüße, 東京 🚀');
  });
  it('follows a BOM over any declaration', () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode('Zürich', 'utf-16le')]);
    expect(decodeText(utf16, 'windows-1252')).toBe('Zürich');
  });
});

describe('decodeTextInTurns', () => {
  // Longer than a piece, with multi-byte characters falling across the pieces' ends.
  const text = Array.from({ length: 90_000 }, (_, i) => `Grüße ${i}, 東京 🚀\n`).join('');

  it('gives what decodeText gives: UTF-8 with and without its BOM, UTF-16, windows-1252 found late', async () => {
    const utf8 = Buffer.from(text);
    expect(utf8.length).toBeGreaterThan(2 * DECODE_PIECE_BYTES);
    const latin = `${'plain ascii line\n'.repeat(100_000)}Café “quoted” costs 5 €\n`;
    const files = [
      utf8,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8]),
      Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, 'utf-16le')]),
      Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(text, 'utf-16be')]),
      iconv.encode(latin, 'windows-1252'),
      Buffer.from('short, Grüße'),
    ];
    for (const bytes of files) {
      const decoded = await decodeTextInTurns(bytes, new EventLoopTurns());
      expect(decoded === decodeText(bytes)).toBe(true);
    }
    expect(await decodeTextInTurns(iconv.encode(latin, 'windows-1252'), new EventLoopTurns())).toBe(latin);
  });

  it("gives the thread's event loop turns while it decodes", async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    // Its clock at 0 ms: every look at it, after each piece, is a turn. The first piece ends inside a
    // character, which must not be taken for invalid UTF-8 (and decoded in one go instead).
    const bytes = Buffer.from(text);
    expect(bytes[DECODE_PIECE_BYTES]! & 0xc0).toBe(0x80);
    expect(await decodeTextInTurns(bytes, new EventLoopTurns(0))).toBe(text);
    expect(turned).toBe(true);
  });
});
