import { SystemProgram } from '@solana/web3.js';
import type { ErrorCode } from '../../../shared/errors';
import { TransactionRejected, type ProgramErrorInfo } from './errors';
import { idlError, MARKETPLACE_IDL, type Idl } from './idl';

/** Anchor's framework errors the program can raise through its account constraints. */
const ANCHOR_ERRORS: Record<number, [name: string, message: string]> = {
  100: ['InstructionMissing', '8 byte instruction identifier not provided'],
  101: ['InstructionFallbackNotFound', 'Fallback functions are not supported'],
  102: ['InstructionDidNotDeserialize', 'The program could not deserialize the given instruction'],
  2000: ['ConstraintMut', 'A mut constraint was violated'],
  2001: ['ConstraintHasOne', 'A has one constraint was violated'],
  2002: ['ConstraintSigner', 'A signer constraint was violated'],
  2006: ['ConstraintSeeds', 'A seeds constraint was violated'],
  3001: ['AccountDiscriminatorNotFound', 'No 8 byte discriminator was found on the account'],
  3002: ['AccountDiscriminatorMismatch', '8 byte discriminator did not match what was expected'],
  3003: ['AccountDidNotDeserialize', 'Failed to deserialize the account'],
  3005: ['AccountNotEnoughKeys', 'Not enough account keys given to the instruction'],
  3007: ['AccountOwnedByWrongProgram', 'The given account is owned by a different program than expected'],
  3008: ['InvalidProgramId', 'Program ID was not as expected'],
  3010: ['AccountNotSigner', 'The given account did not sign'],
  3012: ['AccountNotInitialized', 'The program expected this account to be already initialized'],
};

/** The System Program's custom errors that reach this program's callers (through its CPIs). */
const SYSTEM_ERRORS: Record<number, [name: string, message: string]> = {
  0: ['AccountAlreadyInUse', 'an account with the same address already exists'],
  1: ['ResultWithNegativeLamports', 'the paying wallet does not have enough SOL'],
};

const FORBIDDEN = new Set(['Unauthorized', 'ConstraintHasOne', 'ConstraintSigner', 'AccountNotSigner']);
/**
 * The state changed under the request. The studio withdraws exactly what the listing account showed, so
 * InsufficientEarnings means another withdrawal was paid in between.
 */
const CONFLICT = new Set(['AlreadyPurchased', 'AccountAlreadyInUse', 'InsufficientEarnings']);

/**
 * A DomainError for a transaction the cluster refused. `message` is the RPC's text (e.g.
 * "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1772")
 * and `logs` the program logs, which name the failing program and, for Anchor, the account.
 */
export function transactionRejection(
  message: string,
  logs: string[],
  programId: string,
  signature?: string,
  idl: Idl = MARKETPLACE_IDL,
  /** The wallet that pays the fee (and signs), when the caller knows it: named in funding refusals. */
  feePayer?: string,
): TransactionRejected {
  const hex = /custom program error: 0x([0-9a-f]+)/i.exec(message)?.[1];
  // The innermost failure is logged first: a System Program CPI fails before the program that called it.
  const failed = logs.find((line) => /^Program \w+ failed: /.test(line));
  const failingProgram = failed ? /^Program (\w+) failed/.exec(failed)?.[1] : undefined;
  const where = signature ? `Transaction ${signature}` : 'The transaction';

  if (hex !== undefined) {
    const code = parseInt(hex, 16);
    const fromSystem = failingProgram === SystemProgram.programId.toBase58();
    const info = fromSystem ? named(code, SYSTEM_ERRORS[code]) : programError(code, idl);
    const account = /AnchorError caused by account: (\w+)/.exec(logs.join('\n'))?.[1];
    const domainCode = domainCodeOf(info.name, account);
    const by = fromSystem ? 'the System Program' : `program ${failingProgram ?? programId}`;
    const payer =
      fromSystem && info.name === 'ResultWithNegativeLamports' && feePayer ? ` (${feePayer})` : '';
    const text = `${where} was refused by ${by}: ${info.name} (${code}): ${info.message}${payer}${account ? ` [account: ${account}]` : ''}.`;
    return new TransactionRejected(domainCode, text, info, logs, signature);
  }
  if (/no record of a prior credit|insufficient funds for fee/i.test(message)) {
    return new TransactionRejected(
      'invalid_request',
      `${where} was refused: the fee payer${feePayer ? ` ${feePayer}` : ''} has no SOL to pay the fee. Fund ${feePayer ? 'that wallet' : 'the wallet'} (on devnet: request an airdrop).`,
      undefined,
      logs,
      signature,
    );
  }
  return new TransactionRejected(
    'internal_error',
    `${where} was refused: ${message}`,
    undefined,
    logs,
    signature,
  );
}

/**
 * The same for a transaction `err` object, as getSignatureStatuses (landed, failed) or
 * simulateTransaction report it: e.g. {InstructionError: [0, {Custom: 6002}]}.
 */
export function statusRejection(
  err: unknown,
  programId: string,
  signature?: string,
  logs: string[] = [],
  idl: Idl = MARKETPLACE_IDL,
): TransactionRejected {
  const custom = (err as { InstructionError?: [number, { Custom?: number }] })?.InstructionError?.[1]?.Custom;
  const message =
    typeof custom === 'number' ? `custom program error: 0x${custom.toString(16)}` : JSON.stringify(err);
  return transactionRejection(message, logs, programId, signature, idl);
}

/** A program error code's name and message: the IDL's own errors, else Anchor's framework errors. */
export function programError(code: number, idl: Idl = MARKETPLACE_IDL): ProgramErrorInfo {
  const own = idlError(code, idl);
  if (own) return { code, name: own.name, message: own.msg ?? own.name };
  return named(code, ANCHOR_ERRORS[code]);
}

function named(code: number, entry: [string, string] | undefined): ProgramErrorInfo {
  return entry
    ? { code, name: entry[0], message: entry[1] }
    : { code, name: 'Unknown', message: `error code ${code}` };
}

function domainCodeOf(name: string, account: string | undefined): ErrorCode {
  if (FORBIDDEN.has(name)) return 'forbidden';
  if (CONFLICT.has(name)) return 'conflict';
  if (name === 'AccountNotInitialized') return account === 'listing' ? 'listing_not_found' : 'not_found';
  return 'invalid_request';
}
