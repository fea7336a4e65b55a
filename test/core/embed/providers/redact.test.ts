import { describe, expect, it } from 'vitest';
import { redactKey } from '../../../../src/core/embed/providers/redact';

const KEY = 'co-FULLSECRET-zyx987';

describe('redactKey', () => {
  it('removes the whole key wherever it is quoted', () => {
    expect(redactKey(`invalid api token ${KEY}`, KEY)).toBe('invalid api token [redacted]');
    expect(redactKey(`${KEY} / ${KEY}`, KEY)).toBe('[redacted] / [redacted]');
  });

  it('removes any run of 8 or more of its characters: a prefix, a suffix, a middle, another case', () => {
    expect(redactKey('key co-FULLSEC… refused', KEY)).toBe('key [redacted]… refused');
    expect(redactKey('key ending CRET-zyx987 refused', KEY)).toBe('key ending [redacted] refused');
    expect(redactKey('key *****FULLSECRET***', KEY)).toBe('key *****[redacted]***');
    expect(redactKey('key CO-fullsecret-ZYX987', KEY)).toBe('key [redacted]');
    // Seven characters of it are not enough to say it is the key.
    expect(redactKey('key co-FULL*** refused', KEY)).toBe('key co-FULL*** refused');
  });

  it('removes bearer tokens and Authorization header values, whatever the key', () => {
    expect(redactKey('sent Authorization: Bearer abcdefgh12345678', KEY)).toBe(
      'sent Authorization: [redacted]',
    );
    expect(redactKey('{"authorization":"other-token"}', KEY)).toBe('{"authorization":"[redacted]"}');
    expect(redactKey('Headers.append: "Bearer xyz\n" is an invalid header value.', KEY)).toBe(
      'Headers.append: "Bearer [redacted]\n" is an invalid header value.',
    );
  });

  it("removes a URL's password", () => {
    expect(redactKey('could not reach https://me:hunter22@proxy.example/v1', KEY)).toBe(
      'could not reach https://me:[redacted]@proxy.example/v1',
    );
  });

  it('leaves text without the key alone, and does not hunt for a tiny key', () => {
    const text = 'The model `x` does not exist or you do not have access to it.';
    expect(redactKey(text, KEY)).toBe(text);
    expect(redactKey('k-1 is fine', 'k-1')).toBe('k-1 is fine');
  });
});
