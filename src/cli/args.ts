/**
 * Flag parsing of the `xrate` command line: typed `node:util` parseArgs, and the readers of flag values shared by several commands.
 *
 * @module
 */
import { DEFAULT_STREAM, isNatsUrl, isStreamName } from '../distributed/names.js';
import { refuseUrlCredentials } from './connection.js';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { EngineConfig } from '../core/config.js';
import { isXrateError, XrateError } from '../core/errors.js';
import { answerOf } from '../http/errors.js';
import { parseDuration, parseTime } from '../core/time.js';
import { duplicateMessage, listInputs } from '../io/inputs.js';
import type { PathList } from '../io/pathList.js';
import { MAX_LINE_BYTES_CAP } from '../io/lineLimit.js';
import type { SourceFormat } from '../io/source.js';
import type { VendorTime } from '../io/vendorCsv.js';
import { ReplayStore } from '../io/store.js';
import type { ModeTable } from '../replay/options.js';
import type { QuerySource } from '../replay/query.js';

/**
 * A route's error as the commands that answer as the routes do (`xrate metrics`, `xrate symbols`)
 * report it: a `no_data` error worded as the service answers it (the interface's wording before
 * its message); any other error as it is.
 *
 * @example
 * ```ts
 * try { answer(); } catch (e) { throw asRouteAnswers(e); }
 * ```
 */
export function asRouteAnswers(e: unknown): unknown {
  const answer = isXrateError(e, 'no_data') ? answerOf(e) : undefined;
  return answer === undefined ? e : new XrateError('no_data', answer.message, { cause: e });
}

/** Output streams (injectable for tests). */
export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  /** Whether stderr is a terminal (progress bar). */
  isTTY: boolean;
  columns: number;
  /**
   * For programs and tests that run the CLI in-process: told how to stop a command that runs
   * until SIGINT/SIGTERM (`serve`, `ems serve`, `worker`, `publish --follow`) once it runs; the
   * signals are then not listened to.
   */
  onRunning?: (stop: () => Promise<void>) => void;
}

/** The option table of one command (declared `as const`, so the parsed values are typed). */
export type Options = NonNullable<ParseArgsConfig['options']>;

/** Options of the commands that read an event log (`replay`, `rate`, `history`, `explain`, `serve`). */
export const COMMON = {
  format: { type: 'string' },
  config: { type: 'string' },
  'reorder-window': { type: 'string' },
  'max-line-bytes': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * For the commands that run until stopped (`serve`, `worker`): on SIGINT or SIGTERM, says
 * `what` on stderr (unless `quiet`), awaits `close`, and exits 0 (1, with the error, if it fails);
 * with {@link Io.onRunning}, hands it `close` instead.
 */
export function closeOnSignals(
  command: string,
  what: string,
  close: () => Promise<void>,
  io: Pick<Io, 'err' | 'onRunning'>,
  quiet = false,
): void {
  if (io.onRunning) {
    io.onRunning(close);
    return;
  }
  const shutdown = (signal: string): void => {
    if (!quiet) io.err(`xrate ${command}: ${signal}: ${what}\n`);
    close().then(
      () => process.exit(0),
      (e: Error) => {
        io.err(`xrate ${command}: ${e.message}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

/** The `--help` option alone. */
export const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

/** What {@link parse} (`P` true) and {@link parseFlags} (`P` false) return for the option table `O`. */
export type Parsed<O extends Options, P extends boolean> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: P; strict: true }>
>;

function usageOf(e: unknown): XrateError {
  return new XrateError('usage', (e as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''));
}

/**
 * Parses `args` strictly with `options`, positionals allowed; a parse error is a
 * `usage` {@link XrateError} with node's message.
 *
 * @example
 * ```ts
 * const { values, positionals } = parse(['log.ndjson', '--at', 'T'], { at: { type: 'string' } } as const);
 * values.at; // string | undefined
 * ```
 */
export function parse<const O extends Options>(args: string[], options: O): Parsed<O, true> {
  refuseRetired(args);
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw usageOf(e);
  }
}

/** As {@link parse}, for a command without positional arguments. */
export function parseFlags<const O extends Options>(args: string[], options: O): Parsed<O, false> {
  refuseRetired(args);
  try {
    return parseArgs({ args, options, allowPositionals: false, strict: true });
  } catch (e) {
    throw usageOf(e);
  }
}

/** Reads an ISO 8601 `--name TIME` flag, µs (required: a missing flag is a usage error). */
export function time(name: string, v: string | undefined, required: true): number;
export function time(name: string, v: string | undefined, required?: false): number | undefined;
export function time(name: string, v: string | undefined, required = false): number | undefined {
  if (v === undefined) {
    if (required) throw new XrateError('usage', `missing --${name} TIME (ISO 8601, e.g. 2024-03-02T04:30:20Z)`);
    return undefined;
  }
  const t = parseTime(v.trim());
  if (t === undefined)
    throw new XrateError('usage', `--${name}: not an ISO 8601 time: "${v}" (e.g. 2024-03-02T04:30:20.5Z)`, { field: `--${name}` });
  return t;
}

/** Reads `--pair`/`--track` values (repeatable, or comma-separated) as [base, quote] pairs. */
export function pairList(values: string[] | undefined, required: boolean): [string, string][] {
  const specs = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  if (required && specs.length === 0) throw new XrateError('usage', 'missing --pair BASE/QUOTE');
  return specs.map((s) => {
    const parts = s.split('/');
    if (parts.length !== 2 || !parts[0].trim() || !parts[1].trim())
      throw new XrateError('usage', `--pair: "${s}" is not BASE/QUOTE (e.g. BTC/USD)`, { field: '--pair' });
    return [parts[0].trim(), parts[1].trim()];
  });
}

/** Reads `--format` (xrate's own formats: the commands that cannot read vendor files). */
export function format(v: string | undefined): 'ndjson' | 'csv' | 'sqlite' | undefined {
  if (v === undefined) return undefined;
  if (v !== 'ndjson' && v !== 'csv' && v !== 'sqlite')
    throw new XrateError('usage', `--format must be ndjson, csv or sqlite, got "${v}"`, { field: '--format' });
  return v;
}

/** Reads `--format` of the commands that replay logs, vendor files included (`coinapi`, `tardis`). */
export function replayFormat(v: string | undefined): SourceFormat | undefined {
  if (v === undefined) return undefined;
  if (v !== 'ndjson' && v !== 'csv' && v !== 'sqlite' && v !== 'coinapi' && v !== 'tardis' && v !== 'parquet')
    throw new XrateError('usage', `--format must be ndjson, csv, sqlite, coinapi, tardis or parquet, got "${v}"`, { field: '--format' });
  return v;
}

/** Reads `--time receive|exchange` (vendor files); undefined when absent. */
export function vendorTime(v: string | undefined): VendorTime | undefined {
  if (v === undefined) return undefined;
  if (v !== 'receive' && v !== 'exchange')
    throw new XrateError('usage', `--time must be receive or exchange, got "${v}"`, { field: '--time' });
  return v;
}

/** Reads the engine configuration named by `--config`. */
export function loadConfig(path: string | undefined): Partial<EngineConfig> | undefined {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new XrateError('usage', `--config: cannot read "${path}": ${(e as Error).message}`, { field: '--config' });
  }
  try {
    const c = JSON.parse(text) as unknown;
    if (c === null || typeof c !== 'object' || Array.isArray(c)) throw new Error('not a JSON object');
    return c as Partial<EngineConfig>;
  } catch (e) {
    throw new XrateError('usage', `--config: "${path}" is not a JSON object: ${(e as Error).message}`, { field: '--config' });
  }
}

/**
 * Checks the feed flags of `publish` and `serve --nats`: `--nats` a NATS URL without credentials,
 * `--stream` a stream name; returns the stream (default `XRATE`). Throws `usage`'s error.
 */
export function feedFlags(nats: string, stream: string | undefined, usage: (message: string) => Error): string {
  refuseUrlCredentials('nats', nats, 'nats', usage);
  if (!isNatsUrl(nats)) throw usage(`--nats must be a nats:// URL (nats://HOST:PORT), got "${nats}"`);
  const name = stream ?? DEFAULT_STREAM;
  if (!isStreamName(name)) throw usage(`--stream must be 1 to 64 letters, digits, "_" or "-", got "${name}"`);
  return name;
}

/** Reads a duration flag (`5`, `5s`, `1h`, `30m`), µs. */
export function seconds(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const us = parseDuration(v.trim());
  if (us === undefined || us < 0)
    throw new XrateError('usage', `--${name}: not a duration: "${v}" (e.g. 5, 5s, 1h, 30m)`, { field: `--${name}` });
  return us;
}

/** The LOG (or DB) arguments of `cmd`, each of which must exist. */
export function inputs(positionals: string[], cmd: string, one = false): string[] {
  if (positionals.length === 0) throw new XrateError('usage', `${cmd}: missing LOG (see xrate ${cmd} --help)`);
  if (one && positionals.length > 1) throw new XrateError('usage', `${cmd}: give one LOG or DB, got ${positionals.length}`);
  for (const p of positionals) if (!existsSync(p)) throw new XrateError('input', `cannot open "${p}": no such file`);
  return positionals;
}

/** `--allow-duplicates`, of the commands that take several logs (`replay`, `publish`). */
export const DUPLICATES_OPTION = { 'allow-duplicates': { type: 'boolean' } } as const;

/**
 * Refuses (bad usage) logs that reach the same file twice, directly or through directories, by
 * its real path (its records would be applied twice), unless `allowed` (`--allow-duplicates`).
 * Returns the files each log stands for as the check listed them (undefined when allowed: not
 * listed), for the command to read without walking the directories again.
 */
export function refuseDuplicateInputs(logs: readonly string[], allowed: boolean | undefined): PathList[] | undefined {
  if (allowed) return undefined;
  const { each, duplicate } = listInputs(logs);
  if (duplicate) throw new XrateError('usage', duplicateMessage(duplicate, '--allow-duplicates'));
  return each;
}

/** The flags of {@link COMMON} as parsed. */
export interface CommonValues {
  format?: string;
  config?: string;
  'reorder-window'?: string;
  'max-line-bytes'?: string;
}

/** What `rate`, `history` and `explain` query: one LOG (replayed) or replay database. */
export function querySource(values: CommonValues, positionals: string[], cmd: string): QuerySource {
  const files = inputs(positionals, cmd, true);
  if (values.config !== undefined && ReplayStore.isReplayDatabase(files[0])) {
    throw new XrateError(
      'usage',
      `--config applies when replaying a log; "${files[0]}" is a replay database, which answers with the config it was computed with`,
      { field: '--config' },
    );
  }
  return {
    inputs: files,
    format: replayFormat(values.format),
    config: loadConfig(values.config),
    reorderWindowUs: seconds('reorder-window', values['reorder-window']),
    maxLineBytes: maxLineBytes(values['max-line-bytes']),
  };
}

/** Reads `--max-line-bytes` (an integer in 1..{@link MAX_LINE_BYTES_CAP}). */
export function maxLineBytes(v: string | undefined): number | undefined {
  return int('max-line-bytes', v, 1, MAX_LINE_BYTES_CAP, (m) => new XrateError('usage', m));
}

/**
 * Reads an integer flag in `min..max` (a bad one is a usage error made by `usage`).
 *
 * @example
 * ```ts
 * int('port', '8080', 0, 65535, (m) => new XrateError('usage', m)); // 8080
 * ```
 */
export function int(name: string, v: string | undefined, min: number, max: number, usage: (message: string) => Error): number | undefined {
  if (v === undefined) return undefined;
  const s = v.trim();
  if (!/^\d+$/.test(s) || Number(s) < min || Number(s) > max) throw usage(`--${name} must be an integer in ${min}..${max}, got "${s}"`);
  return Number(s);
}

/**
 * The values of `table`'s flags in parsed `values` (keyed by flag name), keyed by each row's
 * field: what the table's check reads.
 */
export function flagFields<M extends string>(table: ModeTable<M>, values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(table.rules.map((r) => [r.field, values[r.flag.slice(2)]]));
}

/** Flags of earlier versions that now change nothing, refused with what to do instead. */
const RETIRED: Readonly<Record<string, string>> = {
  '--own-metrics': "xrate's own metrics are computed and stored by default (--no-own-metrics leaves them out)",
};

/** Refuses a retired flag (exit 2 naming it, saying what holds now). */
function refuseRetired(args: readonly string[]): void {
  for (const a of args) {
    if (a === '--') return;
    const flag = a.split('=', 1)[0];
    const why = RETIRED[flag];
    if (why !== undefined) throw new XrateError('usage', `${flag} is no longer needed: ${why}`, { field: flag });
  }
}
