import { createHash } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import { InvalidInput } from '../../errors';
import { InvalidAccountData } from './errors';
import {
  MARKETPLACE_IDL,
  idlAccountDiscriminator,
  idlInstruction,
  idlTypeDef,
  type Idl,
  type IdlType,
} from './idl';

/**
 * Borsh encoding driven by the IDL, as Anchor lays data out: an 8-byte discriminator, then the
 * fields in order. Integers are little-endian; a string is a u32 byte length and UTF-8; a pubkey is
 * 32 bytes; an enum with unit variants is its variant index as one byte. Hand-written because the
 * IDL uses only these few types and the errors must name the field; test/…/anchorConformance
 * checks the bytes against Anchor's own coder.
 *
 * Values: 8-, 16- and 32-bit integers are numbers, 64-bit ones bigints (numbers accepted when
 * encoding), pubkeys PublicKeys (base58 strings accepted), enums their variant name.
 */
export type IdlValue = boolean | number | bigint | string | PublicKey | IdlStruct;
export interface IdlStruct {
  [field: string]: IdlValue;
}

export const DISCRIMINATOR_BYTES = 8;

/** Anchor's discriminator: the first 8 bytes of sha256("<namespace>:<name>"). */
export function anchorDiscriminator(namespace: 'global' | 'account' | 'event', name: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`${namespace}:${name}`).digest().subarray(0, 8));
}

const INTEGERS = {
  u8: { bytes: 1, signed: false },
  i8: { bytes: 1, signed: true },
  u16: { bytes: 2, signed: false },
  i16: { bytes: 2, signed: true },
  u32: { bytes: 4, signed: false },
  i32: { bytes: 4, signed: true },
  u64: { bytes: 8, signed: false },
  i64: { bytes: 8, signed: true },
} as const;
type IntegerType = keyof typeof INTEGERS;

const isInteger = (type: IdlType): type is IntegerType => typeof type === 'string' && type in INTEGERS;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A failure while walking the data; the public functions turn it into the right DomainError. */
class CodecFailure extends Error {}

// ---- encoding ----

export function encodeInstructionData(name: string, args: IdlStruct, idl: Idl = MARKETPLACE_IDL): Buffer {
  const ix = idlInstruction(name, idl);
  const out: Buffer[] = [Buffer.from(ix.discriminator)];
  try {
    writeFields(
      ix.args.map((a) => [a.name, a.type]),
      args,
      name,
      out,
      idl,
    );
  } catch (error) {
    if (error instanceof CodecFailure) throw new InvalidInput(error.message);
    throw error;
  }
  return Buffer.concat(out);
}

/** An account's data: discriminator and fields, zero-padded to `space` bytes when given. */
export function encodeAccountData(
  name: string,
  value: IdlStruct,
  idl: Idl = MARKETPLACE_IDL,
  space = 0,
): Buffer {
  const out: Buffer[] = [Buffer.from(idlAccountDiscriminator(name, idl))];
  try {
    writeValue({ defined: { name } }, value, name, out, idl);
  } catch (error) {
    if (error instanceof CodecFailure) throw new InvalidInput(error.message);
    throw error;
  }
  const data = Buffer.concat(out);
  if (space && data.length > space) {
    throw new InvalidInput(`${name}: encoded to ${data.length} bytes, more than the account's ${space}.`);
  }
  return space ? Buffer.concat([data, Buffer.alloc(space - data.length)]) : data;
}

/** A bare value of an IDL type, without discriminator (an instruction's return data). */
export function encodeTypeData(type: IdlType, value: IdlValue, idl: Idl = MARKETPLACE_IDL): Buffer {
  const out: Buffer[] = [];
  try {
    writeValue(type, value, typeLabel(type), out, idl);
  } catch (error) {
    if (error instanceof CodecFailure) throw new InvalidInput(error.message);
    throw error;
  }
  return Buffer.concat(out);
}

function writeFields(
  fields: [string, IdlType][],
  value: IdlStruct,
  path: string,
  out: Buffer[],
  idl: Idl,
): void {
  const known = new Set(fields.map(([name]) => name));
  const unknown = Object.keys(value).filter((k) => !known.has(k));
  if (unknown.length) {
    throw new CodecFailure(
      `${path}: unknown field ${unknown.join(', ')}; expected ${[...known].join(', ')}.`,
    );
  }
  for (const [name, type] of fields) {
    if (!Object.hasOwn(value, name) || value[name] === undefined) {
      throw new CodecFailure(`${path}.${name}: missing (${typeLabel(type)}).`);
    }
    writeValue(type, value[name]!, `${path}.${name}`, out, idl);
  }
}

function writeValue(type: IdlType, value: IdlValue, path: string, out: Buffer[], idl: Idl): void {
  if (isInteger(type)) return void out.push(writeInteger(type, value, path));
  switch (type) {
    case 'bool':
      if (typeof value !== 'boolean')
        throw new CodecFailure(`${path}: expected a boolean, got ${show(value)}.`);
      return void out.push(Buffer.of(value ? 1 : 0));
    case 'string': {
      if (typeof value !== 'string')
        throw new CodecFailure(`${path}: expected a string, got ${show(value)}.`);
      const bytes = Buffer.from(value, 'utf8');
      if (bytes.toString('utf8') !== value) {
        throw new CodecFailure(`${path}: the string is not valid Unicode (a lone surrogate).`);
      }
      const length = Buffer.alloc(4);
      length.writeUInt32LE(bytes.length);
      return void out.push(length, bytes);
    }
    case 'pubkey':
      return void out.push(pubkeyBytes(value, path));
  }
  const def = idlTypeDef(type.defined.name, idl);
  if (def.type.kind === 'enum') {
    const index = def.type.variants.findIndex((v) => v.name === value);
    if (index < 0) {
      const names = def.type.variants.map((v) => v.name).join(', ');
      throw new CodecFailure(`${path}: expected one of ${names} (${def.name}), got ${show(value)}.`);
    }
    return void out.push(Buffer.of(index));
  }
  if (typeof value !== 'object' || value === null || value instanceof PublicKey) {
    throw new CodecFailure(`${path}: expected a ${def.name} object, got ${show(value)}.`);
  }
  writeFields(
    def.type.fields.map((f) => [f.name, f.type]),
    value,
    path,
    out,
    idl,
  );
}

function writeInteger(type: IntegerType, value: IdlValue, path: string): Buffer {
  const { bytes, signed } = INTEGERS[type];
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
  else throw new CodecFailure(`${path}: expected an integer (${type}), got ${show(value)}.`);
  const bits = BigInt(bytes * 8);
  const min = signed ? -(1n << (bits - 1n)) : 0n;
  const max = signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n;
  if (n < min || n > max)
    throw new CodecFailure(`${path}: ${n} is outside the ${type} range ${min}..${max}.`);
  const buf = Buffer.alloc(bytes);
  if (bytes === 8) {
    if (signed) buf.writeBigInt64LE(n);
    else buf.writeBigUInt64LE(n);
  } else if (signed) buf.writeIntLE(Number(n), 0, bytes);
  else buf.writeUIntLE(Number(n), 0, bytes);
  return buf;
}

function pubkeyBytes(value: IdlValue, path: string): Buffer {
  if (value instanceof PublicKey) return value.toBuffer();
  if (typeof value === 'string') {
    try {
      return new PublicKey(value).toBuffer();
    } catch {
      // Reported below.
    }
  }
  throw new CodecFailure(`${path}: expected a public key (base58, 32 bytes), got ${show(value)}.`);
}

// ---- decoding ----

/** Which instruction the data is for (by discriminator) and its arguments. */
export function decodeInstructionData(
  data: Uint8Array,
  idl: Idl = MARKETPLACE_IDL,
): { name: string; args: IdlStruct } {
  if (data.length < DISCRIMINATOR_BYTES) {
    throw new InvalidInput(
      `Instruction data is ${data.length} bytes, shorter than the 8-byte discriminator.`,
    );
  }
  const head = Buffer.from(data.subarray(0, DISCRIMINATOR_BYTES));
  const ix = idl.instructions.find((i) => head.equals(Buffer.from(i.discriminator)));
  if (!ix)
    throw new InvalidInput(
      `Instruction data starts with ${head.toString('hex')}, no instruction of ${idl.metadata.name}.`,
    );
  const reader = new Reader(data, DISCRIMINATOR_BYTES);
  try {
    const args: IdlStruct = {};
    for (const arg of ix.args) args[arg.name] = reader.value(arg.type, `${ix.name}.${arg.name}`, idl);
    return { name: ix.name, args };
  } catch (error) {
    if (error instanceof CodecFailure) throw new InvalidInput(error.message);
    throw error;
  }
}

/**
 * An account's fields after checking its discriminator. Bytes past the fields are allowed: accounts
 * are allocated at their largest size (a listing id shorter than 32 bytes leaves zero padding).
 */
export function decodeAccountData(
  name: string,
  data: Uint8Array,
  address: string = name,
  idl: Idl = MARKETPLACE_IDL,
): IdlStruct {
  if (data.length < DISCRIMINATOR_BYTES) {
    throw new InvalidAccountData(
      address,
      `${data.length} bytes of data, shorter than the 8-byte discriminator of a ${name} account.`,
    );
  }
  const head = Buffer.from(data.subarray(0, DISCRIMINATOR_BYTES));
  if (!head.equals(Buffer.from(idlAccountDiscriminator(name, idl)))) {
    const other = idl.accounts.find((a) => head.equals(Buffer.from(a.discriminator)));
    throw new InvalidAccountData(
      address,
      other
        ? `holds a ${other.name} account, not a ${name}.`
        : `is not a ${name} account of ${idl.metadata.name} (discriminator ${head.toString('hex')}).`,
    );
  }
  try {
    return new Reader(data, DISCRIMINATOR_BYTES).value({ defined: { name } }, name, idl) as IdlStruct;
  } catch (error) {
    if (error instanceof CodecFailure) throw new InvalidAccountData(address, error.message);
    throw error;
  }
}

/** A bare value of an IDL type (an instruction's return data). */
export function decodeTypeData(type: IdlType, data: Uint8Array, idl: Idl = MARKETPLACE_IDL): IdlValue {
  try {
    return new Reader(data, 0).value(type, typeLabel(type), idl);
  } catch (error) {
    if (error instanceof CodecFailure) throw new InvalidInput(error.message);
    throw error;
  }
}

class Reader {
  private readonly buf: Buffer;

  constructor(
    data: Uint8Array,
    private offset: number,
  ) {
    this.buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }

  value(type: IdlType, path: string, idl: Idl): IdlValue {
    if (isInteger(type)) return this.integer(type, path);
    switch (type) {
      case 'bool': {
        const byte = this.take(1, path, type)[0]!;
        if (byte > 1)
          throw new CodecFailure(`${path}: byte ${byte} at offset ${this.offset - 1} is not a bool.`);
        return byte === 1;
      }
      case 'string': {
        const length = this.take(4, path, 'string length').readUInt32LE(0);
        const bytes = this.take(length, path, `string of ${length} bytes`);
        try {
          return utf8.decode(bytes);
        } catch {
          throw new CodecFailure(`${path}: the string bytes are not valid UTF-8.`);
        }
      }
      case 'pubkey':
        return new PublicKey(this.take(32, path, type));
    }
    const def = idlTypeDef(type.defined.name, idl);
    if (def.type.kind === 'enum') {
      const index = this.take(1, path, def.name)[0]!;
      const variant = def.type.variants[index];
      if (!variant) {
        throw new CodecFailure(
          `${path}: variant index ${index} is not a ${def.name} (${def.type.variants.length} variants).`,
        );
      }
      return variant.name;
    }
    const out: IdlStruct = {};
    for (const field of def.type.fields)
      out[field.name] = this.value(field.type, `${path}.${field.name}`, idl);
    return out;
  }

  private integer(type: IntegerType, path: string): number | bigint {
    const { bytes, signed } = INTEGERS[type];
    const buf = this.take(bytes, path, type);
    if (bytes === 8) return signed ? buf.readBigInt64LE(0) : buf.readBigUInt64LE(0);
    return signed ? buf.readIntLE(0, bytes) : buf.readUIntLE(0, bytes);
  }

  private take(count: number, path: string, what: string): Buffer {
    if (this.offset + count > this.buf.length) {
      throw new CodecFailure(
        `${path}: the data ends at byte ${this.buf.length}, ${this.offset + count - this.buf.length} short of the ${what} at offset ${this.offset}.`,
      );
    }
    const slice = this.buf.subarray(this.offset, this.offset + count);
    this.offset += count;
    return slice;
  }
}

function typeLabel(type: IdlType): string {
  return typeof type === 'string' ? type : type.defined.name;
}

function show(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (value instanceof PublicKey) return value.toBase58();
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
