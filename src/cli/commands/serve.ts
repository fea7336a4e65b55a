import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { InvalidInput } from '../../core/errors';
import { createServer } from '../../server/createServer';
import { studioLink } from '../../server/studioSession';
import { resolveDataDir } from '../dataDir';
import { openDataDirServices, type GlobalOptions } from '../context';
import { createOutput } from '../output';
import { packageVersion } from '../version';

const RENDERER_DIR = fileURLToPath(new URL('../../../out/renderer', import.meta.url));
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
const WILDCARD = new Set(['0.0.0.0', '::']);

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('serve the /v1 API, the /studio API and the studio UI (default http://127.0.0.1:7410)')
    .option('--port <port>', 'port (0 = any free port)', '7410')
    .option(
      '--host <host>',
      'address to bind; keep 127.0.0.1 unless you mean to expose the studio',
      '127.0.0.1',
    )
    .action(async (opts: { port: string; host: string }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const out = createOutput(Boolean(globals.json));
      // Decimal digits only, as every number flag: Number('0x10') is 16.
      const port = /^\s*\d+\s*$/.test(opts.port) ? Number(opts.port) : NaN;
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new InvalidInput(`--port: '${opts.port}' is not a port number (0-65535).`);
      }
      const dataDir = resolveDataDir(globals.dataDir);
      const services = openDataDirServices(dataDir);
      const studioToken = randomBytes(32).toString('base64url');
      const server = createServer({
        services,
        studioToken,
        version: packageVersion(),
        rendererDir: RENDERER_DIR,
      });
      let running;
      try {
        running = await server.listen(port, opts.host);
      } catch (err) {
        services.close();
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE')
          throw new InvalidInput(`--port: ${port} is already in use; pick another or use --port 0.`);
        if (code === 'EACCES')
          throw new InvalidInput(`--port: ${port} needs privileges this user lacks; pick one above 1023.`);
        // A name that does not resolve, or an address no interface of this machine has.
        if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL')
          throw new InvalidInput(
            `--host: '${opts.host}' is not an address of this machine; use 127.0.0.1 (the default), or 0.0.0.0 to listen on every interface.`,
          );
        throw err;
      }
      // Large knowledge bases get their search codes loaded now, a slice at a time, not on a buyer's query.
      services
        .warmSearch()
        .catch((err: unknown) => out.info(`Search warm-up stopped: ${(err as Error).message}`));
      // Copies of files whose ingestion was killed before its commit are dropped, off the request path.
      services
        .pruneSources()
        .catch((err: unknown) => out.info(`Kept source files not tidied: ${(err as Error).message}`));
      // Bound to every interface, the addresses printed name this machine's loopback: 0.0.0.0 (or ::) is
      // not an address to browse to. The studio page carries the studio token only for a browser that
      // opened the studio link (studioSession.ts).
      const everywhere = WILDCARD.has(opts.host);
      const url = everywhere ? `http://127.0.0.1:${running.port}` : running.url;
      const studioUrl = studioLink(url, studioToken);
      const warning = LOOPBACK.has(opts.host)
        ? undefined
        : `bound to ${opts.host}${everywhere ? ' (every network interface of this machine)' : ''}. Anyone who can reach ${everywhere ? 'this machine on port ' + running.port : 'this address'} can call /v1 with an API key, and anyone who sees the studio link (or the traffic: it is plain HTTP) can use the studio.`;
      // The warning is never silenced: on stderr even with --json (stdout stays the one JSON document), as
      // publish's warning about an empty knowledge base.
      if (warning) process.stderr.write(`kbstudio: warning: ${warning}\n`);
      out.result(
        {
          url,
          studioUrl,
          api: `${url}/v1`,
          dataDir,
          ...(everywhere ? { listening: running.url } : {}),
        },
        () =>
          [
            `KB Studio is serving at ${url}/${everywhere ? `  (listening on every interface, ${running.url})` : ''}`,
            `  Studio:   ${studioUrl}  (open this link; it signs this browser in)`,
            `  API:      ${url}/v1  (OpenAPI: ${url}/v1/openapi.json)`,
            `  Data dir: ${dataDir}`,
            'Press Ctrl+C to stop.',
          ].join('\n'),
      );
      const stop = () => {
        void server.close().finally(() => {
          services.close();
          process.exit(0);
        });
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
