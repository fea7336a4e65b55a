import type { Command } from 'commander';
import { DomainError, InvalidInput } from '../core/errors';
import { DataDirNotADirectory, storageFailure } from '../core/uploads/storageErrors';
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
    throw storageFailure(err, dataDir) ?? inFlagTerms(err, command);
  } finally {
    services.close();
  }
}

/** The studio's services on `dataDir`; a data directory that is a file says how to choose another. */
export function openDataDirServices(dataDir: string): StudioServices {
  try {
    return openServices(dataDir, { environment: process.env });
  } catch (err) {
    if (err instanceof DataDirNotADirectory) {
      throw new InvalidInput(err.message.replace(/\.$/, ' (--data-dir or KBSTUDIO_DATA_DIR).'));
    }
    throw err;
  }
}

/** Numbers from flags stay numbers only when they parse; otherwise zod names the field. */
export const numberFlag = (value: string): number => (value.trim() === '' ? NaN : Number(value));
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
  [/^Invalid input: expected (number|int), received NaN$/, 'expected a number'],
  [/^Invalid input: expected int, received number$/, 'expected a whole number'],
];

/**
 * Whether `err` is about a value typed for a flag of `command` (or of a command above it, `--data-dir`):
 * an `invalid_request` whose message begins with that flag (`--top-k: Too big: …`, as inFlagTerms puts
 * the services' validation errors). Those are the user's arguments, worth a pointer to the command's
 * help; an error about the data (an unknown listing id, a missing file) is not.
 */
export function isFlagValueError(err: unknown, command: Command): boolean {
  if (!(err instanceof DomainError) || err.code !== 'invalid_request') return false;
  const flag = /^(--[A-Za-z0-9][\w-]*)[\s:]/.exec(err.message)?.[1];
  if (flag === undefined) return false;
  for (let c: Command | null = command; c; c = c.parent) {
    if (c.options.some((o) => o.long === flag)) return true;
  }
  return false;
}

/**
 * A validation error of the services names the field of their input (`retrievalRateLimit: ...`,
 * `chunk_size: ...`); on the command line it names the flag typed instead (`--rate-limit: ...`). Only
 * fields that are flags of `command` are renamed.
 */
export function inFlagTerms(err: unknown, command: Command): unknown {
  if (!(err instanceof DomainError) || err.code !== 'invalid_request') return err;
  const match = /^([A-Za-z_]\w*)((?:\.[^\s:]+)?): (.*)$/s.exec(err.message);
  if (!match) return err;
  const [, field, path, rest] = match as unknown as [string, string, string, string];
  const flag =
    FLAG_OF_FIELD[field] ?? `--${field.replace(/_/g, '-').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  if (!command.options.some((o) => o.long === flag)) return err;
  const where = path && !/^\.\d+$/.test(path) ? ` ${path.slice(1)}` : '';
  const words = PLAIN_WORDS.find(([pattern]) => pattern.test(rest))?.[1] ?? rest;
  return new InvalidInput(`${flag}${where}: ${words}`, err.details);
}
