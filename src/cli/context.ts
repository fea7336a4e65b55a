import type { Command } from 'commander';
import { DomainError, Forbidden, InvalidInput } from '../core/errors';
import type { ErrorCode } from '../shared/errors';
import { DataDirNotADirectory, DataDirNotWritable, storageFailure } from '../core/uploads/storageErrors';
import { openServices, type StudioServices } from '../db/services';
import { resolveDataDir } from './dataDir';
import { createOutput, type Output } from './output';

export interface GlobalOptions {
  dataDir?: string;
  json?: boolean;
}

export interface CommandContext {
  services: StudioServices;
  out: Output;
}

/** Opens the data directory for one command and closes it afterwards. */
export async function withServices(
  command: Command,
  run: (ctx: CommandContext) => unknown | Promise<unknown>,
) {
  const globals = command.optsWithGlobals<GlobalOptions>();
  const dataDir = resolveDataDir(globals.dataDir);
  const services = openDataDirServices(dataDir);
  try {
    await run({ services, out: createOutput(Boolean(globals.json)) });
  } catch (err) {
    // SQLite's "database or disk is full" names neither the disk nor the folder.
    throw inDataDirTerms(storageFailure(err, dataDir) ?? inFlagTerms(err, command));
  } finally {
    services.close();
  }
}

/**
 * The studio's services on `dataDir`; a data directory that is a file, or that this user cannot write,
 * says so and how to choose another.
 */
export function openDataDirServices(dataDir: string): StudioServices {
  try {
    return openServices(dataDir, { environment: process.env });
  } catch (err) {
    // openDataDir names the directory itself; what the services write as they open (the recovery of
    // interrupted jobs) fails with SQLite's bare "attempt to write a readonly database".
    throw inDataDirTerms(storageFailure(err, dataDir) ?? err);
  }
}

/**
 * A data directory the user chose (--data-dir, KBSTUDIO_DATA_DIR) that does not fit, in the terms of the
 * command line. One this user cannot write is `forbidden`, not the `internal_error` the server answers
 * for its own directory: nothing failed inside the studio, and the user can fix it. Reading commands are
 * refused too: every command writes as it opens the data directory (an older schema migrated, the
 * scratch folder claimed, interrupted jobs recovered; `query` logs the query), and SQLite cannot read a
 * WAL database in a directory it may not write unless its -shm file is already there (docs/reliability.md,
 * "A read-only data directory").
 */
function inDataDirTerms(err: unknown): unknown {
  const withFlags = (message: string) => message.replace(/\.$/, ' (--data-dir or KBSTUDIO_DATA_DIR).');
  if (err instanceof DataDirNotADirectory) return new InvalidInput(withFlags(err.message));
  if (err instanceof DataDirNotWritable) return new Forbidden(withFlags(err.message));
  return err;
}

/** A number as people write it on a command line: decimal digits, a sign, a point, an exponent. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * A number flag's value, or NaN, which the services' schemas (or the command's own check) refuse naming
 * the flag. Only decimal notation is a number here: `Number('0x10')` is 16, and a price typed `0x10`
 * silently became 16 SOL; `Infinity` is no value of any flag.
 */
export const numberFlag = (value: string): number => {
  const text = value.trim();
  return DECIMAL.test(text) ? Number(text) : NaN;
};
export const listFlag = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Fields of the services' inputs whose flag is not their name in kebab case. */
const FLAG_OF_FIELD: Record<string, string> = {
  retrievalRateLimit: '--rate-limit',
  retrievalDenseWeight: '--dense-weight',
  creatorWallet: '--wallet',
  baseUrl: '--to',
  listingId: '--listing',
  strategy: '--chunking',
};

/** zod's wording for a flag left out or not a number, as a person who typed flags would put it. */
const PLAIN_WORDS: [RegExp, string][] = [
  [/^Invalid input: expected \w+, received undefined$/, 'required'],
  [/^Invalid input: expected (number|int), received NaN$/, 'expected a number written in decimal digits'],
  [/^Invalid input: expected (number|int), received Infinity$/, 'the number is too large'],
  [/^Invalid input: expected int, received number$/, 'expected a whole number'],
];

/**
 * Codes of errors about what the user typed for a flag, whose leading field is renamed to the flag
 * (inFlagTerms): a bad value, an embedding model not supported, a change the listing's state refuses.
 */
const FLAG_FIELD_CODES = new Set<ErrorCode>(['invalid_request', 'unsupported_embedding_model', 'conflict']);

/**
 * Codes of errors that are the user's arguments (a bad value for a flag), worth a pointer to the
 * command's help. A conflict with the data's state (credentials held, a listing on chain) is not: the
 * command was typed right.
 */
const USAGE_CODES = new Set<ErrorCode>(['invalid_request', 'unsupported_embedding_model']);

/**
 * Whether `err` is about a value typed for a flag of `command` (or of a command above it, `--data-dir`):
 * an `invalid_request` (or an unsupported `--embedding-model`) whose message begins with that flag
 * (`--top-k: Too big: …`, as inFlagTerms puts the services' validation errors). Those are the user's
 * arguments, worth a pointer to the command's help; an error about the data (an unknown listing id, a
 * missing file) is not.
 */
export function isFlagValueError(err: unknown, command: Command): boolean {
  if (!(err instanceof DomainError) || !USAGE_CODES.has(err.code)) return false;
  const flag = /^(--[A-Za-z0-9][\w-]*)[\s:,]/.exec(err.message)?.[1];
  if (flag === undefined) return false;
  for (let c: Command | null = command; c; c = c.parent) {
    if (c.options.some((o) => o.long === flag)) return true;
  }
  return false;
}

const flagOf = (field: string): string =>
  FLAG_OF_FIELD[field] ?? `--${field.replace(/_/g, '-').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/**
 * An error of the services names the fields of their input (`retrievalRateLimit: ...`, `chunk_size: ...`,
 * `accessModel, subscriptionDays: ...`); on the command line it names the flags typed instead
 * (`--rate-limit: ...`, `--access-model, --subscription-days: ...`), with the error's code kept. Only
 * when every field named is a flag of `command` is the message rewritten.
 */
export function inFlagTerms(err: unknown, command: Command): unknown {
  if (!(err instanceof DomainError) || !FLAG_FIELD_CODES.has(err.code)) return err;
  const match = /^([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*)((?:\.[^\s:]+)?): (.*)$/s.exec(err.message);
  if (!match) return err;
  const [, fieldList, path, rest] = match as unknown as [string, string, string, string];
  const flags = fieldList.split(', ').map(flagOf);
  if (!flags.every((flag) => command.options.some((o) => o.long === flag))) return err;
  const where = path && !/^\.\d+$/.test(path) ? ` ${path.slice(1)}` : '';
  const words = PLAIN_WORDS.find(([pattern]) => pattern.test(rest))?.[1] ?? rest;
  const message = `${flags.join(', ')}${where}: ${words}`;
  return err.code === 'invalid_request'
    ? new InvalidInput(message, err.details)
    : new DomainError(err.code, message, err.details);
}
