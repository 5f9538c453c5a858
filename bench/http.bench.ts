/**
 * `http/rate`: throughput and latency of `GET /v1/exchangerate/BTC/USD` with header auth
 * (`X-CoinAPI-Key`), measured by autocannon with 100 connections for ~10 s (after a 2 s warm-up)
 * against `xrate serve` running in a child process on 127.0.0.1, port 0, over the bundled demo
 * database (replayed into a temporary directory first).
 *
 * Result (units as in bench/run.ts): `median` = requests/s of the median one-second sample,
 * `p99` = the slow tail (the 1st percentile of the one-second samples, i.e. 99% of seconds were at
 * least this fast), `samples` = one-second samples, `p99LatencyMs` = 99th-percentile latency.
 * Target: median >= 15,000 req/s and p99LatencyMs <= 10.
 *
 * Run alone: `npx tsx bench/http.bench.ts`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { replay } from '../src/replay/replay.js';
import { KeyStore } from '../src/service/keys.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEMO_LOG = join(ROOT, 'fixtures', 'demo', 'demo.ndjson.gz');

/** One result of {@link runHttpBench}. */
export interface HttpBenchResult {
  name: 'http/rate';
  unit: 'req/s';
  median: number;
  p99: number;
  samples: number;
  p99LatencyMs: number;
  [extra: string]: unknown;
}

interface AutocannonResult {
  requests: Record<string, number>;
  latency: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;

/** Starts `xrate serve` in a child process (through tsx) and resolves with its URL. */
function startServer(db: string, keys: string): Promise<{ child: ChildProcess; url: string }> {
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

/**
 * Runs the `http/rate` benchmark (see the module description).
 *
 * @param opts.durationSeconds - measured seconds (default 10)
 */
export async function runHttpBench(opts: { durationSeconds?: number; connections?: number } = {}): Promise<HttpBenchResult[]> {
  const autocannon = ((await import('autocannon')) as { default: Autocannon }).default;
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
    const url = `${server.url}/v1/exchangerate/BTC/USD`;
    const base = { url, connections: opts.connections ?? 100, headers: { 'X-CoinAPI-Key': key } };
    await autocannon({ ...base, duration: 2 });
    const r = await autocannon({ ...base, duration: opts.durationSeconds ?? 10 });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`http bench: ${r.non2xx} non-2xx responses, ${r.errors} errors`);
    return [
      {
        name: 'http/rate',
        unit: 'req/s',
        median: r.requests.p50,
        p99: r.requests.p1,
        samples: r.duration !== undefined ? Math.round(r.duration) : (opts.durationSeconds ?? 10),
        p99LatencyMs: r.latency.p99,
        averageReqPerSec: r.requests.average,
        totalRequests: r.requests.total,
        medianLatencyMs: r.latency.p50,
        connections: base.connections,
      },
    ];
  } finally {
    if (server) {
      const child = server.child;
      await new Promise<void>((res) => {
        child.once('exit', () => res());
        child.kill('SIGTERM');
        setTimeout(() => {
          child.kill('SIGKILL');
          res();
        }, 5000).unref();
      });
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runHttpBench().then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (e: Error) => {
      console.error(e.message);
      process.exitCode = 1;
    },
  );
}
