/**
 * The servers, files and observers of test/e2e/flags.test.ts: a real nats-server (plain, with TLS
 * and users, with a token), real redis-servers (plain, with TLS and an ACL user), small generated
 * logs, and for each command a way to run it (in-process through `run(argv, io)`, or the built
 * command where a run needs it) and to say what it did: exit code, output, the database or file
 * it wrote, what a server answered. Paths made per run, ports and keys are normalised away.
 */
import { createHash } from 'node:crypto';
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, nkeys } from '@nats-io/transport-node';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import { generateLog, writeLog } from '../../scripts/gen-log.js';
import { run } from '../../src/cli/main.js';
import { publish } from '../../src/distributed/publish.js';
import { type CertificateFiles, certificateFiles } from '../helpers/certificates.js';
import { capturedIo } from '../helpers/io.js';
import { type NatsServer, startNats } from '../helpers/nats.js';
import { type RedisServer, startRedis } from '../helpers/redis.js';
import { BIN, digestTables, query, ROOT } from './helpers.js';

/** A flag's value(s): a string, `true` for a boolean flag, or a maker called at each run (a fresh path). */
export type Val = string | true | (() => string);
/** Flags by name (without `--`). */
export type Args = Record<string, Val>;

/** The command line of `words`, `positionals` and `args` (makers called now). */
export function argvOf(words: readonly string[], positionals: readonly string[], args: Args): string[] {
  const out = [...words, ...positionals];
  for (const [k, v] of Object.entries(args)) {
    if (v === true) out.push(`--${k}`);
    else out.push(`--${k}`, typeof v === 'function' ? v() : v);
  }
  return out;
}

/** The value of `--name` in `argv`. */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? undefined : argv[i + 1];
}

export interface Env {
  dir: string;
  certs: CertificateFiles;
  /** The log most runs read (10 minutes, 3000 events, some late and bad lines), a second one, a short one. */
  log: string;
  log2: string;
  short: string;
  config: string;
  /** A replay database of `log`, with an API key (`key`). */
  db: string;
  key: string;
  /** A database a replay stopped in, with snapshots taken before its output began (--from FROM). */
  resumable: string;
  /** A replica's database of the stream XRATE, for --snapshot-from. */
  replicaDb: string;
  nats: NatsServer;
  natsSec: NatsServer;
  natsToken: NatsServer;
  redis: RedisServer;
  redisSec: RedisServer;
  /** A Redis that a test stops and starts again (the queue's Redis lost). */
  redisLost: RedisServer;
  files: Record<'natsPassword' | 'natsToken' | 'nkey' | 'creds' | 'redisPassword' | 'sites' | 'clientPem', string>;
  workers: ChildProcess[];
  /** What each started `xrate worker` printed on stderr. */
  workerErr: Map<string, string>;
}

export const FROM = '2024-03-01T00:07:00Z';
const NATS_PASSWORD = 'nats-pw-for-flags';
const NATS_TOKEN = 'nats-token-for-flags';
const REDIS_PASSWORD = 'redis-pw-for-flags';

let counter = 0;
/** A path of its own in `dir` for each run (`run-N/name`), normalised away in observations. */
export function fresh(env: Env, name: string): () => string {
  return () => {
    const d = join(env.dir, `run-${++counter}`);
    mkdirSync(d, { recursive: true });
    return join(d, name);
  };
}

/** A copy of `file` for each run. */
export function copyOf(env: Env, file: string): () => string {
  return () => {
    const p = fresh(env, 'copy.sqlite')();
    copyFileSync(file, p);
    return p;
  };
}

/** A fresh stream name for each run (normalised away). */
export const freshStream = (): string => `RUN${++counter}`;

function file(dir: string, name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text, { mode: 0o600 });
  return p;
}

/** Starts the servers and makes the files. */
export async function setUp(dir: string): Promise<Env> {
  mkdirSync(join(dir, 'certs'));
  const certs = certificateFiles(join(dir, 'certs'));
  const nkey = nkeys.createUser();
  const seed = new TextDecoder().decode(nkey.getSeed());
  const files = {
    natsPassword: file(dir, 'nats.pw', `${NATS_PASSWORD}\n`),
    natsToken: file(dir, 'nats.token', `${NATS_TOKEN}\n`),
    nkey: file(dir, 'user.nk', `${seed}\n`),
    creds: file(
      dir,
      'user.creds',
      `-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.c2ln\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`,
    ),
    redisPassword: file(dir, 'redis.pw', `${REDIS_PASSWORD}\n`),
    sites: file(dir, 'sites.json', JSON.stringify({ locations: [{ location_id: 'FRA' }], endpoints: [] })),
    clientPem: file(dir, 'client.pem', readFileSync(certs.clientCert, 'utf8') + readFileSync(certs.clientKey, 'utf8')),
  };
  const [nats, natsSec, natsToken, redis, redisSec, redisLost] = await Promise.all([
    startNats(),
    startNats(
      `tls { cert_file: "${certs.serverCert}", key_file: "${certs.serverKey}", ca_file: "${certs.ca}", verify: true, timeout: 2 }\n` +
        `authorization { users = [ { user: "xrate", password: "${NATS_PASSWORD}" }, { nkey: "${nkey.getPublicKey()}" } ] }\n`,
    ),
    startNats(`authorization { token: "${NATS_TOKEN}" }\n`),
    startRedis(),
    startRedis({
      tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.ca },
      args: ['--user', 'default', 'off', '--user', 'xrate', 'on', `>${REDIS_PASSWORD}`, '~*', '&*', '+@all'],
    }),
    startRedis(),
  ]);
  const env: Env = {
    dir,
    certs,
    log: join(dir, 'log.ndjson'),
    log2: join(dir, 'log2.ndjson'),
    short: join(dir, 'short.ndjson'),
    config: file(dir, 'config.json', JSON.stringify({ refreshEverySeconds: 60, volumeWindowSeconds: 300 })),
    db: join(dir, 'db.sqlite'),
    key: '',
    resumable: join(dir, 'resumable.sqlite'),
    replicaDb: join(dir, 'replica.sqlite'),
    nats,
    natsSec,
    natsToken,
    redis,
    redisSec,
    redisLost,
    files,
    workers: [],
    workerErr: new Map(),
  };
  const start = '2024-03-01T00:00:00Z';
  await writeLog(env.log, { seed: 41, events: 3000, rate: 5, badRate: 0.01, lateRate: 0.02, start });
  await writeLog(env.log2, { seed: 42, events: 1000, rate: 2, start });
  writeFileSync(env.short, `${[...generateLog({ seed: 43, events: 60, rate: 5, start })].join('\n')}\n`);
  // With eligibility refreshed every minute, the 10 minutes of the log have rates.
  expect((await cli('replay', env.log, '--db', env.db, '--quiet', '--config', env.config)).code).toBe(0);
  const k = await cli('keys', 'create', '--db', env.db);
  env.key = k.out.trim().split('\n').pop() ?? '';
  await makeResumable(env);
  // The streams of the replicas, on each NATS server.
  for (const [url, extra] of [
    [nats.url, []],
    [natsSec.url, natsSecFlags(env)],
    [natsToken.url, ['--nats-token-file', files.natsToken]],
  ] as const) {
    const r = await cli('publish', env.log, '--nats', url, '--quiet', ...extra);
    expect(r.code, r.err).toBe(0);
  }
  const big = join(dir, 'big.ndjson');
  await writeLog(big, { seed: 44, events: 30_000, rate: 50, start });
  expect((await cli('publish', big, '--nats', nats.url, '--stream', 'BIG', '--quiet')).code).toBe(0);
  // A replica's database, caught up.
  const rep = await serveObservation(['serve', '--nats', nats.url, '--db', env.replicaDb, '--port', '0'], { caughtUp: true });
  expect(rep.code).toBe(0);
  // The workers of the queued replays: on the plain Redis (default queue and queue "second"), on the secured one.
  startWorker(env, 'plain', ['--queue', redis.url]);
  startWorker(env, 'second', ['--queue', redis.url, '--queue-name', 'second']);
  startWorker(env, 'secured', ['--queue', `rediss://127.0.0.1:${redisSec.port}`, ...redisSecFlags(env)]);
  return env;
}

/** Stops what {@link setUp} started. */
export async function tearDown(env: Env | undefined): Promise<void> {
  if (!env) return;
  for (const w of env.workers) w.kill('SIGKILL');
  await Promise.all([env.nats, env.natsSec, env.natsToken].map((n) => n.dispose()));
  await Promise.all([env.redis, env.redisSec, env.redisLost].map((r) => r.stop()));
}

/** Every credential flag of the secured NATS (its TLS, the user and password). */
export function natsSecFlags(env: Env): string[] {
  const c = env.certs;
  return [
    '--nats-tls-ca',
    c.ca,
    '--nats-tls-cert',
    c.clientCert,
    '--nats-tls-key',
    c.clientKey,
    '--nats-user',
    'xrate',
    '--nats-password-file',
    env.files.natsPassword,
  ];
}

/** Every credential flag of the secured Redis. */
export function redisSecFlags(env: Env): string[] {
  const c = env.certs;
  return [
    '--redis-tls-ca',
    c.ca,
    '--redis-tls-cert',
    c.clientCert,
    '--redis-tls-key',
    c.clientKey,
    '--redis-user',
    'xrate',
    '--redis-password-file',
    env.files.redisPassword,
  ];
}

function startWorker(env: Env, name: string, args: string[]): void {
  const w = spawn(process.execPath, [BIN, 'worker', ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  env.workerErr.set(name, '');
  w.stderr?.on('data', (d: Buffer) => env.workerErr.set(name, env.workerErr.get(name) + d.toString()));
  env.workers.push(w);
}

/** A replay stopped part of the way (a failing listener), with snapshots every minute taken before its output begins at FROM. */
async function makeResumable(env: Env): Promise<void> {
  const { replay } = await import('../../src/replay/replay.js');
  let n = 0;
  await expect(
    replay({
      inputs: [env.log],
      db: env.resumable,
      from: Date.parse(FROM) * 1000,
      snapshotEveryUs: 60_000_000,
      batchSize: 100,
      listener: {
        onTick: () => {
          if (++n === 200) throw new Error('stopped');
        },
      },
    }),
  ).rejects.toThrow(/stopped/);
  const Database = (await import('better-sqlite3')).default;
  const d = new Database(env.resumable);
  d.prepare(`UPDATE runs SET status = 'killed' WHERE status = 'running'`).run();
  d.close();
}

/** One run of a command, as observed. */
export interface Observation {
  code: number;
  /** stderr as printed (a refusal's message is looked for there). */
  err: string;
  /** Everything else observed, normalised. */
  seen: unknown;
}

/** Runs the CLI in-process; `onRunning` receives the stop of a command that runs on. */
export async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = await cliRunning(argv);
  if (r.stop) await r.stop();
  return { code: r.code, out: r.out(), err: r.err() };
}

export async function cliRunning(
  argv: string[],
): Promise<{ code: number; out: () => string; err: () => string; stop?: () => Promise<void>; done?: Promise<number> }> {
  let stop: (() => Promise<void>) | undefined;
  let running: () => void = () => undefined;
  const started = new Promise<void>((res) => {
    running = res;
  });
  const io = capturedIo({
    onRunning: (s) => {
      stop = s;
      running();
    },
  });
  const done = run(argv, io);
  const first = await Promise.race([done.then((c) => ({ c })), started.then(() => undefined)]);
  if (first) return { code: first.c, out: io.stdout, err: io.stderr };
  return { code: 0, out: io.stdout, err: io.stderr, stop: async () => stop?.(), done };
}

/** Paths of runs, ports, keys, timings: what changes from run to run by itself. */
export function normalise(s: string, dir: string): string {
  return s
    .split(dir)
    .join('<dir>')
    .replace(/run-\d+/g, 'run-N')
    .replace(/RUN\d+/g, 'RUN')
    .replace(/[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}/gi, '<key>')
    .replace(/(time taken|events\/s|peak memory \(RSS\)) .*\n/g, '')
    .replace(/"(durationMs|eventsPerSecond|peakRssMb|elapsedMs)": [\d.]+/g, '"$1": 0')
    .replace(/ in \d+\.\d s\n/g, ' in S s\n')
    .replace(/ +/g, ' ');
}

/** What a replay database or rate file holds (digests of the output tables, the run's options and config). */
function dump(path: string | undefined): unknown {
  if (path === undefined || !existsSync(path)) return 'none';
  if (!path.endsWith('.sqlite')) return readFileSync(path, 'utf8').length;
  return {
    tables: digestTables(path),
    runs: query(path, 'SELECT status, inputs, config, options, resumed FROM runs ORDER BY id'),
    snapshots: query<{ n: number }>(path, 'SELECT count(*) AS n FROM snapshots')[0]?.n,
  };
}

/** `xrate convert`: in-process; what it printed and the SHA-256 of the file it wrote. */
export async function convertObservation(env: Env, argv: string[]): Promise<Observation> {
  const r = await cli(...argv);
  const out = flagValue(argv, 'out');
  const file = out !== undefined && existsSync(out) ? createHash('sha256').update(readFileSync(out)).digest('hex') : 'none';
  return { code: r.code, err: r.err, seen: { out: normalise(r.out, env.dir), err: normalise(r.err, env.dir), file } };
}

/** `xrate replay`: in-process, or the built command for partitioned and queued runs (their partitions run in worker threads of dist/). */
export async function replayObservation(env: Env, argv: string[]): Promise<Observation> {
  const partitioned = argv.includes('--queue') || Number(flagValue(argv, 'workers') ?? 1) > 1;
  const before = new Map(env.workerErr);
  let r: { code: number; out: string; err: string };
  if (partitioned) {
    // Not spawnSync: the workers' stderr is read meanwhile.
    const p = spawn(process.execPath, [BIN, ...argv], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    p.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const code = await new Promise<number>((res) => p.once('close', (c) => res(c ?? -1)));
    r = { code, out, err };
    // A queued run's partitions were done (and said so) before it ended: their lines are read by now or soon.
    const grew = (): boolean => [...env.workerErr].some(([k, v]) => v.length > (before.get(k)?.length ?? 0));
    if (code === 0 && argv.includes('--queue')) for (let i = 0; i < 100 && !grew(); i++) await new Promise((res) => setTimeout(res, 20));
  } else r = await cli(...argv);
  const target = flagValue(argv, 'out') ?? flagValue(argv, 'db');
  const taken = [...env.workerErr].filter(([k, v]) => v.length > (before.get(k)?.length ?? 0)).map(([k]) => k);
  const queue = flagValue(argv, 'queue');
  const attempts =
    queue === env.redis.url ? await completedAttempts(queue, flagValue(argv, 'queue-name') ?? 'xrate-partitions') : undefined;
  return {
    code: r.code,
    err: r.err,
    seen: { out: normalise(r.out, env.dir), err: normalise(r.err, env.dir), db: dump(target), taken, attempts },
  };
}

/** The attempts allowed to the queue's completed jobs of the last run. */
async function completedAttempts(url: string, name: string): Promise<number[]> {
  const conn = new Redis(url, { maxRetriesPerRequest: null });
  const q = new Queue(name, { connection: conn });
  try {
    const jobs = await q.getCompleted(0, 0);
    return jobs.map((j) => j.opts.attempts ?? 0);
  } finally {
    await q.close();
    await conn.quit();
  }
}

/** What a probe of a running server answered, given its URL and an API key. */
export type Probe = (url: string, key: string) => Promise<unknown>;

/**
 * `xrate serve` or `xrate ems serve` in-process: the code, what it printed until it listened, the
 * answers of `probe`, and what it wrote into its --db once stopped (its run's config and
 * options; with `caughtUp`, a replica is waited for until it has applied its whole stream).
 */
export async function serveObservation(
  argv: string[],
  opts: { probe?: Probe; caughtUp?: boolean; dir?: string } = {},
): Promise<Observation> {
  const r = await cliRunning(argv);
  const url = /listening on (https?:\/\/\S+)/.exec(r.out())?.[1];
  let probed: unknown;
  let wrote: unknown;
  try {
    if (r.stop && url) {
      if (opts.caughtUp) await caughtUp(url);
      const key = /shown only now:\n(\S+)\n/.exec(r.out())?.[1] ?? currentKey;
      probed = opts.probe ? await opts.probe(url, key) : undefined;
    }
  } finally {
    await r.stop?.();
  }
  const db = flagValue(argv, 'db');
  if (db && existsSync(db) && r.stop) {
    wrote = query(db, 'SELECT config, options FROM runs ORDER BY id');
    if (opts.caughtUp) wrote = { runs: wrote, snapshots: query(db, 'SELECT count(*) AS n FROM snapshots') };
  }
  let out = r.out();
  if (argv.includes('--port') && flagValue(argv, 'port') === '0') out = out.replace(/(https?:\/\/[^:/\s]+):\d+/g, '$1:PORT');
  // A replica's first answer comes while it reads its stream: how far it got is its own.
  if (argv.includes('--nats')) out = out.replace(/, \d+ pairs, [^)]*\)/g, ', N pairs)');
  const d = opts.dir ?? '\u0000';
  return { code: r.code, err: r.err(), seen: { out: normalise(out, d), err: normalise(r.err(), d), probed, wrote } };
}

/** The key of the probes when the start made none (the one in the databases given). */
let currentKey = '';
export function useKey(key: string): void {
  currentKey = key;
}

/** Waits until a replica has applied its whole stream (GET /readyz: lag 0). */
async function caughtUp(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const r = await fetch(`${url}/readyz`);
    const body = (await r.json()) as { lag?: number; detail?: { lag?: number; applied_seq?: number; stream_seq?: number } };
    const d = body.detail ?? body;
    if (d.lag === 0 && (d as { applied_seq?: number }).applied_seq !== undefined && (d as { applied_seq?: number }).applied_seq! > 0)
      return;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`${url}: the replica did not catch up`);
}

/** `xrate publish`: the code, output and the stream's messages (count and digest of their subjects and sizes). */
export async function publishObservation(env: Env, argv: string[], follow: boolean): Promise<Observation> {
  await Promise.all(pending.splice(0));
  const r = await cliRunning(argv);
  const stream = flagValue(argv, 'stream') ?? 'XRATE';
  const url = flagValue(argv, 'nats') ?? '';
  if (r.stop) {
    // Following: stopped once the stream has stopped growing.
    let last = -1;
    for (let i = 0; i < 100; i++) {
      await new Promise((res) => setTimeout(res, 100));
      const n = url === env.nats.url ? await messages(url, stream) : 0;
      if (n === last && n > 0) break;
      last = n;
    }
    await r.stop();
    await r.done;
  }
  const span = url === env.nats.url ? await streamSpan(url, stream) : undefined;
  return {
    code: r.code,
    err: r.err(),
    seen: { out: normalise(r.out(), env.dir), err: normalise(r.err(), env.dir).replace(/sequence \d+/g, 'sequence N'), follow, span },
  };
}

export async function messages(url: string, stream: string): Promise<number> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    return (await jsm.streams.info(stream)).state.messages;
  } catch {
    return 0;
  } finally {
    await nc.close();
  }
}

/** The stream's messages, and whether they took 3 s or more to arrive (a paced run of 40 records at 10 a second). */
async function streamSpan(url: string, stream: string): Promise<unknown> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const s = (await jsm.streams.info(stream)).state;
    const first = await jsm.streams.getMessage(stream, { seq: s.first_seq });
    const last = await jsm.streams.getMessage(stream, { seq: s.last_seq });
    const subjects = [];
    let sizes = 0;
    for (let q = s.first_seq; q <= s.last_seq; q++) {
      const m = await jsm.streams.getMessage(stream, { seq: q });
      if (!m) continue;
      subjects.push(m.subject);
      sizes += m.data.length;
    }
    return {
      messages: s.messages,
      subjects: subjects.join(','),
      bytes: sizes,
      slow: !!first && !!last && last.time.getTime() - first.time.getTime() >= 3000,
    };
  } catch (e) {
    return String(e);
  } finally {
    await nc.close();
  }
}

/** A stream of its own holding the records of `log` published by a follow run stopped at its end (no end-of-run message). */
export function prefilledStream(env: Env, log: string): () => string {
  return () => {
    const name = freshStream();
    pending.push(
      (async () => {
        const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
        const p = await publish({ inputs: [log], nats: env.nats.url, stream: name, follow: true });
        for (let i = 0; i < 200 && (await messages(env.nats.url, name)) < lines; i++) await new Promise((res) => setTimeout(res, 50));
        p.stop();
        await p.done;
      })(),
    );
    return name;
  };
}

/** Streams being filled (awaited before the run that uses them). */
export const pending: Promise<void>[] = [];
