import { CommanderError } from 'commander';
import { DomainError } from '../core/errors';
import { ERROR_STATUS, type ErrorCode } from '../shared/errors';

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

/** Prints a failure as the API's error body (with --json, on stdout) or as one line on stderr. */
export function reportError(err: unknown, json: boolean): number {
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
  if (json)
    process.stdout.write(`${JSON.stringify({ error: { code, message, status: ERROR_STATUS[code] } })}\n`);
  else process.stderr.write(`kbstudio: ${message}\n`);
  return 1;
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
