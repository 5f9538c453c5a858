/**
 * The `xrate` command line: a thin layer that parses flags and calls the replay harness, the
 * queries and the rate service. Each command lives in `commands/` with its option table, and is
 * loaded when run: a command holds in memory only its own modules (the service's, the EMS's, the
 * chart's are tens of MB a `convert` or `replay` does not need), and this module loads nothing
 * else of xrate's but its errors and the I/O workers' start, so a command starts as soon as its
 * own modules are loaded (`--version` loads none).
 *
 * Exit codes: 0 ok, else the exit code of the error's code (src/core/errors.ts): 2 bad usage
 * (unknown command or flag, bad value) or a bad configuration, 1 any other error (an unreadable
 * file, a database that is not a replay database, a CSV without header, no data, ...).
 *
 * @module
 */
import { isXrateError, messageOf, XrateError } from '../core/errors.js';
import type { Io } from './args.js';
import { VERSION } from '../version.js';
import { availableParallelism } from 'node:os';
import { dropEarlyWorkers, startReaderEarly } from '../io/ioWorker.js';

export type { Io } from './args.js';

/**
 * Whether `xrate replay` with `args` reads its (first) input in a worker thread, as far as its
 * flags tell: not with `--threads 1` or one core, nor a merge (`--merge`) or a replay in
 * partitions (`--workers` above 1, `--queue`), which read otherwise; nor for `--help`. The flags
 * are read as the command reads them, up to `--`; a wrong guess costs a worker started for nothing
 * (ended as the replay opens an input it reads in its own thread, or ends).
 */
export function readsInWorker(args: readonly string[]): boolean {
  if (availableParallelism() < 2) return false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') break;
    const [flag, inline] =
      a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = (): string | undefined => inline ?? args[i + 1];
    if (flag === '--merge' || flag === '--queue' || flag === '--help' || flag === '-h') return false;
    if (flag === '--threads' && value() === '1') return false;
    if (flag === '--workers' && value() !== '1') return false;
  }
  return true;
}

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
        // Its reader's worker thread starts now, while this thread loads the replay's modules.
        if (readsInWorker(rest)) startReaderEarly();
        try {
          return await (await import('./commands/replay.js')).cmdReplay(rest, io);
        } finally {
          dropEarlyWorkers();
        }
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
        // The demo's replay reads as a replay without flags does.
        if (readsInWorker([])) startReaderEarly();
        try {
          return await (await import('./commands/demo.js')).cmdDemo(rest, io);
        } finally {
          dropEarlyWorkers();
        }
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
        return (await import('./help.js')).help(rest[0] ?? 'main', io);
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
