import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  instructionMessage,
  signInstruction,
  verifyInstruction,
} from '../../../../src/core/marketplace/ledger/signing';
import { generateKeypair, verifySignature } from '../../../../src/core/wallets/keypair';

const wallet = generateKeypair();
const other = generateKeypair();
const args = { listingId: 'lst_A', holder: other.address, nonce: 'n1' };

describe('ledger instruction signing', () => {
  it('writes canonical JSON: keys sorted at every level, no whitespace, undefined left out', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: true, y: null }], c: 'x' }, u: undefined })).toBe(
      '{"a":{"c":"x","d":[2,{"y":null,"z":true}]},"b":1}',
    );
    expect(canonicalJson({ b: 1, a: 2 })).toBe(canonicalJson({ a: 2, b: 1 }));
  });

  it('signs kbs-ledger:v1:<instruction>:<canonical args> with ed25519', () => {
    const message = instructionMessage('revoke_access', args);
    expect(message).toBe(
      `kbs-ledger:v1:revoke_access:{"holder":"${other.address}","listingId":"lst_A","nonce":"n1"}`,
    );
    const signed = signInstruction('revoke_access', args, wallet.address, wallet.secretKey);
    expect(
      verifySignature(wallet.address, new TextEncoder().encode(message), bs58.decode(signed.signature)),
    ).toBe(true);
    expect(verifyInstruction(signed, [wallet.address])).toBe(message);
  });

  it('refuses changed arguments, another signer and signers that are not allowed', () => {
    const signed = signInstruction('revoke_access', args, wallet.address, wallet.secretKey);
    expect(() =>
      verifyInstruction({ ...signed, args: { ...args, listingId: 'lst_B' } }, [wallet.address]),
    ).toThrow(/does not verify/);
    expect(() => verifyInstruction({ ...signed, signer: other.address }, [other.address])).toThrow(
      /does not verify/,
    );
    expect(() => verifyInstruction(signed, [other.address])).toThrow(/must be signed by/);
    expect(() => verifyInstruction({ ...signed, signature: '0OIl' }, [wallet.address])).toThrow(/not base58/);
  });
});
