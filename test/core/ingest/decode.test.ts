import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { decodeText } from '../../../src/core/ingest/decode';

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
