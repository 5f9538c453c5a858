/**
 * The rate service under load, `xrate serve` running in a child process on 127.0.0.1, port 0,
 * measured by autocannon:
 *
 * - `http/rate` ({@link runHttpBench}): throughput and latency of `GET /v1/exchangerate/BTC/USD`
 *   with header auth (`X-CoinAPI-Key`), 100 connections for ~10 s (after a 2 s warm-up), over the
 *   bundled demo database (replayed into a temporary directory first). Target: median >= 15,000
 *   req/s and p99LatencyMs <= 10.
 * - `http/history-contention` ({@link runHistoryContentionBench}): the same light requests
 *   (10 connections) while four connections loop `GET .../BTC/USD/history?period_id=1SEC&limit=100000`
 *   (two keys, two each: the default cap on heavy requests per key), over a generated 31-hour log
 *   (about 107,000 one-second buckets of BTC/USD, so every history answer has 100,000 items, 31 MB
 *   of JSON). The figures are the light requests'. Target: p99LatencyMs < 20.
 *
 * - `http/rate-replicas` ({@link runHttpReplicasBench}): the requests of `http/rate` through two
 *   replicas as docs/deploy.md runs them: the demo log published on a JetStream stream of a
 *   `nats-server` started for the bench (`xrate publish`), two `xrate serve --nats … --redis …`
 *   processes of the built CLI that read it (each its own database; measured once both have
 *   applied the whole stream), keys and limits in a `redis-server` started for the bench (every
 *   request: an admission script, a charge script and a release, docs/service.md); one autocannon
 *   run, its 100 connections split over both replicas.
 *
 * Result (units as in bench/run.ts): `median` = requests/s of the median one-second sample,
 * `p99` = the slow tail (the 1st percentile of the one-second samples, i.e. 99% of seconds were at
 * least this fast), `samples` = one-second samples, `p99LatencyMs` = 99th-percentile latency;
 * `http/rate` and `http/rate-replicas` also give `cpuUsPerRequest`, the CPU time (user + system,
 * from /proc) of each server process and of Redis per request during the measure: what a request
 * costs, which a machine shared with other work does not change as much as the throughput.
 *
 * Run alone: `npx tsx bench/http.bench.ts [rate] [history-contention] [rate-replicas]` (all by default).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeLog } from '../scripts/gen-log.js';
import { replay } from '../src/replay/replay.js';
import { KeyStore } from '../src/http/keys.js';
import { RedisKeyStore } from '../src/http/redisKeys.js';
import { binStartAt, type BinProcess } from '../test/helpers/process.js';
import { startNats } from '../test/helpers/nats.js';
import { startRedis } from '../test/helpers/redis.js';
import { applied } from './feed.js';
import { ensureCliBuilt } from './replay-db.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEMO_LOG = join(ROOT, 'fixtures', 'demo', 'demo.ndjson.gz');

/** One result of {@link runHttpBench}. */
export interface HttpBenchResult {
  name: 'http/rate' | 'http/history-contention' | 'http/rate-replicas' | 'http/heavy-contention';
  unit: 'req/s';
  median: number;
  p99: number;
  samples: number;
  p99LatencyMs: number;
  [extra: string]: unknown;
}

export interface AutocannonResult {
  requests: Record<string, number>;
  latency: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;

export async function loadAutocannon(): Promise<Autocannon> {
  return ((await import('autocannon')) as { default: Autocannon }).default;
}

/** Stops the server child (SIGTERM, then SIGKILL after 5 s). */
export function stopServer(child: ChildProcess): Promise<void> {
  return new Promise<void>((res) => {
    child.once('exit', () => res());
    child.kill('SIGTERM');
    setTimeout(() => {
      child.kill('SIGKILL');
      res();
    }, 5000).unref();
  });
}

/** Starts `xrate serve` in a child process (through tsx) and resolves with its URL. */
export function startServer(db: string, keys: string): Promise<{ child: ChildProcess; url: string }> {
  const main = pathToFileURL(join(ROOT, 'src', 'cli', 'main.ts')).href;
  const args = ['serve', '--db', db, '--keys', keys, '--host', '127.0.0.1', '--port', '0'];
  const code = `const { run } = await import(${JSON.stringify(main)}); process.exitCode = await run(${JSON.stringify(args)});`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((res, rej) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => rej(new Error(`http bench: the server did not start in 60 s\n${out}${err}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res({ child, url: m[1] });
      }
    });
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('exit', (c) => {
      clearTimeout(timer);
      rej(new Error(`http bench: the server exited (${c})\n${out}${err}`));
    });
  });
}

/** CPU time (user + system) of process `pid` so far, µs, from /proc (undefined elsewhere). */
function cpuMicros(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Clock ticks per second of /proc's CPU times. */
const CLOCK_TICKS = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  return Number(r.stdout?.trim()) || 100;
})();

/**
 * `GET /v1/exchangerate/BTC/USD` with `key` in `X-CoinAPI-Key` from autocannon (its connections
 * spread over the `servers` in turn), a 2 s warm-up then the measure; fails on any non-2xx answer.
 * The CPU time the processes `cpu` (name → pid) took during the measure is reported per request,
 * µs (`cpuUsPerRequest`): on a machine shared with other work, what a request costs.
 */
async function rateLoad(
  autocannon: Autocannon,
  name: HttpBenchResult['name'],
  servers: string[],
  key: string,
  opts: { durationSeconds?: number; connections?: number },
  cpu: Record<string, number>,
): Promise<HttpBenchResult> {
  const url = servers.map((s) => `${s}/v1/exchangerate/BTC/USD`);
  const base = { url: url.length === 1 ? url[0] : url, connections: opts.connections ?? 100, headers: { 'X-CoinAPI-Key': key } };
  await autocannon({ ...base, duration: 2 });
  const before = Object.fromEntries(Object.entries(cpu).map(([n, pid]) => [n, cpuMicros(pid)]));
  const r = await autocannon({ ...base, duration: opts.durationSeconds ?? 10 });
  const cpuUsPerRequest: Record<string, number> = {};
  for (const [n, pid] of Object.entries(cpu)) {
    const [a, b] = [before[n], cpuMicros(pid)];
    if (a !== undefined && b !== undefined) cpuUsPerRequest[n] = Math.round(((b - a) / r.requests.total) * 10) / 10;
  }
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`http bench: ${r.non2xx} non-2xx responses, ${r.errors} errors`);
  return {
    name,
    unit: 'req/s',
    median: r.requests.p50,
    p99: r.requests.p1,
    samples: r.duration !== undefined ? Math.round(r.duration) : (opts.durationSeconds ?? 10),
    p99LatencyMs: r.latency.p99,
    averageReqPerSec: r.requests.average,
    totalRequests: r.requests.total,
    medianLatencyMs: r.latency.p50,
    connections: base.connections,
    ...(servers.length > 1 ? { replicas: servers.length } : {}),
    cpuUsPerRequest,
  };
}

/**
 * Runs the `http/rate` benchmark (see the module description).
 *
 * @param opts.durationSeconds - measured seconds (default 10)
 */
export async function runHttpBench(opts: { durationSeconds?: number; connections?: number } = {}): Promise<HttpBenchResult[]> {
  const autocannon = await loadAutocannon();
  const dir = mkdtempSync(join(tmpdir(), 'xrate-http-bench-'));
  let server: { child: ChildProcess; url: string } | undefined;
  try {
    mkdirSync(dir, { recursive: true });
    const db = join(dir, 'demo.sqlite');
    const keysPath = join(dir, 'keys.sqlite');
    if (!existsSync(DEMO_LOG)) throw new Error(`http bench: missing ${DEMO_LOG}`);
    await replay({ inputs: [DEMO_LOG], db });
    const keys = KeyStore.open(keysPath);
    const { key } = keys.create({ name: 'bench', limit: 1e12, concurrency: 100_000 });
    keys.close();
    server = await startServer(db, keysPath);
    return [await rateLoad(autocannon, 'http/rate', [server.url], key, opts, { server: server.child.pid! })];
  } finally {
    if (server) await stopServer(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts `node bin/xrate.js serve ...args` and resolves with its URL once it listens. */
async function startBin(args: string[]): Promise<{ p: BinProcess; url: string }> {
  const p = binStartAt(join(ROOT, 'bin', 'xrate.js'), ROOT, ['serve', ...args]);
  const end = Date.now() + 60_000;
  for (;;) {
    const m = /listening on (http:\/\/\S+)/.exec(p.out());
    if (m) return { p, url: m[1] };
    if (p.proc.exitCode !== null || Date.now() > end) throw new Error(`http bench: xrate serve did not start\n${p.out()}${p.err()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Runs the `http/rate-replicas` benchmark (see the module description).
 *
 * @param opts.durationSeconds - measured seconds (default 10)
 * @param opts.replicas - `xrate serve --redis` processes (default 2)
 */
export async function runHttpReplicasBench(
  opts: { durationSeconds?: number; connections?: number; replicas?: number } = {},
): Promise<HttpBenchResult[]> {
  ensureCliBuilt();
  const autocannon = await loadAutocannon();
  const dir = mkdtempSync(join(tmpdir(), 'xrate-http-bench-'));
  const redis = await startRedis();
  const nats = await startNats();
  const servers: BinProcess[] = [];
  try {
    const pub = spawnSync(process.execPath, [join(ROOT, 'bin', 'xrate.js'), 'publish', DEMO_LOG, '--nats', nats.url, '--quiet'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    if (pub.status !== 0) throw new Error(`http bench: xrate publish failed: ${pub.stderr}`);
    const last = Number(/last sequence (\d+)/.exec(pub.stdout)?.[1]);
    const keys = await RedisKeyStore.open(redis.url);
    const { key } = (await keys.create({ name: 'bench', limit: 1e12, concurrency: 100_000 }))!;
    await keys.close();
    const replicas = [];
    const cpu: Record<string, number> = { redis: redis.pid };
    for (let i = 0; i < (opts.replicas ?? 2); i++) {
      const db = join(dir, `replica-${i + 1}.sqlite`);
      const r = await startBin(['--nats', nats.url, '--db', db, '--redis', redis.url, '--host', '127.0.0.1', '--port', '0']);
      servers.push(r.p);
      replicas.push(r.url);
      cpu[`replica${i + 1}`] = r.p.proc.pid!;
    }
    // Measured once every replica has applied the whole stream.
    for (const url of replicas) await applied(url, last, 100);
    // autocannon spreads its connections over the URLs in turn: half on each replica.
    return [await rateLoad(autocannon, 'http/rate-replicas', replicas, key, opts, cpu)];
  } finally {
    for (const p of servers) p.proc.kill('SIGTERM');
    await Promise.all(servers.map((p) => p.exited));
    await redis.stop();
    await nats.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Two autocannon connections per key looping GET `url` for `seconds`, in a child process. */
function heavyLoad(
  url: string,
  keys: string[],
  seconds: number,
): Promise<{ total: number; non2xx: number; errors: number; timeouts: number }[]> {
  return loops(
    keys.map((key) => ({ url, key, connections: 2 })),
    seconds,
  );
}

/**
 * Autocannon loops of GET requests for `seconds`, each with its URL, key and connections, in a child
 * process (so that reading long answers does not delay the measuring process's clock); what each
 * counted.
 */
export function loops(
  targets: { url: string; key: string; connections: number }[],
  seconds: number,
): Promise<{ total: number; non2xx: number; errors: number; timeouts: number }[]> {
  const lib = pathToFileURL(createRequire(import.meta.url).resolve('autocannon')).href;
  const code = `
    const { default: autocannon } = await import(${JSON.stringify(lib)});
    const runs = ${JSON.stringify(targets)}.map((t) =>
      autocannon({ url: t.url, connections: t.connections, duration: ${seconds}, timeout: 60, headers: { 'X-CoinAPI-Key': t.key } }));
    const rs = await Promise.all(runs);
    console.log(JSON.stringify(rs.map((r) => ({ total: r.requests.total, non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts }))));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((res, rej) =>
    child.on('exit', (c) =>
      c === 0 ? res(JSON.parse(out.trim().split('\n').pop()!)) : rej(new Error(`http bench: the heavy load exited (${c})`)),
    ),
  );
}

/** The log of `http/history-contention`: 400,000 events over 31 hours, four exchanges, four assets. */
const CONTENTION_LOG = { seed: 3, events: 400_000, rate: 400_000 / (31 * 3600), exchanges: 4, assets: 4, start: '2024-03-01T00:00:00Z' };

/**
 * Runs the `http/history-contention` benchmark (see the module description).
 *
 * @param opts.dir - where to keep the generated log between runs (default: a temporary directory,
 *   removed afterwards); it is replayed into a new database each run
 * @param opts.durationSeconds - measured seconds of light requests (default 10)
 * @param opts.connections - light connections (default 10)
 */
export async function runHistoryContentionBench(
  opts: { dir?: string; durationSeconds?: number; connections?: number } = {},
): Promise<HttpBenchResult[]> {
  const autocannon = await loadAutocannon();
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'xrate-http-bench-'));
  const work = mkdtempSync(join(tmpdir(), 'xrate-http-contention-'));
  let server: { child: ChildProcess; url: string } | undefined;
  try {
    mkdirSync(dir, { recursive: true });
    const log = join(dir, 'contention-31h-seed3.ndjson');
    if (!existsSync(log)) await writeLog(log, CONTENTION_LOG);
    const db = join(work, 'contention.sqlite');
    await replay({ inputs: [log], db });
    const keysPath = join(work, 'keys.sqlite');
    const keys = KeyStore.open(keysPath);
    const make = (name: string): string => keys.create({ name, limit: 1e12, concurrency: 100_000 }).key;
    const light = make('light');
    const heavyKeys = [make('heavy-a'), make('heavy-b')];
    keys.close();
    server = await startServer(db, keysPath);
    const seconds = opts.durationSeconds ?? 10;
    const heavyUrl = `${server.url}/v1/exchangerate/BTC/USD/history?period_id=1SEC&time_start=2024-03-01T00:00:00Z&time_end=2100-01-01T00:00:00Z&limit=100000`;
    // Two connections per key (the default cap), looping for the whole run (warm-up, measure,
    // margin), in a process of their own so that reading 31 MB answers does not delay this one's clock.
    const heavy = heavyLoad(heavyUrl, heavyKeys, seconds + 6);
    const base = { url: `${server.url}/v1/exchangerate/BTC/USD`, connections: opts.connections ?? 10, headers: { 'X-CoinAPI-Key': light } };
    await autocannon({ ...base, duration: 2 });
    const r = await autocannon({ ...base, duration: seconds });
    const h = await heavy;
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`http bench: ${r.non2xx} non-2xx light responses, ${r.errors} errors`);
    const heavyNon2xx = h.reduce((a, x) => a + x.non2xx, 0);
    if (heavyNon2xx > 0) throw new Error(`http bench: ${heavyNon2xx} non-2xx history responses`);
    return [
      {
        name: 'http/history-contention',
        unit: 'req/s',
        median: r.requests.p50,
        p99: r.requests.p1,
        samples: r.duration !== undefined ? Math.round(r.duration) : seconds,
        p99LatencyMs: r.latency.p99,
        averageReqPerSec: r.requests.average,
        totalRequests: r.requests.total,
        medianLatencyMs: r.latency.p50,
        maxLatencyMs: r.latency.max,
        connections: base.connections,
        heavyConnections: 4,
        heavyAnswers: h.reduce((a, x) => a + x.total, 0),
        heavyErrors: h.reduce((a, x) => a + x.errors + x.timeouts, 0),
      },
    ];
  } finally {
    if (server) await stopServer(server.child);
    rmSync(work, { recursive: true, force: true });
    if (!opts.dir) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const which = process.argv.slice(2);
  const all = which.length === 0;
  (async () => {
    const out: HttpBenchResult[] = [];
    if (all || which.includes('rate')) out.push(...(await runHttpBench()));
    if (all || which.includes('history-contention')) out.push(...(await runHistoryContentionBench()));
    if (all || which.includes('rate-replicas')) out.push(...(await runHttpReplicasBench()));
    return out;
  })().then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (e: Error) => {
      console.error(e.message);
      process.exitCode = 1;
    },
  );
}
