import { describe, expect, it } from 'vitest';
import { isAllowedPermission, isExternalWebUrl, isSameOrigin } from '../../src/main/navigationPolicy';

describe('navigation policy', () => {
  const origin = 'http://127.0.0.1:51234';

  it('keeps navigation on the studio origin only', () => {
    expect(isSameOrigin('http://127.0.0.1:51234/#/keys', origin)).toBe(true);
    expect(isSameOrigin('http://127.0.0.1:51235/', origin)).toBe(false);
    expect(isSameOrigin('http://localhost:51234/', origin)).toBe(false);
    expect(isSameOrigin('https://127.0.0.1:51234/', origin)).toBe(false);
    expect(isSameOrigin('file:///etc/passwd', origin)).toBe(false);
    expect(isSameOrigin('not a url', origin)).toBe(false);
  });

  it('opens only http(s) links in the system browser', () => {
    expect(isExternalWebUrl('https://docs.solana.com/')).toBe(true);
    expect(isExternalWebUrl('http://example.org/a?b')).toBe(true);
    for (const url of [
      'file:///C:/Windows/system32/calc.exe',
      'javascript:alert(1)',
      'smb://host/share',
      'ms-msdt:x',
      '',
    ]) {
      expect(isExternalWebUrl(url)).toBe(false);
    }
  });

  it('grants the clipboard write the copy buttons need, and nothing else', () => {
    expect(isAllowedPermission('clipboard-sanitized-write')).toBe(true);
    for (const permission of ['media', 'geolocation', 'notifications', 'openExternal', 'clipboard-read']) {
      expect(isAllowedPermission(permission)).toBe(false);
    }
  });
});
