/**
 * The `xrate` command line: a thin layer that parses flags and calls the replay harness, the
 * queries and the rate service. Each command lives in `commands/` with its option table.
 *
 * Exit codes: 0 ok, else the exit code of the error's code (src/core/errors.ts): 2 bad usage
 * (unknown command or flag, bad value) or a bad configuration, 1 any other error (an unreadable
 * file, a database that is not a replay database, a CSV without header, no data, ...).
 *
 * @module
 */
import { isXrateError, messageOf, XrateError } from '../core/errors.js';
import type { Io } from './args.js';
import { cmdConvert } from './commands/convert.js';
import { cmdDemo } from './commands/demo.js';
import { cmdEms } from './commands/ems.js';
import { cmdExplain } from './commands/explain.js';
import { cmdHistory } from './commands/history.js';
import { cmdKeys } from './commands/keys.js';
import { cmdMetrics } from './commands/metrics.js';
import { cmdSymbols } from './commands/symbols.js';
import { cmdPeriods } from './commands/periods.js';
import { cmdPublish } from './commands/publish.js';
import { cmdPlot } from './commands/plot.js';
import { cmdRate } from './commands/rate.js';
import { cmdReplay } from './commands/replay.js';
import { cmdServe } from './commands/serve.js';
import { cmdWorker } from './commands/worker.js';
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
        return await cmdReplay(rest, io);
      case 'convert':
        return await cmdConvert(rest, io);
      case 'rate':
        return await cmdRate(rest, io);
      case 'history':
        return await cmdHistory(rest, io);
      case 'explain':
        return await cmdExplain(rest, io);
      case 'periods':
        return await cmdPeriods(rest, io);
      case 'plot':
        return await cmdPlot(rest, io);
      case 'metrics':
        return await cmdMetrics(rest, io);
      case 'symbols':
        return await cmdSymbols(rest, io);
      case 'demo':
        return await cmdDemo(rest, io);
      case 'serve':
        return await cmdServe(rest, io);
      case 'keys':
        return await cmdKeys(rest, io);
      case 'worker':
        return await cmdWorker(rest, io);
      case 'publish':
        return await cmdPublish(rest, io);
      case 'ems':
        return await cmdEms(rest, io);
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
