import type { Command } from 'commander';
import { storageFailure } from '../core/uploads/storageErrors';
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
  const services = openServices(dataDir, { environment: process.env });
  try {
    await run({ services, out: createOutput(Boolean(globals.json)) });
  } catch (err) {
    // SQLite's "database or disk is full" names neither the disk nor the folder.
    throw storageFailure(err, dataDir) ?? err;
  } finally {
    services.close();
  }
}

/** Numbers from flags stay numbers only when they parse; otherwise zod names the field. */
export const numberFlag = (value: string): number => (value.trim() === '' ? NaN : Number(value));
export const listFlag = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
