/**
 * The `xrate` command line: a thin layer that parses flags and calls the replay harness, the
 * queries and the rate service. Each command lives in `commands/` with its option table, and is
 * loaded when run: a command holds in memory only its own modules (the service's, the EMS's, the
 * chart's are tens of MB a `convert` or `replay` does not need).
 *
 * Exit codes: 0 ok, else the exit code of the error's code (src/core/errors.ts): 2 bad usage
 * (unknown command or flag, bad value) or a bad configuration, 1 any other error (an unreadable
 * file, a database that is not a replay database, a CSV without header, no data, ...).
 *
 * @module
 */
import { isXrateError, messageOf, XrateError } from '../core/errors.js';
import type { Io } from './args.js';
import { help } from './help.js';
import { VERSION } from '../version.js';

export type { Io } from './args.js';
export { DEMO_LOG } from './commands/demo.js';

const defaultIo = (): Io => ({
  out: (s) => void process.stdout.write(s),
  err: (s) => void process.stderr.write(s),
  isTTY: !!process.stderr.isTTY,
  columns: process.stderr.columns ?? 80,
});

/**
 * Runs the CLI with `argv` (without node and script) and returns the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await run(['rate', 'log.ndjson', '--at', '2024-03-02T04:30:20Z', '--pair', 'BTC/USD']);
 * ```
 */
export async function run(argv: string[], io: Io = defaultIo()): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case 'replay':
        return await (await import('./commands/replay.js')).cmdReplay(rest, io);
      case 'convert':
        return await (await import('./commands/convert.js')).cmdConvert(rest, io);
      case 'rate':
        return await (await import('./commands/rate.js')).cmdRate(rest, io);
      case 'history':
        return await (await import('./commands/history.js')).cmdHistory(rest, io);
      case 'explain':
        return await (await import('./commands/explain.js')).cmdExplain(rest, io);
      case 'periods':
        return await (await import('./commands/periods.js')).cmdPeriods(rest, io);
      case 'plot':
        return await (await import('./commands/plot.js')).cmdPlot(rest, io);
      case 'metrics':
        return await (await import('./commands/metrics.js')).cmdMetrics(rest, io);
      case 'symbols':
        return await (await import('./commands/symbols.js')).cmdSymbols(rest, io);
      case 'demo':
        return await (await import('./commands/demo.js')).cmdDemo(rest, io);
      case 'serve':
        return await (await import('./commands/serve.js')).cmdServe(rest, io);
      case 'keys':
        return await (await import('./commands/keys.js')).cmdKeys(rest, io);
      case 'worker':
        return await (await import('./commands/worker.js')).cmdWorker(rest, io);
      case 'publish':
        return await (await import('./commands/publish.js')).cmdPublish(rest, io);
      case 'ems':
        return await (await import('./commands/ems.js')).cmdEms(rest, io);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        return help(rest[0] ?? 'main', io);
      case '--version':
        io.out(`${VERSION}\n`);
        return 0;
      default:
        throw new XrateError(
          'usage',
          `unknown command "${cmd}" (expected replay, convert, rate, history, explain, plot, metrics, symbols, periods, demo, serve, keys, worker, publish or ems)`,
        );
    }
  } catch (e) {
    if (isXrateError(e)) {
      io.err(`xrate: ${e.message}\n`);
      return e.exitCode;
    }
    io.err(`xrate: unexpected error: ${(e as Error).stack ?? messageOf(e)}\n`);
    return 1;
  }
}
