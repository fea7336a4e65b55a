import bs58 from 'bs58';
import { DomainError } from '../../errors';
import { randomBase62 } from '../../ids';
import { signMessage, verifySignature } from '../../wallets/keypair';
import type { InstructionArgs, SignedInstruction, SignedInstructionName } from './ledger';

export const LEDGER_MESSAGE_PREFIX = 'kbs-ledger:v1';

/** 403: an instruction whose signature is missing, forged, or by a wallet that may not sign it. */
export class LedgerSignatureRejected extends DomainError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

/** JSON with object keys sorted at every level and no whitespace: one text per value. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('non-finite number in message');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** `kbs-ledger:v1:<instruction>:<canonical JSON of the args>`, the text a wallet signs (UTF-8). */
export function instructionMessage<N extends SignedInstructionName>(
  instruction: N,
  args: InstructionArgs[N],
): string {
  return `${LEDGER_MESSAGE_PREFIX}:${instruction}:${canonicalJson(args)}`;
}

export const newNonce = (): string => randomBase62(16);

export function signInstruction<N extends SignedInstructionName>(
  instruction: N,
  args: InstructionArgs[N],
  signer: string,
  secretKey: Uint8Array,
): SignedInstruction<N> {
  const message = new TextEncoder().encode(instructionMessage(instruction, args));
  return { instruction, args, signer, signature: bs58.encode(signMessage(secretKey, message)) };
}

/**
 * Checks that `signed` is signed by its signer over its own canonical message, and that the signer is
 * one of the wallets allowed to sign it. Never trusts the caller's word for either.
 */
export function verifyInstruction(signed: SignedInstruction, allowedSigners: readonly string[]): string {
  if (!allowedSigners.includes(signed.signer)) {
    throw new LedgerSignatureRejected(
      `${signed.instruction} must be signed by ${allowedSigners.join(' or ')}, not by ${signed.signer}.`,
    );
  }
  const message = instructionMessage(signed.instruction, signed.args);
  let signature: Uint8Array;
  try {
    signature = bs58.decode(signed.signature);
  } catch {
    throw new LedgerSignatureRejected(`${signed.instruction}: the signature is not base58.`);
  }
  if (!verifySignature(signed.signer, new TextEncoder().encode(message), signature)) {
    throw new LedgerSignatureRejected(
      `${signed.instruction}: the signature does not verify for wallet ${signed.signer} over its message.`,
    );
  }
  return message;
}
