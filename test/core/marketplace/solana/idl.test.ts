import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  ACCOUNT_NAMES,
  DEFAULT_PROGRAM_ID,
  INSTRUCTION_NAMES,
  MARKETPLACE_IDL,
  anchorDiscriminator,
  idlInstruction,
  parseIdl,
} from '../../../../src/core/marketplace/solana';

const idlPath = new URL('../../../../resources/idl/kb_marketplace.json', import.meta.url);
const rawIdl = () => JSON.parse(readFileSync(idlPath, 'utf8'));
const sha8 = (text: string) => [...createHash('sha256').update(text).digest().subarray(0, 8)];

describe('the marketplace IDL', () => {
  it('is Anchor 0.30 JSON (spec 0.1.0) for kb_marketplace at the beta program ID', () => {
    expect(MARKETPLACE_IDL.metadata).toMatchObject({ name: 'kb_marketplace', spec: '0.1.0' });
    expect(MARKETPLACE_IDL.address).toBe(DEFAULT_PROGRAM_ID);
    expect(new PublicKey(DEFAULT_PROGRAM_ID).toBase58()).toBe(DEFAULT_PROGRAM_ID);
  });

  it('has exactly the five instructions of spec §3, each discriminated by sha256("global:<name>")[0..8]', () => {
    expect(MARKETPLACE_IDL.instructions.map((i) => i.name).sort()).toEqual([...INSTRUCTION_NAMES].sort());
    for (const ix of MARKETPLACE_IDL.instructions) {
      expect(ix.discriminator, ix.name).toEqual(sha8(`global:${ix.name}`));
      expect([...anchorDiscriminator('global', ix.name)]).toEqual(ix.discriminator);
    }
  });

  it('discriminates Listing and AccessCredential accounts by sha256("account:<Name>")[0..8]', () => {
    expect(MARKETPLACE_IDL.accounts.map((a) => a.name).sort()).toEqual([...ACCOUNT_NAMES].sort());
    for (const account of MARKETPLACE_IDL.accounts) {
      expect(account.discriminator, account.name).toEqual(sha8(`account:${account.name}`));
    }
  });

  it('declares the PDA seeds of DESIGN §3 and the signer/writable flags of each account', () => {
    const seedsOf = (ix: string, account: string) =>
      idlInstruction(ix).accounts.find((a) => a.name === account)?.pda?.seeds;
    const text = (value: number[]) => Buffer.from(value).toString('utf8');
    const create = seedsOf('create_listing', 'listing')!;
    expect(create[0]!.kind === 'const' && text(create[0]!.value)).toBe('listing');
    expect(create.slice(1)).toEqual([
      { kind: 'account', path: 'creator' },
      { kind: 'arg', path: 'listing_id' },
    ]);
    const credential = seedsOf('purchase_access', 'credential')!;
    expect(credential[0]!.kind === 'const' && text(credential[0]!.value)).toBe('access');
    expect(credential.slice(1)).toEqual([
      { kind: 'account', path: 'listing' },
      { kind: 'account', path: 'buyer' },
    ]);
    const flags = (ix: string) =>
      idlInstruction(ix).accounts.map((a) => `${a.name}${a.signer ? ':s' : ''}${a.writable ? ':w' : ''}`);
    expect(flags('create_listing')).toEqual(['creator:s:w', 'listing:w', 'system_program']);
    expect(flags('purchase_access')).toEqual(['buyer:s:w', 'listing:w', 'credential:w', 'system_program']);
    expect(flags('verify_access')).toEqual(['holder', 'listing', 'credential']);
    expect(flags('revoke_access')).toEqual(['authority:s', 'holder:w', 'listing', 'credential:w']);
    expect(flags('withdraw_earnings')).toEqual(['creator:s:w', 'listing:w']);
  });

  it('refuses an IDL that uses an undefined type, naming where', () => {
    const idl = rawIdl();
    idl.instructions[0].args[1].type = { defined: { name: 'Missing' } };
    expect(() => parseIdl(idl, 'test.json')).toThrow(
      "test.json: instruction create_listing, arg access_model uses the undefined type 'Missing'.",
    );
  });

  it('refuses a discriminator that is not 8 bytes and a program address that is not a public key', () => {
    const short = rawIdl();
    short.accounts[0].discriminator = [1, 2, 3];
    expect(() => parseIdl(short, 'test.json')).toThrow(/test\.json: accounts\.0\.discriminator/);
    const badAddress = rawIdl();
    badAddress.address = 'not-a-key';
    expect(() => parseIdl(badAddress, 'test.json')).toThrow(
      /test\.json: address: must be a base58 public key/,
    );
  });

  it('refuses IDL types this codec does not encode (vec) when loaded', () => {
    const idl = rawIdl();
    idl.types[0].type.fields[0].type = { vec: 'u8' };
    expect(() => parseIdl(idl, 'test.json')).toThrow(/test\.json: types\.0\.type\.fields\.0\.type/);
  });
});
