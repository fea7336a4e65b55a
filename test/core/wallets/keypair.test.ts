import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  generateKeypair,
  isWalletAddress,
  keypairFromSolanaCliJson,
  signMessage,
  verifySignature,
} from '../../../src/core/wallets/keypair';
import { DomainError } from '../../../src/core/errors';

describe('Solana keypairs', () => {
  it('generate keys Solana itself accepts', () => {
    const ours = generateKeypair();
    const theirs = Keypair.fromSecretKey(ours.secretKey);
    expect(theirs.publicKey.toBase58()).toBe(ours.address);
    expect(PublicKey.isOnCurve(new PublicKey(ours.address).toBytes())).toBe(true);
    // Each from its own random seed.
    expect(generateKeypair().address).not.toBe(ours.address);
  });

  it('import the Solana CLI id.json format', () => {
    const solana = Keypair.generate();
    const imported = keypairFromSolanaCliJson(JSON.stringify(Array.from(solana.secretKey)));
    expect(imported.address).toBe(solana.publicKey.toBase58());
  });

  it('refuse malformed or mismatched key files with a clear message', () => {
    const a = Keypair.generate();
    const b = Keypair.generate();
    const mismatched = [...a.secretKey.slice(0, 32), ...b.secretKey.slice(32)];
    for (const [text, message] of [
      ['not json', /not JSON/],
      ['[1,2,3]', /array of 64 numbers/],
      [JSON.stringify(new Array(64).fill(256)), /0\.\.255/],
      [JSON.stringify(mismatched), /does not match/],
    ] as const) {
      expect(() => keypairFromSolanaCliJson(text)).toThrow(DomainError);
      expect(() => keypairFromSolanaCliJson(text)).toThrow(message);
    }
  });

  it('sign and verify ed25519 messages', () => {
    const kp = generateKeypair();
    const msg = new TextEncoder().encode('kbs-auth:v1:GET:/v1/listings');
    const sig = signMessage(kp.secretKey, msg);
    expect(verifySignature(kp.address, msg, sig)).toBe(true);
    expect(verifySignature(kp.address, new TextEncoder().encode('other'), sig)).toBe(false);
    expect(verifySignature(generateKeypair().address, msg, sig)).toBe(false);
    expect(verifySignature('not-base58!', msg, sig)).toBe(false);
  });

  it('recognise wallet addresses', () => {
    expect(isWalletAddress(generateKeypair().address)).toBe(true);
    expect(isWalletAddress('abc')).toBe(false);
    expect(isWalletAddress('0OIl')).toBe(false);
  });
});
