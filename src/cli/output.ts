import { CommanderError } from 'commander';
import { DomainError } from '../core/errors';
import { randomBase62 } from '../core/ids';
import { ERROR_STATUS, type ErrorCode } from '../shared/errors';
import { exitCodeOf, type StopSignal } from './interrupt';

export interface Output {
  json: boolean;
  /** The command's result: one JSON document with --json, else the human rendering. */
  result(value: unknown, human: () => string): void;
  /** Progress and notes for people; silent with --json so stdout stays one document. */
  info(message: string): void;
}

export function createOutput(json: boolean, write = (s: string) => process.stdout.write(s)): Output {
  return {
    json,
    result(value, human) {
      write(json ? `${JSON.stringify(value)}\n` : `${human()}\n`);
    },
    info(message) {
      if (!json) process.stderr.write(`${message}\n`);
    },
  };
}

/** The command was stopped by SIGINT (Ctrl-C) or SIGTERM; `message` says what of its work was kept. */
export class Interrupted extends Error {
  readonly exitCode: number;
  constructor(signal: StopSignal, message: string) {
    super(message);
    this.name = 'Interrupted';
    this.exitCode = exitCodeOf(signal);
  }
}

/** The status of an interrupted command in its --json error body, as push reports its own cancel. */
const INTERRUPTED_STATUS = 499;

/**
 * The error body's `requestId` (DESIGN §2: every error body has one, and scripts read the CLI's
 * bodies with the API's types). A command is its own request; the id is in `req_` form, as the
 * server's.
 */
export const commandId = (): string => `req_${randomBase62(20)}`;

/**
 * Prints a failure as the API's error body (with --json, on stdout) or as one line on stderr, and
 * returns the exit code.
 */
export function reportError(err: unknown, json: boolean): number {
  if (err instanceof Interrupted) {
    if (json) {
      const error = {
        code: 'cancelled',
        message: err.message,
        status: INTERRUPTED_STATUS,
        requestId: commandId(),
      };
      process.stdout.write(`${JSON.stringify({ error })}\n`);
    } else process.stderr.write(`${err.message}\n`);
    return err.exitCode;
  }
  let code: ErrorCode = 'internal_error';
  let message: string;
  if (err instanceof DomainError) {
    code = err.code;
    message = err.message;
  } else if (err instanceof CommanderError) {
    code = 'invalid_request';
    message = err.message.replace(/^error: /, '');
  } else {
    message = err instanceof Error ? err.message : String(err);
    if (process.env.KBSTUDIO_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
  }
  if (json) {
    const error = { code, message, status: ERROR_STATUS[code], requestId: commandId() };
    process.stdout.write(`${JSON.stringify({ error })}\n`);
  } else process.stderr.write(`kbstudio: ${message}\n`);
  return 1;
}

/** The streams exitQuietlyOnClosedPipe already watches. */
const watchedForClosedPipe = new WeakSet<NodeJS.WriteStream>();

/**
 * `kbstudio ... | head` closes the pipe before everything is written: the reader has all it wanted, so
 * the CLI stops quietly (exit 0) instead of dying of an unhandled EPIPE with a stack trace. One listener
 * per stream however often main() runs in a process (tests run it in theirs, one command after another).
 */
export function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (watchedForClosedPipe.has(stream)) continue;
    watchedForClosedPipe.add(stream);
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
}

/** A plain aligned table for terminals. */
export function table(headers: string[], rows: (string | number | null | undefined)[][]): string {
  if (rows.length === 0) return '(none)';
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? '' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => (c ?? '').padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
