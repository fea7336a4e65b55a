import { Command, CommanderError } from 'commander';
import { credentialsCommand } from './commands/credentials';
import { evalCommand } from './commands/eval';
import { ingestCommand } from './commands/ingest';
import { keysCommand } from './commands/keys';
import { listingsCommand } from './commands/listings';
import { pushCommand } from './commands/push';
import { queryCommand } from './commands/query';
import { serveCommand } from './commands/serve';
import { settingsCommand } from './commands/settings';
import { walletCommand } from './commands/wallet';
import { isFlagValueError } from './context';
import { exitQuietlyOnClosedPipe, reportError } from './output';
import { packageVersion } from './version';

/** A CommanderError with the command that raised it (for the commands a missing command lists). */
type CommandExit = CommanderError & { command?: Command };

export function buildProgram(options: { json?: boolean } = {}): Command {
  const json = Boolean(options.json);
  const program = new Command('kbstudio')
    .description('KB Studio: build, test, price and publish knowledge bases')
    .option('-V, --version', 'print the version')
    .option('--data-dir <dir>', 'data directory (default: $KBSTUDIO_DATA_DIR, else the OS app-data folder)')
    .option('--json', 'print one JSON document on stdout (errors as the API error body)');
  // Printed here rather than by commander's .version(), whose output cannot be JSON.
  program.on('option:version', () => {
    const version = packageVersion();
    process.stdout.write(json ? `${JSON.stringify({ version })}\n` : `${version}\n`);
    throw new CommanderError(0, 'commander.version', version);
  });
  serveCommand(program);
  keysCommand(program);
  walletCommand(program);
  listingsCommand(program);
  credentialsCommand(program);
  ingestCommand(program);
  settingsCommand(program);
  queryCommand(program);
  evalCommand(program);
  pushCommand(program);
  configure(program, json);
  return program;
}

/**
 * Every command, subcommands included, reports its argument errors the same way: commander's own
 * printing is replaced, so main() prints each error once (one line and a hint, or with --json the one
 * error document on stdout and nothing on stderr). Help asked for goes to stdout (as `{"help": text}`
 * with --json).
 */
function configure(command: Command, json: boolean): void {
  // Options declared with requiredOption say so in the help, as `listings create` marks its own.
  for (const option of command.options) {
    if (option.mandatory && !option.description.includes('(required)')) option.description += ' (required)';
  }
  command
    .exitOverride((err: CommandExit) => {
      err.command ??= command;
      throw err;
    })
    .configureOutput({
      outputError: () => {},
      // Help asked for: with --json too, one JSON document on stdout (DESIGN §6), the text in `help`.
      writeOut: json
        ? (text) => process.stdout.write(`${JSON.stringify({ help: text })}\n`)
        : (text) => process.stdout.write(text),
      // The help of a group run without its command; --json keeps stderr quiet (main() says it as JSON).
      writeErr: json ? () => {} : (text) => process.stderr.write(text),
    })
    .showHelpAfterError(false);
  for (const sub of command.commands) configure(sub, json);
}

const commandPath = (command: Command): string => {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
};

/**
 * Whether `argv` asks for --json, as commander reads it: a `--json` after the `--` that ends the options
 * is an operand (`kbstudio query --listing ID -- --json` searches for the text "--json"), not the flag.
 */
export function jsonRequested(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

export interface MainOptions {
  /**
   * One line about how this process was started, for the person at the terminal (bin/kbstudio.js: the
   * CLI runs from its TypeScript sources because its prebuilt bundle is stale or missing). Printed on
   * stderr only when stderr is a terminal and --json was not asked for, which keeps stderr quiet.
   */
  startupNote?: string;
}

export async function main(argv: string[], options: MainOptions = {}): Promise<void> {
  exitQuietlyOnClosedPipe();
  const json = jsonRequested(argv);
  if (options.startupNote && !json && process.stderr.isTTY) process.stderr.write(`${options.startupNote}\n`);
  const program = buildProgram({ json });
  // The command whose action ran (`listings create`), for the pointer to its help after a bad flag value.
  let running: Command | undefined;
  program.hook('preAction', (_program, action) => {
    running = action;
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    process.exitCode = commanderExit(err, json) ?? reportActionError(err, json, running);
  }
}

/**
 * An error of a command's action. A bad value typed for one of its flags (`--top-k 21`, `--access-model
 * bogus`, checked by the action or the services, not by commander) is an argument error as an unknown
 * flag is, and gets the same pointer to the command's help; --json keeps to the error body.
 */
function reportActionError(err: unknown, json: boolean, command: Command | undefined): number {
  const code = reportError(err, json);
  if (!json && command && isFlagValueError(err, command)) printUsagePointer(command);
  return code;
}

const printUsagePointer = (command: Command): void => {
  process.stderr.write(`(run '${commandPath(command)} --help' for usage)\n`);
};

/**
 * The exit code of commander's own endings: help and version printed (0), a group run without its
 * command (1, its help on stderr, or a JSON error), an argument error (1, printed once with a hint).
 * Undefined for anything else.
 */
function commanderExit(err: unknown, json: boolean): number | undefined {
  if (!(err instanceof CommanderError)) return undefined;
  const command = (err as CommandExit).command;
  if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
  if (err.code === 'commander.help') {
    if (err.exitCode === 0 || !json || !command) return err.exitCode;
    const names = command.commands.map((c) => c.name());
    return reportError(
      new CommanderError(1, 'commander.missingCommand', `missing command: one of ${names.join(', ')}`),
      json,
    );
  }
  const code = reportError(err, json);
  if (!json && command) printUsagePointer(command);
  return code;
}
