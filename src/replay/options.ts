/**
 * The modes of a replay and, in one table, the options each mode takes: {@link replay} and
 * `replayParallel` check their options against it, `xrate replay` checks its flags against the
 * same rows (same check, same words) and its `--help` lists each flag's modes from them.
 *
 * The table machinery ({@link ModeTable}, {@link refuseOutOfMode}, {@link modesHelp}) is shared
 * with the command line's tables of its other commands (`serve`, `ems serve`, `publish`,
 * `worker`): a flag given in a mode it does not apply to is a `usage` error naming the flag.
 *
 * @module
 */
import { XrateError } from '../core/errors.js';
import { expandInputs } from '../io/inputs.js';
import { detectVendor } from '../io/detect.js';

/** One row of a {@link ModeTable}: a flag, the option it sets, and the modes it applies to. */
export interface FlagRule<M extends string> {
  /** The flag as written (`--snapshot-every`). */
  flag: string;
  /** The key of its value in the checked options (`snapshotEveryUs` for the library, `snapshot-every` for a command's flags). */
  field: string;
  /** The modes it applies to (`all`: every mode). */
  modes: readonly M[] | 'all';
  /**
   * The refusal of the flag given in mode `mode`; `flags`: the flags of the same {@link group}
   * given there too (the flag first). Default: `--flag does not apply to MODE`.
   */
  refusal?(mode: M, flags: readonly string[]): string;
  /** Rows refused together, in one message naming each (the credential flags of a connection). */
  group?: string;
  /** Whether a value counts as given (default: neither undefined nor false). */
  given?: (v: unknown) => boolean;
  /**
   * Modes where only some values apply (the others are refused as in a mode it does not apply
   * to): `accepts` tells them, `note` names them in `--help`.
   */
  restricted?: Partial<Record<M, { accepts: (v: unknown) => boolean; note: string }>>;
}

/** The modes of a command and its flags by mode: one table for the check, the library and `--help`. */
export interface ModeTable<M extends string> {
  /** Each mode and how it is chosen, for `--help`. */
  modes: Readonly<Record<M, string>>;
  /** The rows, in the order they are checked (the first refused flag is the one reported). */
  rules: readonly FlagRule<M>[];
  /** Modes no flag chooses (the library's own), left out of `--help`. */
  internal?: readonly M[];
}

/** Whether `v` counts as a given value by default. */
const isGiven = (v: unknown): boolean => v !== undefined && v !== false;

/** Whether `rule` applies in `mode`. */
export function applies<M extends string>(rule: FlagRule<M>, mode: M): boolean {
  return rule.modes === 'all' || rule.modes.includes(mode);
}

/**
 * Throws `XrateError('usage')`, naming the flag (its `field`), for the first flag of `table` given
 * in `values` that does not apply in `mode`.
 *
 * @example
 * ```ts
 * refuseOutOfMode(REPLAY_MODES_TABLE, 'partitioned', { from: 0 }); // throws: ... do not work with --from yet
 * ```
 */
export function refuseOutOfMode<M extends string>(table: ModeTable<M>, mode: M, values: Readonly<Record<string, unknown>>): void {
  const given = (r: FlagRule<M>): boolean => (r.given ?? isGiven)(values[r.field]);
  const refused = (r: FlagRule<M>): boolean => given(r) && (!applies(r, mode) || r.restricted?.[mode]?.accepts(values[r.field]) === false);
  for (const rule of table.rules) {
    if (!refused(rule)) continue;
    const flags =
      rule.group === undefined ? [rule.flag] : table.rules.filter((r) => r.group === rule.group && refused(r)).map((r) => r.flag);
    const message = rule.refusal ? rule.refusal(mode, flags) : `${rule.flag} does not apply to ${mode}`;
    throw new XrateError('usage', message, { field: rule.flag });
  }
}

/**
 * The lines of `--help` that list each flag of `table` with the modes it applies to (the flags
 * of every mode on one line), after the modes themselves.
 */
export function modesHelp<M extends string>(table: ModeTable<M>): string {
  const modes = (Object.keys(table.modes) as M[]).filter((m) => !table.internal?.includes(m));
  const lines = ['Modes:', ...modes.map((m) => `  ${m.padEnd(23)} ${table.modes[m]}`), 'Flags by mode:'];
  const everywhere = new Set<string>();
  const seen = new Set<string>();
  for (const rule of table.rules) {
    if (seen.has(rule.flag)) continue;
    seen.add(rule.flag);
    const where = modes.filter((m) => applies(rule, m));
    if (where.length === modes.length && rule.restricted === undefined) everywhere.add(rule.flag);
    else {
      const notes = where.map((m) => (rule.restricted?.[m] ? `${m} (${rule.restricted[m].note})` : m));
      lines.push(`  ${rule.flag.padEnd(23)} ${notes.join(', ')}`);
    }
  }
  if (everywhere.size > 0) lines.push(...wrap(`every mode: ${[...everywhere].join(', ')}`, 98, '  '));
  return modes.length > 1 ? `${lines.join('\n')}\n` : '';
}

/** `text` in lines of at most `width` characters, each after `indent`. */
function wrap(text: string, width: number, indent: string): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > width) {
      out.push(indent + line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') out.push(indent + line);
  return out;
}

/** The most threads a replay reads an input with (`threads`, `--threads`). */
export const MAX_THREADS = 256;

/**
 * The modes of a replay: `serial` (the logs one after another), `merged` (`merge`), `resumed`
 * (`resume`), `partitioned` (`workers` > 1: replayParallel), `queued` (partitions on a queue: the
 * command line's `--queue`), and `partition` (one partition of a partitioned replay: `replay()`
 * with `partition`; no flag chooses it).
 */
export type ReplayMode = 'serial' | 'merged' | 'resumed' | 'partitioned' | 'queued' | 'partition';

/** What chooses a replay's mode (see {@link replayModeOf}). */
export interface ReplayModeChoice {
  merge?: boolean;
  resume?: boolean;
  workers?: number;
  queue?: string;
  partition?: unknown;
}

/** The mode of a replay with `o`: queued, else partitioned, else partition, resumed, merged, serial (in that order). */
export function replayModeOf(o: ReplayModeChoice): ReplayMode {
  if (o.queue !== undefined) return 'queued';
  if (o.workers !== undefined && o.workers > 1) return 'partitioned';
  if (o.partition !== undefined) return 'partition';
  if (o.resume) return 'resumed';
  if (o.merge) return 'merged';
  return 'serial';
}

const PARTITIONED: readonly ReplayMode[] = ['partitioned', 'queued', 'partition'];
const NOT_PARTITIONED: readonly ReplayMode[] = ['serial', 'merged', 'resumed'];

/** The refusal of a flag in a partitioned mode, or `other` in the others. */
function partitionedOr(flag: string, other?: string): (mode: ReplayMode) => string {
  return (mode) =>
    PARTITIONED.includes(mode) || other === undefined ? `partitioned replays (--workers, --queue) do not work with ${flag} yet` : other;
}

const MERGE_REFUSAL = '--merge does not work with --snapshot-every or --resume yet';

/** Flags that apply in every mode of a replay, in `--help` order: [flag, field]. */
const EVERY_MODE: readonly [string, string][] = [
  ['--db', 'db'],
  ['--out', 'out'],
  ['--format', 'format'],
  ['--track', 'track'],
  ['--periods', 'periods'],
  ['--max-line-bytes', 'maxLineBytes'],
  ['--no-own-metrics', 'ownMetrics'],
  ['--batch-size', 'batchSize'],
  ['--workers', 'workers'],
  ['--quiet', 'quiet'],
  ['--json', 'json'],
  ['--allow-duplicates', 'allowDuplicates'],
];

/** The flags of a connection to the queue's Redis (src/cli/connection.ts), refused together without `--queue`. */
const REDIS_FIELDS = ['redis-user', 'redis-password-file', 'redis-tls-ca', 'redis-tls-cert', 'redis-tls-key'];

/**
 * The replay's table. `--db` and `--out` are the outputs (checked first, see
 * {@link validateReplayOptions}); `--workers` picks the mode, so it applies in every one.
 */
export const REPLAY_TABLE: ModeTable<ReplayMode> = {
  modes: {
    serial: 'the default: the LOGs one after another',
    merged: '--merge',
    resumed: '--resume',
    partitioned: '--workers N, N > 1',
    queued: '--queue URL',
    partition: 'one partition of a partitioned replay: the library only',
  },
  internal: ['partition'],
  rules: [
    {
      flag: '--queue-name',
      field: 'queueName',
      modes: ['queued'],
      group: 'queue',
      refusal: () => '--queue-name and --attempts go with --queue',
    },
    {
      flag: '--attempts',
      field: 'attempts',
      modes: ['queued'],
      group: 'queue',
      refusal: () => '--queue-name and --attempts go with --queue',
    },
    { flag: '--queue-wait', field: 'queueWait', modes: ['queued'], refusal: () => '--queue-wait goes with --queue' },
    ...REDIS_FIELDS.map(
      (f): FlagRule<ReplayMode> => ({
        flag: `--${f}`,
        field: f,
        modes: ['queued'],
        group: 'redis',
        refusal: (_m, flags) => `${flags.join(', ')}: for a connection to Redis (--queue URL)`,
      }),
    ),
    { flag: '--from', field: 'from', modes: [...NOT_PARTITIONED, 'partition'], refusal: partitionedOr('--from') },
    { flag: '--to', field: 'to', modes: [...NOT_PARTITIONED, 'partition'], refusal: partitionedOr('--to') },
    { flag: '--resume', field: 'resume', modes: ['resumed'], refusal: partitionedOr('--resume', MERGE_REFUSAL) },
    {
      flag: '--snapshot-every',
      field: 'snapshotEveryUs',
      modes: ['serial', 'resumed', 'partition'],
      refusal: partitionedOr('--snapshot-every', MERGE_REFUSAL),
    },
    { flag: '--reorder-window', field: 'reorderWindowUs', modes: NOT_PARTITIONED, refusal: partitionedOr('--reorder-window') },
    { flag: '--merge', field: 'merge', modes: ['merged'], refusal: partitionedOr('--merge', MERGE_REFUSAL) },
    { flag: '--time', field: 'time', modes: NOT_PARTITIONED, refusal: partitionedOr('--time') },
    // A partitioned replay keeps every core busy with its partitions already. A merge reads its
    // vendor files in a read-ahead worker (src/io/readAhead.ts) with 3 or more, else in its own thread.
    {
      flag: '--threads',
      field: 'threads',
      modes: ['serial', 'resumed', 'partition', 'merged'],
      refusal: partitionedOr('--threads'),
    },
    {
      flag: '--config',
      field: 'config',
      modes: ['serial', 'merged', 'partitioned', 'queued', 'partition'],
      refusal: () => '--config: a resumed replay (--resume) goes on with the engine of its snapshot, and the config it was computed with',
    },
    { flag: '--queue', field: 'queue', modes: ['queued'] },
    ...EVERY_MODE.map(([flag, field]): FlagRule<ReplayMode> => ({ flag, field, modes: 'all' })),
  ],
};

/**
 * The options of a replay that {@link validateReplayOptions} reads (those of replay(),
 * replayParallel and the command line; each field of {@link REPLAY_TABLE}'s rows too).
 */
export interface ReplayOptionValues extends ReplayModeChoice {
  inputs?: readonly string[];
  db?: string;
  out?: string;
  format?: string;
  snapshotEveryUs?: unknown;
  /** Threads reading each input (src/io/batchSource.ts): a whole number of at least 1. */
  threads?: unknown;
}

/**
 * Checks the options of a replay against {@link REPLAY_TABLE} in its mode ({@link replayModeOf}):
 * first the output (`db` or `out`, and what needs `db`), then each flag's modes, then what a
 * partitioned replay does not read yet (vendor formats and files). The library's refusal and the
 * command line's are this one check.
 *
 * @throws XrateError `usage`, its field the flag at fault
 */
export function validateReplayOptions(o: ReplayOptionValues, mode: ReplayMode = replayModeOf(o)): void {
  if (o.db !== undefined && o.out !== undefined)
    throw new XrateError('usage', 'give either --db (SQLite output) or --out (rate file), not both', { field: '--out' });
  if (o.db === undefined && (o.snapshotEveryUs !== undefined || o.resume)) {
    throw new XrateError(
      'usage',
      `--snapshot-every and --resume need the SQLite output (--db)${o.out !== undefined ? ', not --out' : ''}`,
      { field: o.resume ? '--resume' : '--snapshot-every' },
    );
  }
  refuseOutOfMode(REPLAY_TABLE, mode, o as Readonly<Record<string, unknown>>);
  const t = o.threads;
  if (t !== undefined && !(typeof t === 'number' && Number.isInteger(t) && t >= 1 && t <= MAX_THREADS))
    throw new XrateError('usage', `--threads must be a whole number from 1 to ${MAX_THREADS}, got ${String(t)}`, { field: '--threads' });
  if (mode !== 'partitioned' && mode !== 'queued') return;
  // The pre-scan that plans the partitions reads xrate's own formats only.
  if (o.format === 'coinapi' || o.format === 'tardis')
    throw new XrateError('usage', `partitioned replays (--workers, --queue) do not read ${o.format} files yet`, { field: '--format' });
  for (const f of expandInputs([...(o.inputs ?? [])])) {
    const v = o.format === undefined || o.format === 'csv' ? detectVendor(f)?.format : undefined;
    if (v !== undefined)
      throw new XrateError(
        'usage',
        `partitioned replays (--workers, --queue) do not read ${v === 'coinapi' ? 'CoinAPI flat files' : 'tardis CSV files'} yet ("${f}")`,
      );
  }
}
