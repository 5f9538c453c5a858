/**
 * Every flag of `replay`, `serve`, `ems serve`, `publish`, `convert` and `worker`, in every mode of its
 * command, either changes what the command does (its output, the database or file it writes, the
 * stream it fills, what its server answers, the port it listens on...) or is refused with exit 2
 * and a message naming it: never taken and dropped.
 *
 * The flags come from the commands' own option tables (src/cli/flags.ts): a flag added without a
 * sample here fails. Which of the two is expected comes from the command's table of modes (the
 * mode the flags select, and whether each given flag applies there); what is checked is what the
 * command does. Real servers: nats-server (plain, TLS with users, token) and redis-server (plain,
 * TLS with an ACL user, one that is stopped), with `xrate worker` processes on the queues.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONVERT_OPTIONS,
  CONVERT_TABLE,
  convertModeOf,
  EMS_OPTIONS,
  EMS_TABLE,
  emsModeOf,
  PUBLISH_OPTIONS,
  PUBLISH_TABLE,
  publishModeOf,
  REPLAY_CLI_TABLE,
  REPLAY_OPTIONS,
  SERVE_OPTIONS,
  SERVE_TABLE,
  serveModeOf,
  WORKER_OPTIONS,
  WORKER_TABLE,
} from '../../src/cli/flags.js';
import { readerWorkersStarted } from '../../src/io/batchSource.js';
import { applies, type ModeTable, replayModeOf } from '../../src/replay/options.js';
import { MERGE_READ_AHEAD_THREADS } from '../../src/replay/recordSource.js';
import { freePort } from '../helpers/redis.js';
import {
  type Args,
  argvOf,
  convertObservation,
  copyOf,
  type Env,
  FROM,
  fresh,
  freshStream,
  type Observation,
  type Probe,
  prefilledStream,
  publishObservation,
  replayObservation,
  serveObservation,
  setUp,
  tearDown,
  useKey,
} from './flagsKit.js';
import {
  getProbe,
  heavyProbe,
  readyProbe,
  redisLostObservation,
  spawnedServeObservation,
  workerJobsObservation,
  workerObservation,
} from './flagsProbes.js';
import { ensureBuilt } from './helpers.js';

/** How a flag is given in a mode: `set` (the flag, and what must come with it to apply), `also` in both runs, `drop` from the mode's base. */
interface Sample {
  set: Args;
  also?: Args;
  drop?: string[];
  positionals?: string[];
  /** A run of its own: a probe of the running server, a replica caught up, the built command... */
  probe?: Probe;
  caughtUp?: boolean;
  observe?: 'spawned' | 'jobs' | 'redisLost' | 'threads';
}

interface Command {
  words: string[];
  options: Record<string, unknown>;
  table: ModeTable<string>;
  modeOf: (args: Args) => string;
  modes: Record<string, { positionals: string[]; base: Args }>;
  sample: (flag: string, mode: string) => Sample;
  observe: (argv: string[], s: Sample, mode: string) => Promise<Observation>;
  /** Refusals besides the table's (the replay's outputs). */
  refusedBesides?: (args: Args) => boolean;
}

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-flags-'));
/** Vendor files (tardis CSV) of the repository's fixtures: what a merge's `--threads` reads. */
const TARDIS = fileURLToPath(new URL('../../fixtures/tardis/binance-futures', import.meta.url));
let env: Env;
let port = 0;

afterAll(async () => {
  await tearDown(env);
  rmSync(dir, { recursive: true, force: true });
});

beforeAll(async () => {
  ensureBuilt();
  env = await setUp(dir);
  useKey(env.key);
  port = await freePort();
}, 300_000);

const has = (a: Args, k: string): boolean => a[k] !== undefined;

/** The flags of the secured NATS, as Args, but `but`. */
function natsSec(but: string[] = []): Args {
  const c = env.certs;
  const all: Args = {
    nats: env.natsSec.url,
    'nats-tls-ca': c.ca,
    'nats-tls-cert': c.clientCert,
    'nats-tls-key': c.clientKey,
    'nats-user': 'xrate',
    'nats-password-file': env.files.natsPassword,
  };
  for (const b of but) delete all[b];
  return all;
}

/** The flags of the secured Redis given by `--url` (redis or queue), but `but`. */
function redisSec(url: string, but: string[] = []): Args {
  const c = env.certs;
  const all: Args = {
    [url]: `rediss://127.0.0.1:${env.redisSec.port}`,
    'redis-tls-ca': c.ca,
    'redis-tls-cert': c.clientCert,
    'redis-tls-key': c.clientKey,
    'redis-user': 'xrate',
    'redis-password-file': env.files.redisPassword,
  };
  for (const b of but) delete all[b];
  return all;
}

/** A credential flag of NATS (`flag`), with what it needs: `set` holds it (and its pair), `also` the rest. */
function natsCredential(flag: string): Sample {
  const f = env.files;
  const own: Record<string, Args> = {
    'nats-user': { 'nats-user': 'xrate' },
    'nats-password-file': { 'nats-password-file': f.natsPassword },
    'nats-token-file': { 'nats-token-file': f.natsToken },
    'nats-nkey-file': { 'nats-nkey-file': f.nkey },
    'nats-creds': { 'nats-creds': f.creds },
    'nats-tls-ca': { 'nats-tls-ca': env.certs.ca },
    'nats-tls-cert': { 'nats-tls-cert': env.certs.clientCert, 'nats-tls-key': env.certs.clientKey },
    'nats-tls-key': { 'nats-tls-cert': env.certs.clientCert, 'nats-tls-key': env.certs.clientKey },
  };
  if (flag === 'nats-token-file') return { set: own[flag], also: { nats: env.natsToken.url } };
  const auth = flag === 'nats-nkey-file' || flag === 'nats-creds' ? ['nats-user', 'nats-password-file'] : [];
  return { set: own[flag], also: natsSec([...Object.keys(own[flag]), ...auth]) };
}

/** A credential flag of Redis given by `--url`. */
function redisCredential(url: string, flag: string): Sample {
  const pair = flag === 'redis-tls-cert' || flag === 'redis-tls-key' ? ['redis-tls-cert', 'redis-tls-key'] : [flag];
  const all = redisSec(url);
  return { set: Object.fromEntries(pair.map((p) => [p, all[p]])), also: redisSec(url, pair) };
}

const isNats = (f: string): boolean => f.startsWith('nats-');
const isRedis = (f: string): boolean => f.startsWith('redis-');

/**
 * What `--threads` changes in a replay: the reader worker threads it starts (the modes it applies
 * to run in this process), and nothing else (the outputs are the same, which is not told apart
 * here: a run's database names its own path).
 */
async function threadsObservation(e: Env, argv: string[]): Promise<Observation> {
  const before = readerWorkersStarted();
  const o = await replayObservation(e, argv);
  return { ...o, seen: { readerWorkers: readerWorkersStarted() - before } };
}

const REPLAY: () => Command = () => ({
  words: ['replay'],
  options: REPLAY_OPTIONS,
  table: REPLAY_CLI_TABLE,
  modeOf: (a) =>
    replayModeOf({
      merge: has(a, 'merge'),
      resume: has(a, 'resume'),
      workers: has(a, 'workers') ? Number(a.workers) : undefined,
      queue: a.queue as string | undefined,
    }),
  modes: {
    serial: { positionals: [env.log], base: { db: fresh(env, 'x.sqlite') } },
    merged: { positionals: [env.log, env.log2], base: { db: fresh(env, 'x.sqlite'), merge: true } },
    resumed: { positionals: [env.log], base: { db: copyOf(env, env.resumable), resume: true, from: FROM } },
    partitioned: { positionals: [env.log], base: { db: fresh(env, 'x.sqlite'), workers: '2' } },
    queued: { positionals: [env.log], base: { db: fresh(env, 'x.sqlite'), queue: env.redis.url } },
  },
  sample: (flag, mode) => {
    if (isRedis(flag)) return mode === 'queued' ? redisCredential('queue', flag) : { set: { [flag]: env.certs.ca } };
    const s: Record<string, Sample> = {
      help: { set: { help: true } },
      format: { set: { format: 'csv' } },
      config: { set: { config: env.config } },
      'reorder-window': { set: { 'reorder-window': '5' } },
      'max-line-bytes': { set: { 'max-line-bytes': '150' } },
      db: { set: { db: fresh(env, 'other.sqlite') } },
      out: { set: { out: fresh(env, 'rates.ndjson') }, drop: ['db'] },
      from: { set: { from: '2024-03-01T00:08:00Z' } },
      to: { set: { to: '2024-03-01T00:09:00Z' } },
      track: { set: { track: 'BTC/USD' } },
      periods: { set: { periods: '5MIN' } },
      'snapshot-every': { set: { 'snapshot-every': '2m' } },
      resume:
        mode === 'partitioned' || mode === 'queued'
          ? { set: { resume: true } }
          : { set: { resume: true }, also: { db: copyOf(env, env.resumable), from: FROM } },
      'no-own-metrics': { set: { 'no-own-metrics': true } },
      'batch-size': { set: { 'batch-size': '7' } },
      // Not the default (the cores): 1 reads in the replay's thread, more in a reader worker. A
      // merge reads its vendor files in a read-ahead worker from 3 on (its other inputs in its own thread).
      threads: {
        set: {
          threads:
            mode === 'merged'
              ? availableParallelism() >= MERGE_READ_AHEAD_THREADS
                ? '1'
                : String(MERGE_READ_AHEAD_THREADS)
              : availableParallelism() > 1
                ? '1'
                : '2',
        },
        observe: 'threads',
        ...(mode === 'merged' && { positionals: [TARDIS, env.log] }),
      },
      quiet: { set: { quiet: true } },
      json: { set: { json: true } },
      workers: { set: { workers: mode === 'partitioned' ? '3' : '2' } },
      queue: mode === 'queued' ? { set: redisSec('queue') } : { set: { queue: env.redis.url } },
      'queue-name': { set: { 'queue-name': 'second' } },
      'queue-wait':
        mode === 'queued'
          ? { set: { 'queue-wait': '7' }, also: { queue: env.redisLost.url }, observe: 'redisLost' }
          : { set: { 'queue-wait': '7' } },
      attempts: { set: { attempts: '1' } },
      merge: { set: { merge: true } },
      time: { set: { time: 'exchange' } },
      'allow-duplicates': { set: { 'allow-duplicates': true }, positionals: [env.log, env.log] },
    };
    return s[flag];
  },
  observe: (argv, s) =>
    s.observe === 'redisLost'
      ? redisLostObservation(env, argv)
      : s.observe === 'threads'
        ? threadsObservation(env, argv)
        : replayObservation(env, argv),
  refusedBesides: (a) => has(a, 'out') && (has(a, 'resume') || has(a, 'snapshot-every')),
});

/** The `serve` and `ems serve` samples they share: the log flags, --db, --host, --port. */
function serverSample(flag: string, mode: string): Sample | undefined {
  const s: Record<string, Sample> = {
    help: { set: { help: true } },
    format: { set: { format: 'csv' } },
    config: { set: { config: env.config } },
    'reorder-window': { set: { 'reorder-window': '5' } },
    'max-line-bytes': { set: { 'max-line-bytes': '150' } },
    db: { set: { db: mode === 'database' ? copyOf(env, env.db) : fresh(env, 'other.sqlite') } },
    host: { set: { host: 'localhost' } },
    port: { set: { port: String(port) } },
    replay: { set: { replay: env.log }, also: { db: fresh(env, 'served.sqlite') } },
    follow: { set: { follow: env.log }, also: { db: fresh(env, 'served.sqlite') } },
  };
  return s[flag];
}

const SERVE: () => Command = () => ({
  words: ['serve'],
  options: SERVE_OPTIONS,
  table: SERVE_TABLE,
  modeOf: (a) => serveModeOf(a as Record<string, string>),
  modes: {
    database: { positionals: [], base: { db: env.db, port: '0' } },
    replay: { positionals: [], base: { replay: env.log, db: fresh(env, 'served.sqlite'), keys: env.db, port: '0' } },
    follow: { positionals: [], base: { follow: env.log, db: fresh(env, 'served.sqlite'), keys: env.db, port: '0' } },
    replica: { positionals: [], base: { nats: env.nats.url, db: fresh(env, 'replica.sqlite'), keys: env.db, port: '0' } },
  },
  sample: (flag, mode) => {
    if (isNats(flag)) return mode === 'replica' ? natsCredential(flag) : { set: { [flag]: env.certs.ca } };
    if (isRedis(flag)) return { ...redisCredential('redis', flag), drop: ['keys'] };
    const s: Record<string, Sample> = {
      keys: { set: { keys: fresh(env, 'keys.sqlite') } },
      redis: { set: { redis: env.redis.url }, drop: ['keys'] },
      'heavy-concurrency': { set: { 'heavy-concurrency': '1' }, probe: heavyProbe },
      nats: { set: { nats: env.nats.url }, also: { db: fresh(env, 'replica.sqlite') } },
      stream: { set: { stream: 'BIG' } },
      'snapshot-every': { set: { 'snapshot-every': '1m' }, caughtUp: true },
      'snapshot-from': { set: { 'snapshot-from': env.replicaDb }, caughtUp: true },
      'ready-lag': { set: { 'ready-lag': '5' }, also: { stream: 'BIG' }, probe: readyProbe },
      'log-level': { set: { 'log-level': 'error' }, observe: 'spawned' },
    };
    return serverSample(flag, mode) ?? s[flag];
  },
  observe: (argv, s) =>
    s.observe === 'spawned' ? spawnedServeObservation(argv) : serveObservation(argv, { probe: s.probe, caughtUp: s.caughtUp, dir }),
});

const EMS: () => Command = () => ({
  words: ['ems', 'serve'],
  options: EMS_OPTIONS,
  table: EMS_TABLE,
  modeOf: (a) => emsModeOf(a as Record<string, string>),
  modes: {
    database: { positionals: [], base: { db: env.db, port: '0' } },
    replay: { positionals: [], base: { replay: env.log, db: fresh(env, 'served.sqlite'), port: '0' } },
    follow: { positionals: [], base: { follow: env.log, db: fresh(env, 'served.sqlite'), port: '0' } },
  },
  sample: (flag, mode) => {
    const c = env.certs;
    const s: Record<string, Sample> = {
      managed: { set: { managed: true } },
      keys: { set: { keys: fresh(env, 'keys.sqlite') }, also: { managed: true } },
      'tls-cert': { set: { 'tls-cert': c.serverCert, 'tls-key': c.serverKey } },
      'tls-key': { set: { 'tls-cert': c.serverCert, 'tls-key': c.serverKey } },
      'tls-client-ca': { set: { 'tls-client-ca': c.ca }, also: { managed: true, 'tls-cert': c.serverCert, 'tls-key': c.serverKey } },
      sites: { set: { sites: env.files.sites }, probe: getProbe('/v1/locations') },
      'client-pem': { set: { 'client-pem': env.files.clientPem }, probe: getProbe('/v1/certificate/pem') },
    };
    return serverSample(flag, mode) ?? s[flag];
  },
  observe: (argv, s) => serveObservation(argv, { probe: s.probe, dir }),
});

const PUBLISH: () => Command = () => ({
  words: ['publish'],
  options: PUBLISH_OPTIONS,
  table: PUBLISH_TABLE,
  modeOf: (a) => publishModeOf({ follow: has(a, 'follow'), rate: a.rate as string | undefined }),
  modes: {
    batch: { positionals: [env.short], base: { nats: env.nats.url, stream: freshStream } },
    paced: { positionals: [env.short], base: { nats: env.nats.url, stream: freshStream, rate: '1000' } },
    follow: { positionals: [env.short], base: { nats: env.nats.url, stream: freshStream, follow: true } },
  },
  sample: (flag, mode) => {
    if (isNats(flag)) return natsCredential(flag);
    const s: Record<string, Sample> = {
      help: { set: { help: true } },
      nats: { set: { nats: env.natsToken.url } },
      stream: { set: { stream: 'CHOSEN' } },
      rate: { set: { rate: '10' } },
      follow: { set: { follow: true } },
      format: { set: { format: 'csv' } },
      'max-line-bytes': { set: { 'max-line-bytes': '150' } },
      quiet: { set: { quiet: true } },
      'from-line': { set: { 'from-line': '10' } },
      resume: { set: { resume: true }, also: { stream: prefilledStream(env, env.short) } },
      'allow-duplicates':
        mode === 'follow'
          ? { set: { 'allow-duplicates': true } }
          : { set: { 'allow-duplicates': true }, positionals: [env.short, env.short] },
    };
    return s[flag];
  },
  observe: (argv) => publishObservation(env, argv, argv.includes('--follow')),
});

const CONVERT: () => Command = () => ({
  words: ['convert'],
  options: CONVERT_OPTIONS,
  table: CONVERT_TABLE,
  modeOf: (a) => convertModeOf({ merge: has(a, 'merge') }),
  modes: {
    sequence: { positionals: [env.log, env.log2], base: { out: fresh(env, 'x.parquet') } },
    merge: { positionals: [env.log, env.log2], base: { out: fresh(env, 'x.parquet'), merge: true } },
  },
  sample: (flag, mode) => {
    const s: Record<string, Sample> = {
      help: { set: { help: true } },
      out: { set: { out: fresh(env, 'y.parquet') }, drop: ['out'] },
      format: { set: { format: 'csv' } },
      merge: mode === 'merge' ? { set: { merge: true }, drop: ['merge'] } : { set: { merge: true } },
      // Vendor files: the time their events take.
      time: { set: { time: 'exchange' }, positionals: ['fixtures/tardis'] },
      'max-line-bytes': { set: { 'max-line-bytes': '150' } },
      quiet: { set: { quiet: true } },
      'allow-duplicates': { set: { 'allow-duplicates': true }, positionals: [env.log, env.log] },
    };
    return s[flag];
  },
  observe: (argv) => convertObservation(env, argv),
});

const WORKER: () => Command = () => ({
  words: ['worker'],
  options: WORKER_OPTIONS,
  table: WORKER_TABLE,
  modeOf: () => 'worker',
  modes: { worker: { positionals: [], base: { queue: env.redis.url, 'queue-name': freshStream } } },
  sample: (flag) => {
    if (isRedis(flag)) return redisCredential('queue', flag);
    const s: Record<string, Sample> = {
      help: { set: { help: true } },
      queue: { set: { queue: env.redisLost.url } },
      'queue-name': { set: { 'queue-name': 'chosen' } },
      'queue-wait': { set: { 'queue-wait': '7' }, also: { queue: env.redisLost.url }, observe: 'redisLost' },
      concurrency: { set: { concurrency: '3' }, observe: 'jobs' },
      'lock-ms': { set: { 'lock-ms': '1000' }, observe: 'jobs' },
      quiet: { set: { quiet: true } },
    };
    return s[flag];
  },
  observe: (argv, s) =>
    s.observe === 'redisLost'
      ? redisLostObservation(env, argv)
      : s.observe === 'jobs'
        ? workerJobsObservation(
            env,
            argv.filter((a, i) => a !== '--queue-name' && argv[i - 1] !== '--queue-name'),
          )
        : workerObservation(env, argv),
});

/** Whether the table refuses some flag of `args` in the mode they select (the expectation). */
function refusedByTable(table: ModeTable<string>, mode: string, args: Args): boolean {
  return table.rules.some((r) => {
    const v = args[r.flag.slice(2)];
    if (v === undefined) return false;
    return !applies(r, mode) || r.restricted?.[mode]?.accepts(v) === false;
  });
}

const COMMANDS: [string, () => Command][] = [
  ['replay', REPLAY],
  ['serve', SERVE],
  ['ems serve', EMS],
  ['publish', PUBLISH],
  ['convert', CONVERT],
  ['worker', WORKER],
];

describe('every flag applies or is refused', () => {
  for (const [name, make] of COMMANDS) {
    it(`${name}: every option has a row in the table of modes and a sample here`, () => {
      const c = make();
      for (const flag of Object.keys(c.options)) {
        expect(
          c.table.rules.some((r) => r.flag === `--${flag}`),
          `--${flag} has a row`,
        ).toBe(true);
        for (const mode of Object.keys(c.modes)) expect(c.sample(flag, mode), `--${flag} in ${mode} has a sample`).toBeDefined();
      }
      expect(Object.keys(c.modes).sort()).toEqual(
        Object.keys(c.table.modes)
          .filter((m) => !c.table.internal?.includes(m))
          .sort(),
      );
    });

    for (const mode of modesOf(name)) {
      it(`${name} in mode ${mode}`, async () => {
        const c = make();
        const { positionals, base } = c.modes[mode];
        const failures: string[] = [];
        const seen = new Map<string, Observation>();
        for (const flag of Object.keys(c.options)) {
          const s = c.sample(flag, mode);
          const common: Args = { ...base, ...s.also };
          for (const d of s.drop ?? []) delete common[d];
          const without: Args = { ...common };
          if (!(flag in base)) for (const k of Object.keys(s.set)) if (!(k in base)) delete without[k];
          const withArgs: Args = { ...common, ...s.set };
          const pos = s.positionals ?? positionals;
          const refused = refusedByTable(c.table, c.modeOf(withArgs), withArgs) || (c.refusedBesides?.(withArgs) ?? false);
          const got = await c.observe(argvOf(c.words, pos, withArgs), s, mode);
          if (refused) {
            if (got.code !== 2 || !got.err.includes(`--${flag}`))
              failures.push(`--${flag} in ${mode}: expected exit 2 naming it, got ${got.code}: ${got.err.slice(0, 300)}`);
            continue;
          }
          const key = JSON.stringify([mode, pos, Object.entries(without).map(([k, v]) => [k, typeof v === 'function' ? 'made' : v])]);
          const special = s.probe || s.observe || s.caughtUp ? flag : '';
          let before = seen.get(key + special);
          if (!before) {
            before = await c.observe(argvOf(c.words, pos, without), s, mode);
            seen.set(key + special, before);
          }
          if (got.code === 2) failures.push(`--${flag} in ${mode}: refused, where it applies: ${got.err.slice(0, 300)}`);
          else if (JSON.stringify(got.seen) === JSON.stringify(before.seen) && got.code === before.code)
            failures.push(`--${flag} in ${mode}: no difference with or without it: ${JSON.stringify(got.seen).slice(0, 300)}`);
        }
        expect(failures).toEqual([]);
      }, 600_000);
    }
  }
});

/** The modes of command `name` (its table's, without the library's own). */
function modesOf(name: string): string[] {
  const tables: Record<string, ModeTable<string>> = {
    replay: REPLAY_CLI_TABLE,
    serve: SERVE_TABLE,
    'ems serve': EMS_TABLE,
    publish: PUBLISH_TABLE,
    convert: CONVERT_TABLE,
    worker: WORKER_TABLE,
  };
  const t = tables[name];
  return Object.keys(t.modes).filter((m) => !t.internal?.includes(m));
}
