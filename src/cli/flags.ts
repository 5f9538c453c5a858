/**
 * The flags of the commands that run in modes (`replay`, `serve`, `ems serve`, `publish`,
 * `worker`): each command's option table, and its table of modes (src/replay/options.ts) that says
 * which flags apply in which mode. The command refuses a flag given outside its modes with that
 * table's check, and its `--help` lists the modes of each flag from the same table.
 *
 * @module
 */
import { COMMON, DUPLICATES_OPTION, HELP_OPTION, type Options } from './args.js';
import { NATS_FLAGS, REDIS_FLAGS } from './connection.js';
import { type FlagRule, type ModeTable, REPLAY_TABLE, type ReplayMode } from '../replay/options.js';

/** Options of `xrate replay`. */
export const REPLAY_OPTIONS = {
  ...COMMON,
  db: { type: 'string' },
  out: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  track: { type: 'string', multiple: true },
  periods: { type: 'string' },
  'snapshot-every': { type: 'string' },
  resume: { type: 'boolean' },
  'no-own-metrics': { type: 'boolean' },
  'batch-size': { type: 'string' },
  quiet: { type: 'boolean' },
  json: { type: 'boolean' },
  workers: { type: 'string' },
  threads: { type: 'string' },
  queue: { type: 'string' },
  ...REDIS_FLAGS,
  'queue-name': { type: 'string' },
  'queue-wait': { type: 'string' },
  attempts: { type: 'string' },
  merge: { type: 'boolean' },
  time: { type: 'string' },
  ...DUPLICATES_OPTION,
} as const;

/** Options of `xrate serve`. */
export const SERVE_OPTIONS = {
  ...COMMON,
  db: { type: 'string' },
  keys: { type: 'string' },
  redis: { type: 'string' },
  ...REDIS_FLAGS,
  host: { type: 'string' },
  port: { type: 'string' },
  replay: { type: 'string' },
  follow: { type: 'string' },
  'heavy-concurrency': { type: 'string' },
  nats: { type: 'string' },
  ...NATS_FLAGS,
  stream: { type: 'string' },
  'snapshot-every': { type: 'string' },
  'snapshot-from': { type: 'string' },
  'ready-lag': { type: 'string' },
  'log-level': { type: 'string' },
} as const;

/** Options of `xrate ems serve`. */
export const EMS_OPTIONS = {
  ...COMMON,
  db: { type: 'string' },
  replay: { type: 'string' },
  follow: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  managed: { type: 'boolean' },
  keys: { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'tls-client-ca': { type: 'string' },
  sites: { type: 'string' },
  'client-pem': { type: 'string' },
} as const;

/** Options of `xrate publish`. */
export const PUBLISH_OPTIONS = {
  ...HELP_OPTION,
  nats: { type: 'string' },
  ...NATS_FLAGS,
  stream: { type: 'string' },
  rate: { type: 'string' },
  follow: { type: 'boolean' },
  format: { type: 'string' },
  'max-line-bytes': { type: 'string' },
  quiet: { type: 'boolean' },
  'from-line': { type: 'string' },
  resume: { type: 'boolean' },
  ...DUPLICATES_OPTION,
} as const;

/** Options of `xrate convert`. */
export const CONVERT_OPTIONS = {
  out: { type: 'string' },
  format: { type: 'string' },
  merge: { type: 'boolean' },
  time: { type: 'string' },
  'max-line-bytes': { type: 'string' },
  quiet: { type: 'boolean' },
  ...DUPLICATES_OPTION,
  help: { type: 'boolean', short: 'h' },
} as const;

/** Options of `xrate worker`. */
export const WORKER_OPTIONS = {
  queue: { type: 'string' },
  ...REDIS_FLAGS,
  'queue-name': { type: 'string' },
  'queue-wait': { type: 'string' },
  concurrency: { type: 'string' },
  'lock-ms': { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A rule of a command's table, keyed by its option's name (flag and field are that name). */
type Rule<M extends string> = Omit<FlagRule<M>, 'flag' | 'field'>;

/**
 * The table of a command: `rules` (by option name, in check order) first, then a row applying in
 * every mode for each other option of `options`, so that every flag has its row.
 */
function commandTable<M extends string>(
  options: Options,
  modes: Readonly<Record<M, string>>,
  rules: Readonly<Record<string, Rule<M>>>,
  base: readonly FlagRule<M>[] = [],
): ModeTable<M> {
  const rows: FlagRule<M>[] = [...base, ...Object.entries(rules).map(([name, r]) => ({ ...r, flag: `--${name}`, field: name }))];
  for (const name of Object.keys(rules)) if (!(name in options)) throw new Error(`flags.ts: no option --${name}`);
  for (const name of Object.keys(options))
    if (!rows.some((r) => r.flag === `--${name}`)) rows.push({ flag: `--${name}`, field: name, modes: 'all' });
  return { modes, rules: rows };
}

/** The table of `xrate replay`: {@link REPLAY_TABLE} (replay() and replayParallel check the same rows), and `--help`. */
export const REPLAY_CLI_TABLE: ModeTable<ReplayMode> = {
  ...commandTable(REPLAY_OPTIONS, REPLAY_TABLE.modes, {}, REPLAY_TABLE.rules),
  internal: REPLAY_TABLE.internal,
};

/** The modes of `xrate serve`. */
export type ServeMode = 'database' | 'replay' | 'follow' | 'replica';

/** The mode of `xrate serve` with these flags: a replica, else following, else replaying, else a database. */
export function serveModeOf(v: { nats?: string; follow?: string; replay?: string }): ServeMode {
  if (v.nats !== undefined) return 'replica';
  if (v.follow !== undefined) return 'follow';
  if (v.replay !== undefined) return 'replay';
  return 'database';
}

const NDJSON_ONLY = { accepts: (v: unknown): boolean => v === 'ndjson', note: 'ndjson only' };

/** The refusals of the log flags (`--config`, `--format`, `--reorder-window`, `--max-line-bytes`) by mode; `db`: the database mode's. */
function logFlagRefusal(db: string): (mode: string, flags: readonly string[]) => string {
  return (mode, flags) => {
    if (mode === 'database') return db;
    if (mode === 'replica')
      return `${flags.join(', ')}: a replica (--nats URL) reads the stream's records, not a log: they apply to --replay LOG or --follow LOG`;
    return `${flags.join(', ')}: a followed log (--follow LOG) is read as plain NDJSON lines as they are appended, without a reorder window`;
  };
}

/** The flags that are a replica's, refused together elsewhere. */
const REPLICA_ONLY = {
  modes: ['replica'],
  group: 'replica',
  refusal: () => '--stream, --snapshot-every, --snapshot-from and --ready-lag apply to a replica (--nats URL)',
} as const;

/** The table of `xrate serve`. */
export const SERVE_TABLE: ModeTable<ServeMode> = commandTable<ServeMode>(
  SERVE_OPTIONS,
  {
    database: 'the default: a replay database, --db',
    replay: '--replay LOG',
    follow: '--follow LOG',
    replica: '--nats URL',
  },
  {
    replay: {
      modes: ['replay'],
      refusal: (mode) =>
        mode === 'replica'
          ? 'give either --nats URL (a replica of a stream) or --replay LOG, not both'
          : '--replay LOG and --follow LOG exclude each other',
    },
    follow: { modes: ['follow'], refusal: () => 'give either --nats URL (a replica of a stream) or --follow LOG, not both' },
    nats: { modes: ['replica'] },
    ...Object.fromEntries(
      Object.keys(NATS_FLAGS).map((f) => [
        f,
        {
          modes: ['replica'],
          group: 'nats',
          refusal: (_m: string, flags: readonly string[]) => `${flags.join(', ')}: for a connection to NATS (--nats URL)`,
        },
      ]),
    ),
    stream: REPLICA_ONLY,
    'snapshot-every': REPLICA_ONLY,
    'snapshot-from': REPLICA_ONLY,
    'ready-lag': REPLICA_ONLY,
    ...logFlags<ServeMode>(
      ['replay', 'follow', 'replica'],
      '--config, --format, --reorder-window and --max-line-bytes apply to --replay LOG or --follow LOG (--config also to --nats); a database answers with the config of its run',
    ),
  },
);

/** The rows of the log flags: `--config` in `configModes`, the others in replay and follow (`--format` ndjson only there, no `--reorder-window`). */
function logFlags<M extends string>(configModes: readonly M[], db: string): Record<string, Rule<M>> {
  const refusal = logFlagRefusal(db);
  const follow = 'follow' as M;
  const replay = 'replay' as M;
  return {
    config: { modes: configModes, group: 'log', refusal },
    format: { modes: [replay, follow], group: 'log', refusal, restricted: { [follow]: NDJSON_ONLY } as unknown as Rule<M>['restricted'] },
    'reorder-window': { modes: [replay], group: 'log', refusal },
    'max-line-bytes': { modes: [replay, follow], group: 'log', refusal },
  };
}

/** The modes of `xrate ems serve`. */
export type EmsMode = 'database' | 'replay' | 'follow';

/** The mode of `xrate ems serve` with these flags. */
export function emsModeOf(v: { follow?: string; replay?: string }): EmsMode {
  if (v.follow !== undefined) return 'follow';
  if (v.replay !== undefined) return 'replay';
  return 'database';
}

/** The table of `xrate ems serve`. */
export const EMS_TABLE: ModeTable<EmsMode> = commandTable<EmsMode>(
  EMS_OPTIONS,
  { database: 'the default: a replay database, --db', replay: '--replay LOG', follow: '--follow LOG' },
  {
    replay: { modes: ['replay'], refusal: () => '--replay LOG and --follow LOG exclude each other' },
    follow: { modes: ['follow'] },
    ...logFlags<EmsMode>(
      ['replay', 'follow'],
      '--config, --format, --reorder-window and --max-line-bytes apply to --replay LOG or --follow LOG',
    ),
  },
);

/** The modes of `xrate publish`. */
export type PublishMode = 'batch' | 'paced' | 'follow';

/** The mode of `xrate publish` with these flags. */
export function publishModeOf(v: { follow?: boolean; rate?: string }): PublishMode {
  if (v.follow) return 'follow';
  if (v.rate !== undefined) return 'paced';
  return 'batch';
}

/** The table of `xrate publish`. */
export const PUBLISH_TABLE: ModeTable<PublishMode> = commandTable<PublishMode>(
  PUBLISH_OPTIONS,
  { batch: 'the default: the LOGs at full speed', paced: '--rate N', follow: '--follow' },
  {
    follow: { modes: ['follow'] },
    rate: { modes: ['batch', 'paced'], refusal: () => '--follow publishes lines as they are appended: no --rate' },
    format: {
      modes: ['batch', 'paced', 'follow'],
      restricted: { follow: NDJSON_ONLY },
      refusal: () => '--format: --follow publishes one plain NDJSON log as it grows (--format ndjson or none)',
    },
    'allow-duplicates': {
      modes: ['batch', 'paced'],
      refusal: () => '--allow-duplicates: --follow publishes one log, which cannot be given twice',
    },
  },
);

/** The table of `xrate worker`: one mode, every flag applies. */
export const WORKER_TABLE: ModeTable<'worker'> = commandTable<'worker'>(WORKER_OPTIONS, { worker: 'partitions from --queue' }, {});

/** The modes of `xrate convert`. */
export type ConvertMode = 'sequence' | 'merge';

/** The mode of `xrate convert` with these flags. */
export function convertModeOf(v: { merge?: boolean }): ConvertMode {
  return v.merge ? 'merge' : 'sequence';
}

/** The table of `xrate convert`: every flag applies in both modes. */
export const CONVERT_TABLE: ModeTable<ConvertMode> = commandTable<ConvertMode>(
  CONVERT_OPTIONS,
  { sequence: 'the default: the LOGs one after another', merge: '--merge' },
  {},
);
