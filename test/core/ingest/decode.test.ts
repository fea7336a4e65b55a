import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { DECODE_PIECE_BYTES, decodeText, decodeTextInTurns } from '../../../src/core/ingest/decode';
import { EventLoopTurns } from '../../../src/core/ingest/eventLoopTurns';
import { SHARED } from '../../helpers/studio';

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

describe('binary content under a text extension', () => {
  const FIXTURE_DOCS = join(SHARED, 'fixtures', 'docs');
  // 64 bytes of a fixed xorshift sequence: "random bytes", the same on every run.
  const randomBytes = (count: number) => {
    let x = 0x2545f491;
    return Uint8Array.from({ length: count }, () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return x & 0xff;
    });
  };
  const refusal = (source: string) => ({
    code: 'invalid_document',
    message: expect.stringMatching(
      new RegExp(`^${source.replace(/\./g, '\\.')}: binary content, not text; `),
    ),
  });

  it('refuses a PDF read as text, naming the file, where it used to give mojibake', async () => {
    const pdf = readFileSync(join(FIXTURE_DOCS, 'fake-memo.pdf'));
    expect(() => decodeText(pdf, undefined, 'memo.md')).toThrow(
      expect.objectContaining(refusal('memo.md')) as Error,
    );
    await expect(decodeTextInTurns(pdf, new EventLoopTurns(), 'memo.md')).rejects.toMatchObject(
      refusal('memo.md'),
    );
    expect(() => decodeText(pdf)).toThrow(/^Binary content, not text; /);
  });

  it('refuses random bytes, with NULs or (without them) full of control characters', () => {
    const withoutNul = randomBytes(64);
    expect(withoutNul.includes(0)).toBe(false);
    const withNul = randomBytes(64).map((byte, i) => (i === 40 ? 0 : byte));
    for (const bytes of [withNul, withoutNul]) {
      expect(() => decodeText(bytes, undefined, 'noise.md')).toThrow(
        expect.objectContaining(refusal('noise.md')) as Error,
      );
    }
    // A single NUL in otherwise plain text.
    expect(() => decodeText(Buffer.from('plain\0text'), undefined, 'a.md')).toThrow(/^a\.md: binary/);
  });

  it('refuses a large file decoded in turns when a later piece holds NULs or many controls', async () => {
    const plain = 'plain ascii line\n'.repeat(100_000);
    const nul = Buffer.from(`${plain}tail\0`);
    const controls = Buffer.from(`${plain}${'\u0001\u0002x'.repeat(20_000)}`);
    expect(controls.length).toBeGreaterThan(DECODE_PIECE_BYTES);
    for (const bytes of [nul, controls]) {
      await expect(decodeTextInTurns(bytes, new EventLoopTurns(), 'big.json')).rejects.toMatchObject(
        refusal('big.json'),
      );
    }
  });

  it('still reads UTF-16 with its BOM, UTF-8, windows-1252, Latin-1 and text with a few controls', async () => {
    const text = 'Zürich, “quoted”, 5 € and 東京\n';
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, 'utf-16le')]);
    const utf16be = Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(text, 'utf-16be')]);
    expect(utf16le.includes(0)).toBe(true);
    expect(decodeText(utf16le, undefined, 'a.md')).toBe(text);
    expect(decodeText(utf16be, undefined, 'a.md')).toBe(text);
    expect(decodeText(Buffer.from(text), undefined, 'a.md')).toBe(text);
    const western = 'Café “quoted” costs 5 €, naïve façade\n';
    expect(decodeText(iconv.encode(western, 'windows-1252'), undefined, 'a.csv')).toBe(western);
    expect(decodeText(iconv.encode('Grüße aus Köln\n', 'latin1'), 'iso-8859-1', 'a.html')).toBe(
      'Grüße aus Köln\n',
    );
    const umlauts = readFileSync(join(FIXTURE_DOCS, 'umlauts-utf8.md'));
    expect(await decodeTextInTurns(umlauts, new EventLoopTurns(), 'umlauts-utf8.md')).toBe(
      umlauts.toString('utf8'),
    );
    // Form feeds, vertical tabs, terminal colours and a DOS end-of-file mark are text.
    const controlled = 'page one\fpage two\vline\n\u001b[31mred\u001b[0m\r\n\u001a';
    expect(decodeText(Buffer.from(controlled), undefined, 'log.md')).toBe(controlled);
  });
});
