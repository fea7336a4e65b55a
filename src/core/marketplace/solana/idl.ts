import { z } from 'zod';
import bs58 from 'bs58';
import rawIdl from '../../../../resources/idl/kb_marketplace.json';
import { InvalidInput } from '../../errors';
import { describeIssues } from '../../validation';

/**
 * The marketplace program's interface in Anchor 0.30's IDL format (spec 0.1.0). This module checks
 * the subset this studio encodes: integer, bool, string and pubkey fields, structs, and enums with
 * unit variants. Anything else in an IDL is refused when it is loaded, not when it is first used.
 */

export const PRIMITIVE_TYPES = [
  'bool',
  'u8',
  'i8',
  'u16',
  'i16',
  'u32',
  'i32',
  'u64',
  'i64',
  'string',
  'pubkey',
] as const;
export type IdlPrimitive = (typeof PRIMITIVE_TYPES)[number];

const Discriminator = z.array(z.number().int().min(0).max(255)).length(8);
const Address = z.string().refine(isBase58PublicKey, 'must be a base58 public key (32 bytes)');

const IdlTypeSchema = z.union([
  z.enum(PRIMITIVE_TYPES),
  z.object({ defined: z.object({ name: z.string().min(1) }) }),
]);
export type IdlType = z.infer<typeof IdlTypeSchema>;

const FieldSchema = z.object({
  name: z.string().min(1),
  docs: z.array(z.string()).optional(),
  type: IdlTypeSchema,
});
export type IdlField = z.infer<typeof FieldSchema>;

const SeedSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('const'), value: z.array(z.number().int().min(0).max(255)) }),
  z.object({ kind: z.literal('arg'), path: z.string() }),
  z.object({ kind: z.literal('account'), path: z.string(), account: z.string().optional() }),
]);
export type IdlSeed = z.infer<typeof SeedSchema>;

const InstructionAccountSchema = z.object({
  name: z.string().min(1),
  docs: z.array(z.string()).optional(),
  writable: z.boolean().optional(),
  signer: z.boolean().optional(),
  address: Address.optional(),
  pda: z.object({ seeds: z.array(SeedSchema) }).optional(),
  relations: z.array(z.string()).optional(),
});
export type IdlInstructionAccount = z.infer<typeof InstructionAccountSchema>;

const InstructionSchema = z.object({
  name: z.string().min(1),
  docs: z.array(z.string()).optional(),
  discriminator: Discriminator,
  accounts: z.array(InstructionAccountSchema),
  args: z.array(FieldSchema),
  returns: IdlTypeSchema.optional(),
});
export type IdlInstruction = z.infer<typeof InstructionSchema>;

const TypeDefSchema = z.object({
  name: z.string().min(1),
  docs: z.array(z.string()).optional(),
  type: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('struct'), fields: z.array(FieldSchema) }),
    z.object({
      kind: z.literal('enum'),
      variants: z
        .array(z.object({ name: z.string().min(1) }).strict())
        .min(1)
        .max(256),
    }),
  ]),
});
export type IdlTypeDef = z.infer<typeof TypeDefSchema>;

const IdlSchema = z.object({
  address: Address,
  metadata: z.object({
    name: z.string(),
    version: z.string(),
    spec: z.string(),
    description: z.string().optional(),
  }),
  instructions: z.array(InstructionSchema),
  accounts: z.array(z.object({ name: z.string().min(1), discriminator: Discriminator })),
  errors: z
    .array(z.object({ code: z.number().int(), name: z.string(), msg: z.string().optional() }))
    .default([]),
  types: z.array(TypeDefSchema),
  constants: z.array(z.object({ name: z.string(), type: z.string(), value: z.string() })).default([]),
});
export type Idl = z.infer<typeof IdlSchema>;

/** Validates an IDL's shape and that every `defined` name, account and enum it uses resolves. */
export function parseIdl(json: unknown, source = 'IDL'): Idl {
  const result = IdlSchema.safeParse(json);
  if (!result.success) throw new InvalidInput(`${source}: ${describeIssues(result.error.issues, 'idl')}`);
  const idl = result.data;
  const types = new Map(idl.types.map((t) => [t.name, t]));
  const checkType = (type: IdlType, where: string) => {
    if (typeof type === 'object' && !types.has(type.defined.name)) {
      throw new InvalidInput(`${source}: ${where} uses the undefined type '${type.defined.name}'.`);
    }
  };
  for (const ix of idl.instructions) {
    for (const arg of ix.args) checkType(arg.type, `instruction ${ix.name}, arg ${arg.name}`);
    if (ix.returns) checkType(ix.returns, `instruction ${ix.name}, returns`);
  }
  for (const def of idl.types) {
    if (def.type.kind === 'struct') {
      for (const field of def.type.fields) checkType(field.type, `type ${def.name}, field ${field.name}`);
    }
  }
  for (const account of idl.accounts) {
    if (types.get(account.name)?.type.kind !== 'struct') {
      throw new InvalidInput(`${source}: account ${account.name} has no struct in 'types'.`);
    }
  }
  return idl;
}

export const MARKETPLACE_IDL: Idl = parseIdl(rawIdl, 'resources/idl/kb_marketplace.json');

/**
 * The beta program ID, configurable with `kbstudio settings set solana.programId` or
 * KBSTUDIO_PROGRAM_ID. A placeholder until the hosted service publishes its program.
 */
export const DEFAULT_PROGRAM_ID: string = MARKETPLACE_IDL.address;

export const INSTRUCTION_NAMES = [
  'create_listing',
  'purchase_access',
  'verify_access',
  'revoke_access',
  'withdraw_earnings',
] as const;
export type InstructionName = (typeof INSTRUCTION_NAMES)[number];

export const ACCOUNT_NAMES = ['Listing', 'AccessCredential'] as const;
export type AccountName = (typeof ACCOUNT_NAMES)[number];

export function idlInstruction(name: string, idl: Idl = MARKETPLACE_IDL): IdlInstruction {
  const ix = idl.instructions.find((i) => i.name === name);
  if (!ix) throw new InvalidInput(`The IDL ${idl.metadata.name} has no instruction '${name}'.`);
  return ix;
}

export function idlTypeDef(name: string, idl: Idl = MARKETPLACE_IDL): IdlTypeDef {
  const def = idl.types.find((t) => t.name === name);
  if (!def) throw new InvalidInput(`The IDL ${idl.metadata.name} has no type '${name}'.`);
  return def;
}

export function idlAccountDiscriminator(name: string, idl: Idl = MARKETPLACE_IDL): Uint8Array {
  const account = idl.accounts.find((a) => a.name === name);
  if (!account) throw new InvalidInput(`The IDL ${idl.metadata.name} has no account '${name}'.`);
  return Uint8Array.from(account.discriminator);
}

/** The IDL's `errors` entry for a custom program error code, if it has one. */
export function idlError(code: number, idl: Idl = MARKETPLACE_IDL): Idl['errors'][number] | undefined {
  return idl.errors.find((e) => e.code === code);
}

function isBase58PublicKey(value: string): boolean {
  try {
    return bs58.decode(value).length === 32;
  } catch {
    return false;
  }
}
