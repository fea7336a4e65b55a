import { describe, expect, it } from 'vitest';
import { maskUrlCredentials, redactUrlSecrets } from '../../src/shared/maskUrl';

describe('maskUrlCredentials', () => {
  it('masks the password and query values, and leaves the rest as typed', () => {
    expect(maskUrlCredentials('http://me:p%40ss@127.0.0.1:8080/?key=abc&region=eu&debug=')).toBe(
      'http://me:••••@127.0.0.1:8080/?key=••••&region=••••&debug=',
    );
    expect(maskUrlCredentials('https://user@proxy.example.com/v1/')).toBe(
      'https://user@proxy.example.com/v1/',
    );
    expect(maskUrlCredentials('https://u:a:b@c@host/v1?abcdef&x=1#top')).toBe(
      'https://u:••••@host/v1?••••&x=••••#top',
    );
    expect(maskUrlCredentials('not a url?x=1')).toBe('not a url?x=1');
  });

  it('masks path tokens only when asked, as RPC providers put keys in the path', () => {
    const alchemy = 'https://solana-mainnet.g.alchemy.com/v2/Zx81kQ0pLm3Nb7Vc2Xa9';
    expect(maskUrlCredentials(alchemy)).toBe(alchemy);
    expect(maskUrlCredentials(alchemy, { pathTokens: true })).toBe(
      'https://solana-mainnet.g.alchemy.com/v2/••••',
    );
    expect(
      maskUrlCredentials(
        'https://old-frost.solana-mainnet.quiknode.pro/4f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6/',
        {
          pathTokens: true,
        },
      ),
    ).toBe('https://old-frost.solana-mainnet.quiknode.pro/••••/');
    // Words, short segments and the host are no tokens.
    for (const plain of [
      'https://api.devnet.solana.com',
      'http://127.0.0.1:8899',
      'https://rpc.example.com/solana/mainnet-beta/v1',
      'https://rpc.example.com/a-very-long-segment-of-words',
    ])
      expect(maskUrlCredentials(plain, { pathTokens: true })).toBe(plain);
  });
});

describe('redactUrlSecrets', () => {
  it('takes every secret of the URL out of a message, as typed or percent-encoded', () => {
    const url = 'https://me:s3cr%2Ft@rpc.example.com/v2/Zx81kQ0pLm3Nb7Vc2Xa9?api-key=k/ey+value';
    const text =
      'request to https://me:s3cr%2Ft@rpc.example.com/v2/Zx81kQ0pLm3Nb7Vc2Xa9?api-key=k%2Fey%2Bvalue failed; key k/ey+value';
    const redacted = redactUrlSecrets(text, url, { pathTokens: true });
    expect(redacted).toBe('request to https://me:••••@rpc.example.com/v2/••••?api-key=•••• failed; key ••••');
    // Without pathTokens the path is left alone; secrets shorter than 4 characters are not searched for.
    expect(redactUrlSecrets('x Zx81kQ0pLm3Nb7Vc2Xa9 y', url)).toBe('x Zx81kQ0pLm3Nb7Vc2Xa9 y');
    expect(redactUrlSecrets('a 1 b', 'https://h/?a=1')).toBe('a 1 b');
  });
});
