import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { killChildren } from './cliProcess';
import { createContext } from './context';
import { describeFileSystem, fileSystemLabel } from './fileSystem';
import { parseOptions, USAGE, type CliOptions } from './options';
import type { SuiteResult } from './suite';
import { selectSuites, SUITES } from './suites';
import { renderSuite } from './table';

/** `npm run bench`: runs the selected suites and prints a table per suite, or one JSON document with --json. */
async function main(argv: string[]): Promise<number> {
  let options: CliOptions;
  try {
    options = parseOptions(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (options.list) {
    for (const suite of SUITES) process.stdout.write(`${suite.name.padEnd(18)} ${suite.description}\n`);
    return 0;
  }
  let suites;
  try {
    suites = selectSuites(options.only);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  // With --json stdout carries exactly one document: anything a library logs goes to stderr instead.
  if (options.json)
    for (const method of ['log', 'info', 'warn', 'debug'] as const) console[method] = console.error;

  const log = (message: string) => process.stderr.write(`${message}\n`);
  const context = createContext(options, log);
  const stop = () => {
    killChildren();
    context.cleanUp();
    process.exit(130);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  const startedAt = new Date();
  const machine = describeMachine();
  const results: Record<string, SuiteResult | { error: string }> = {};
  let failed = false;
  try {
    for (const suite of suites) {
      log(`running ${suite.name}`);
      const started = performance.now();
      try {
        const result = await suite.run(context);
        results[suite.name] = result;
        failed ||= result.checks.some((c) => !c.ok);
        if (!options.json) process.stdout.write(`\n${renderSuite(suite.name, suite.description, result)}\n`);
      } catch (err) {
        failed = true;
        const message = err instanceof Error ? err.message : String(err);
        results[suite.name] = { error: message };
        if (!options.json) process.stdout.write(`\n== ${suite.name}: FAILED\n${message}\n`);
      }
      log(`${suite.name} took ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  } finally {
    context.cleanUp();
  }

  const durationMs = Date.now() - startedAt.getTime();
  if (options.json) {
    const { json: _json, list: _list, help: _help, ...run } = options;
    const suitesJson = Object.fromEntries(
      Object.entries(results).map(([name, r]) => [
        name,
        'error' in r ? r : { ...r.figures, checks: r.checks, notes: r.notes },
      ]),
    );
    process.stdout.write(
      `${JSON.stringify({ benchmark: 'kb-studio', startedAt: startedAt.toISOString(), durationMs, machine, options: run, suites: suitesJson, ok: !failed }, null, 2)}\n`,
    );
  } else {
    process.stdout.write(
      `\n${machine.cpuModel} ×${machine.cpus}, ${(machine.memoryBytes / 2 ** 30).toFixed(1)} GB RAM, Node ${machine.node}; temporary files on ${fileSystemLabel(machine.tempDir)}; load average at start ${machine.loadAverage.join(' ')}; total ${(durationMs / 1000).toFixed(0)} s\n`,
    );
  }
  return failed ? 1 : 0;
}

function describeMachine() {
  const list = cpus();
  return {
    platform: `${process.platform} ${process.arch}`,
    cpuModel: list[0]?.model.trim() ?? 'unknown CPU',
    cpus: list.length,
    memoryBytes: totalmem(),
    freeMemoryBytes: freemem(),
    node: process.versions.node,
    loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
    // Where every corpus and data directory is written: its file system changes the ingestion figures.
    tempDir: describeFileSystem(tmpdir()),
  };
}

process.exitCode = await main(process.argv.slice(2));
