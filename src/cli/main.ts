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
import { reportError } from './output';
import { packageVersion } from './version';

export function buildProgram(): Command {
  const program = new Command('kbstudio')
    .description('KB Studio: build, test, price and publish knowledge bases')
    .version(packageVersion())
    .option('--data-dir <dir>', 'data directory (default: $KBSTUDIO_DATA_DIR, else the OS app-data folder)')
    .option('--json', 'print one JSON document on stdout (errors as the API error body)')
    .showHelpAfterError()
    .exitOverride();
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
  for (const command of program.commands) {
    command.exitOverride();
    for (const sub of command.commands) sub.exitOverride();
  }
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const json = argv.includes('--json');
  const program = buildProgram();
  if (json) program.configureOutput({ writeErr: () => {} });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    // --help and --version end through exitOverride too; they are not failures.
    if (err instanceof CommanderError && (err.exitCode === 0 || err.code === 'commander.helpDisplayed')) {
      process.exitCode = 0;
      return;
    }
    process.exitCode = reportError(err, json);
  }
}
