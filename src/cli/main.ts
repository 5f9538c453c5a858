/**
 * The `xrate` command line: a thin layer that parses flags and calls the replay harness.
 *
 * Exit codes: 0 ok, 1 bad input that stopped the run (unreadable file, a database that is not a
 * replay database, a CSV without header), 2 bad usage (unknown command or flag, bad value).
 *
 * @module
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, type EngineConfig } from '../core/config.js';
import { EXCHANGE_RATE_PERIODS, MONTH_PERIODS } from '../core/periods.js';
import { formatTime, parseDuration, parseTime } from '../core/time.js';
import type { SourceFormat } from '../io/source.js';
import { progressLine, ratesTable, summaryTable } from '../replay/progress.js';
import { ReplayStore } from '../io/store.js';
import { queryExplain, queryHistory, queryRates, HISTORY_MAX_LIMIT, type QuerySource } from '../replay/query.js';
import { replay, DEFAULT_STORED_PERIODS, type ReplayOptions, type ReplaySummary } from '../replay/replay.js';
import { keysCommand, serveCommand } from '../service/cli.js';

/** Bad usage: exit code 2. */
export class UsageError extends Error {}

/** Output streams (injectable for tests). */
export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  /** Whether stderr is a terminal (progress bar). */
  isTTY: boolean;
  columns: number;
}

const defaultIo = (): Io => ({
  out: (s) => void process.stdout.write(s),
  err: (s) => void process.stderr.write(s),
  isTTY: !!process.stderr.isTTY,
  columns: process.stderr.columns ?? 80,
});

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The bundled example log replayed by `xrate demo` (`npm start`). */
export const DEMO_LOG = resolve(ROOT, 'fixtures', 'demo', 'demo.ndjson.gz');

const COMMON = {
  format: { type: 'string' },
  config: { type: 'string' },
  'reorder-window': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const HELP: Record<string, string> = {
  main: `xrate: exchange rates computed per the xrate methodology (docs/methodology.md)

Usage: xrate <command> [options]

Commands:
  replay LOG...      replay event logs, write rates and OHLC to SQLite (or --out FILE)
  rate LOG|DB        rates of pairs at a time, as a JSON array
  history LOG|DB     OHLC timeseries of a pair, as a JSON array
  explain LOG|DB     provenance of a rate: markets used and left out, path, legs
  periods            the 33 period records (TimeseriesPeriod)
  demo               replay the bundled example into out/xrate.sqlite (npm start)
  serve              the rate service: /v1/exchangerate HTTP endpoints (docs/service.md)
  keys               API keys of the service: create, list, revoke, jwt-import

Run "xrate <command> --help" for a command's options.
Exit codes: 0 ok, 1 bad input that stopped the run, 2 bad usage.
`,
  replay: `Usage: xrate replay LOG... [options]

Streams LOGs (NDJSON, .ndjson.gz, CSV, SQLite table "events") through the engine in event time.

Options:
  --db FILE               SQLite output (default out/xrate.sqlite); a new replay replaces its outputs
  --out FILE              write rate changes to FILE.ndjson or FILE.csv instead of SQLite
  --format F              ndjson | csv | sqlite (default: from the file name)
  --from TIME             start of output; earlier events are warm-up (ISO 8601)
  --to TIME               end of the replay: events <= TIME, ticks through TIME
  --config FILE.json      engine configuration (EngineConfig, see docs/methodology.md)
  --track B/Q,...         pairs whose OHLC is kept (default: every direct pair)
  --periods P,...         OHLC periods stored per pair (default ${DEFAULT_STORED_PERIODS.join(',')})
  --reorder-window SECS   buffer and sort events this far out of order instead of rejecting them
  --snapshot-every DUR    snapshot the engine every DUR of event time (e.g. 1h, 30m)
  --resume                continue from the newest snapshot in --db
  --batch-size N          records per transaction (default 4096)
  --quiet                 no progress bar or summary
  --json                  print the summary as JSON
`,
  rate: `Usage: xrate rate LOG|DB --at TIME --pair B/Q [--pair B/Q ...] [options]

Replays LOG up to TIME (events with time <= TIME, ticks through the last whole second <= TIME)
and prints one JSON array, one object per --pair in the order given:
  {"asset_id_base":"BTC","asset_id_quote":"USD","rate":64112.56,"time":"2024-03-02T04:30:20.7278090Z"}
rate and time are null when there is none. A database written by "xrate replay" may stand for LOG.

Options: --at TIME, --pair B/Q (repeatable, or comma-separated), --format F, --config FILE.json,
         --reorder-window SECS
`,
  history: `Usage: xrate history LOG|DB --pair B/Q --period PERIOD_ID --from T1 --to T2 [--limit N] [options]

Prints the ExchangeRatesTimeseriesItem array of the buckets whose start lies in [T1, T2), oldest
first, at most N (default 100, max ${HISTORY_MAX_LIMIT}). Direct or cross pair from a LOG; from a
database, pairs tracked during the replay.

Options: --pair, --period, --from, --to, --limit, --format F, --config FILE.json, --reorder-window SECS
`,
  explain: `Usage: xrate explain LOG|DB --pair B/Q [--at TIME] [options]

Prints the provenance of rate(B, Q) at the last tick <= TIME (default: the end of the log):
the path and, per leg, the markets used (price, q, V, weight, quote age) and left out (reason).
From a database: the engine state at the end of the replay.

Options: --pair, --at, --format F, --config FILE.json, --reorder-window SECS
`,
  periods: `Usage: xrate periods [--months]

Prints the 33 exchange-rate period records as JSON (with --months, also the month/year ids of
the metrics endpoints).
`,
  demo: `Usage: xrate demo [--db FILE]

Replays the bundled example log (fixtures/demo) into out/xrate.sqlite and prints the summary and
a table of current rates. This is what "npm start" runs.
`,
  serve: `Usage: xrate serve [--db FILE] [--keys FILE] [--port N] [--host H] [--replay LOG [--follow]] [options]

Serves the exchange-rate endpoints (GET /v1/exchangerate/...; docs/service.md) over a database
written by "xrate replay" (default out/xrate.sqlite, what "npm start" writes), or over a live
engine: --replay LOG replays LOG into --db and keeps serving its engine; with --follow it keeps
reading LOG (plain NDJSON) as it grows and ticks on the wall clock every second.
The first start with no key creates a local development key and prints it.

Options:
  --db FILE               replay database (default out/xrate.sqlite)
  --keys FILE             API keys database (default: the --db file)
  --host H                listen address (default 127.0.0.1)
  --port N                listen port (default 3000; 0 = any free port)
  --replay LOG            replay LOG into --db first, then serve the live engine
  --follow                with --replay: keep reading LOG as it grows (wall-clock ticks)
  --format F, --config FILE.json, --reorder-window SECS   as for replay
`,
  keys: `Usage: xrate keys <create|list|revoke|jwt-import> [--db FILE | --keys FILE] [options]

  create [--name N] [--limit N] [--concurrency N] [--overage] [--rights LIST]
         prints the new key alone on the last line (only its SHA-256 is stored).
         --limit: request cost per sliding 24 h (default 1000000); --concurrency: requests in
         flight at once (default 100); --overage: allow going past the limit;
         --rights: all (default) or a comma list of rate, rates, periods, history, explain
  list [--json]                    keys with their usage of the last 24 h
  revoke (--id N | --key KEY)      the key stops working within a second
  jwt-import (--id N | --key KEY) (--public-key FILE.pem | --secret-file FILE | --remove)
         require a JWT (Authorization: Bearer) signed by that key: RSA (RS256, PS256), EC P-256
         (ES256) public key in PEM or JWK, or an HS256 secret of at least 32 bytes

The keys live in the --db file (default out/xrate.sqlite) unless --keys FILE is given.
`,
};

type Values = Record<string, string | boolean | string[] | undefined>;

function parse(args: string[], options: ParseArgsConfig['options'], allowPositionals = true): { values: Values; positionals: string[] } {
  try {
    const r = parseArgs({ args, options, allowPositionals, strict: true });
    return { values: r.values as Values, positionals: r.positionals };
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''));
  }
}

function time(name: string, v: string | undefined, required: true): number;
function time(name: string, v: string | undefined, required?: false): number | undefined;
function time(name: string, v: string | undefined, required = false): number | undefined {
  if (v === undefined) {
    if (required) throw new UsageError(`missing --${name} TIME (ISO 8601, e.g. 2024-03-02T04:30:20Z)`);
    return undefined;
  }
  const t = parseTime(v.trim());
  if (t === undefined) throw new UsageError(`--${name}: not an ISO 8601 time: "${v}" (e.g. 2024-03-02T04:30:20.5Z)`);
  return t;
}

function pairList(values: string[] | undefined, required: boolean): [string, string][] {
  const specs = (values ?? []).flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean);
  if (required && specs.length === 0) throw new UsageError('missing --pair BASE/QUOTE');
  return specs.map((s) => {
    const parts = s.split('/');
    if (parts.length !== 2 || !parts[0].trim() || !parts[1].trim()) throw new UsageError(`--pair: "${s}" is not BASE/QUOTE (e.g. BTC/USD)`);
    return [parts[0].trim(), parts[1].trim()];
  });
}

function format(v: string | undefined): SourceFormat | undefined {
  if (v === undefined) return undefined;
  if (v !== 'ndjson' && v !== 'csv' && v !== 'sqlite') throw new UsageError(`--format must be ndjson, csv or sqlite, got "${v}"`);
  return v;
}

function loadConfig(path: string | undefined): Partial<EngineConfig> | undefined {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`--config: cannot read "${path}": ${(e as Error).message}`);
  }
  try {
    const c = JSON.parse(text) as unknown;
    if (c === null || typeof c !== 'object' || Array.isArray(c)) throw new Error('not a JSON object');
    return c as Partial<EngineConfig>;
  } catch (e) {
    throw new UsageError(`--config: "${path}" is not a JSON object: ${(e as Error).message}`);
  }
}

function seconds(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const us = parseDuration(v.trim());
  if (us === undefined || us < 0) throw new UsageError(`--${name}: not a duration: "${v}" (e.g. 5, 5s, 1h, 30m)`);
  return us;
}

function inputs(positionals: string[], cmd: string, one = false): string[] {
  if (positionals.length === 0) throw new UsageError(`${cmd}: missing LOG (see xrate ${cmd} --help)`);
  if (one && positionals.length > 1) throw new UsageError(`${cmd}: give one LOG or DB, got ${positionals.length}`);
  for (const p of positionals) if (!existsSync(p)) throw new InputError(`cannot open "${p}": no such file`);
  return positionals;
}

/** Bad input that stops the run: exit code 1. */
export class InputError extends Error {}

function source(values: Record<string, unknown>, positionals: string[], cmd: string): QuerySource {
  const files = inputs(positionals, cmd, true);
  if (values.config !== undefined && ReplayStore.isReplayDatabase(files[0])) {
    throw new UsageError(`--config applies when replaying a log; "${files[0]}" is a replay database, which answers with the config it was computed with`);
  }
  return {
    inputs: files,
    format: format(values.format as string | undefined),
    config: loadConfig(values.config as string | undefined),
    reorderWindowUs: seconds('reorder-window', values['reorder-window'] as string | undefined),
  };
}

async function cmdReplay(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {
    ...COMMON,
    db: { type: 'string' },
    out: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    track: { type: 'string', multiple: true },
    periods: { type: 'string' },
    'snapshot-every': { type: 'string' },
    resume: { type: 'boolean' },
    'batch-size': { type: 'string' },
    quiet: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.help) return help('replay', io);
  const from = time('from', values.from as string | undefined);
  const to = time('to', values.to as string | undefined);
  if (from !== undefined && to !== undefined && to < from) throw new UsageError('--to must not be before --from');
  const periods = (values.periods as string | undefined)?.split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);
  for (const p of periods ?? []) {
    if (!EXCHANGE_RATE_PERIODS.some((r) => r.period_id === p)) throw new UsageError(`--periods: unknown period id "${p}"`);
  }
  const batch = values['batch-size'] !== undefined ? Number(values['batch-size']) : undefined;
  if (batch !== undefined && (!Number.isInteger(batch) || batch < 1)) throw new UsageError(`--batch-size must be a positive integer, got "${values['batch-size']}"`);
  const out = values.out as string | undefined;
  if (out !== undefined && !/\.(ndjson|jsonl|csv)$/i.test(out)) throw new UsageError(`--out must name a .ndjson or .csv file, got "${out}"`);
  if (out !== undefined && values.db !== undefined) throw new UsageError('give either --db (SQLite output) or --out (rate file), not both');
  if (out !== undefined && (values['snapshot-every'] !== undefined || values.resume)) {
    throw new UsageError('--snapshot-every and --resume need the SQLite output (--db), not --out');
  }
  const db = out ? undefined : ((values.db as string | undefined) ?? 'out/xrate.sqlite');
  if (db) mkdirSync(dirname(resolve(db)), { recursive: true });
  if (out) mkdirSync(dirname(resolve(out)), { recursive: true });
  const track = pairList(values.track as string[] | undefined, false).map(([b, q]) => `${b}/${q}`);
  const quiet = !!values.quiet || !!values.json;
  const showProgress = !quiet && io.isTTY;
  const opts: ReplayOptions = {
    inputs: inputs(positionals, 'replay'),
    format: format(values.format as string | undefined),
    from,
    to,
    config: loadConfig(values.config as string | undefined),
    track: track.length ? track : undefined,
    periods,
    reorderWindowUs: seconds('reorder-window', values['reorder-window'] as string | undefined),
    db,
    out,
    snapshotEveryUs: seconds('snapshot-every', values['snapshot-every'] as string | undefined),
    resume: !!values.resume,
    batchSize: batch,
    onProgress: showProgress ? (p) => io.err(`\r${progressLine(p, Math.max(40, io.columns - 1))}`) : undefined,
  };
  const summary = await replay(opts);
  if (showProgress) io.err('\r\x1b[K');
  printSummary(summary, io, !!values.json, quiet, db ?? out!);
  return 0;
}

function printSummary(s: ReplaySummary, io: Io, json: boolean, quiet: boolean, where: string): void {
  if (json) {
    const { engine: _engine, ...rest } = s;
    io.out(JSON.stringify(rest, null, 2) + '\n');
    return;
  }
  if (quiet) return;
  if (s.alreadyComplete) io.out(`nothing to resume: the replay into ${where} is already complete\n`);
  io.out(summaryTable(s) + '\n');
  io.out(`output: ${where}\n`);
}

async function cmdRate(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { ...COMMON, at: { type: 'string' }, pair: { type: 'string', multiple: true } });
  if (values.help) return help('rate', io);
  const at = time('at', values.at as string | undefined, true);
  const pairs = pairList(values.pair as string[] | undefined, true);
  const src = source(values, positionals, 'rate');
  io.out(JSON.stringify(await queryRates(src, at, pairs)) + '\n');
  return 0;
}

async function cmdHistory(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {
    ...COMMON,
    pair: { type: 'string' },
    period: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    limit: { type: 'string' },
  });
  if (values.help) return help('history', io);
  const [pair] = pairList(values.pair === undefined ? undefined : [values.pair as string], true);
  const period = values.period as string | undefined;
  if (!period) throw new UsageError('missing --period PERIOD_ID (e.g. 1MIN; see xrate periods)');
  if (!EXCHANGE_RATE_PERIODS.some((p) => p.period_id === period.toUpperCase())) {
    throw new UsageError(`--period: unknown period id "${period}" (see xrate periods)`);
  }
  const from = time('from', values.from as string | undefined, true);
  const to = time('to', values.to as string | undefined, true);
  if (!(to > from)) throw new UsageError('--to must be after --from');
  const limitText = values.limit as string | undefined;
  const limit = limitText === undefined ? 100 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_MAX_LIMIT) {
    throw new UsageError(`--limit must be an integer in 1..${HISTORY_MAX_LIMIT}, got "${limitText}"`);
  }
  const src = source(values, positionals, 'history');
  io.out(JSON.stringify(await queryHistory(src, pair, period.toUpperCase(), from, to, limit)) + '\n');
  return 0;
}

async function cmdExplain(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { ...COMMON, pair: { type: 'string' }, at: { type: 'string' } });
  if (values.help) return help('explain', io);
  const [pair] = pairList(values.pair === undefined ? undefined : [values.pair as string], true);
  const at = time('at', values.at as string | undefined);
  const src = source(values, positionals, 'explain');
  io.out(JSON.stringify(await queryExplain(src, pair, at), null, 2) + '\n');
  return 0;
}

async function cmdPeriods(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { help: { type: 'boolean', short: 'h' }, months: { type: 'boolean' } }, false);
  if (values.help) return help('periods', io);
  io.out(JSON.stringify(values.months ? [...EXCHANGE_RATE_PERIODS, ...MONTH_PERIODS] : EXCHANGE_RATE_PERIODS, null, 2) + '\n');
  return 0;
}

async function cmdDemo(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { help: { type: 'boolean', short: 'h' }, db: { type: 'string' } }, false);
  if (values.help) return help('demo', io);
  const db = (values.db as string | undefined) ?? 'out/xrate.sqlite';
  mkdirSync(dirname(resolve(db)), { recursive: true });
  io.out(`replaying the bundled example ${DEMO_LOG}\n`);
  const summary = await replay({
    inputs: [DEMO_LOG],
    db,
    onProgress: io.isTTY ? (p) => io.err(`\r${progressLine(p, Math.max(40, io.columns - 1))}`) : undefined,
  });
  if (io.isTTY) io.err('\r\x1b[K');
  io.out(summaryTable(summary) + '\n\n');
  const rows = summary.engine.pairs().map((p) => ({ pair: `${p.base}/${p.quote}`, rate: p.rate, time: p.time, used: p.used, fresh: p.fresh }));
  io.out(`current rates at ${summary.lastTick !== undefined ? formatTime(summary.lastTick) : '--'} (direct pairs)\n`);
  io.out(ratesTable(rows) + '\n\n');
  const cross = summary.engine.rate('SOL', 'BTC');
  if (cross) io.out(`a cross rate (no SOL/BTC market): SOL/BTC = ${cross.rate} via ${cross.path.join(' -> ')}\n`);
  io.out(`output: ${db}   try: npx xrate rate ${db} --at <time> --pair BTC/USD\n`);
  return 0;
}

async function cmdServe(args: string[], io: Io): Promise<number> {
  const { values } = parse(
    args,
    { ...COMMON, db: { type: 'string' }, keys: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' }, replay: { type: 'string' }, follow: { type: 'boolean' } },
    false,
  );
  if (values.help) return help('serve', io);
  const extra = {
    format: format(values.format as string | undefined),
    config: loadConfig(values.config as string | undefined),
    reorderWindowUs: seconds('reorder-window', values['reorder-window'] as string | undefined),
  };
  return serveCommand(values, extra, io, (m) => new UsageError(m));
}

async function cmdKeys(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {
    help: { type: 'boolean', short: 'h' },
    db: { type: 'string' },
    keys: { type: 'string' },
    name: { type: 'string' },
    limit: { type: 'string' },
    concurrency: { type: 'string' },
    overage: { type: 'boolean' },
    rights: { type: 'string' },
    json: { type: 'boolean' },
    id: { type: 'string' },
    key: { type: 'string' },
    'public-key': { type: 'string' },
    'secret-file': { type: 'string' },
    remove: { type: 'boolean' },
  });
  if (values.help) return help('keys', io);
  const [sub, ...rest] = positionals;
  return keysCommand(sub, values, rest, io, (m) => new UsageError(m));
}

function help(cmd: string, io: Io): number {
  io.out(HELP[cmd] ?? HELP.main);
  return 0;
}

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
      case 'rate':
        return await cmdRate(rest, io);
      case 'history':
        return await cmdHistory(rest, io);
      case 'explain':
        return await cmdExplain(rest, io);
      case 'periods':
        return await cmdPeriods(rest, io);
      case 'demo':
        return await cmdDemo(rest, io);
      case 'serve':
        return await cmdServe(rest, io);
      case 'keys':
        return await cmdKeys(rest, io);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        return help(rest[0] ?? 'main', io);
      case '--version':
        io.out('0.1.0\n');
        return 0;
      default:
        throw new UsageError(`unknown command "${cmd}" (expected replay, rate, history, explain, periods, demo, serve or keys)`);
    }
  } catch (e) {
    const msg = (e as Error).message.replace(/^xrate: /, '');
    if (e instanceof UsageError || e instanceof ConfigError) {
      io.err(`xrate: ${msg}\n`);
      return 2;
    }
    if (e instanceof InputError || (e as Error).message.startsWith('xrate:')) {
      io.err(`xrate: ${msg}\n`);
      return 1;
    }
    io.err(`xrate: unexpected error: ${(e as Error).stack ?? msg}\n`);
    return 1;
  }
}
