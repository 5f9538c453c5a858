/**
 * `http/heavy-contention`: light requests while heavy ones run, over the demo database replayed
 * with xrate's own metrics, `xrate serve` in a child process. Five connections loop the light
 * `GET /v1/exchangerate/BTC/USD`, alone first and then while eight connections loop the heaviest
 * answers: the chart of ETH/BTC over 54 minutes at 5MIN (four connections, two keys: the per-key
 * cap), the 1SEC history of BTC/USD with `limit=100000` (two connections) and the group of
 * `XRATE_MARKET_WEIGHT_SHARE` by symbol with `limit=100000` (two connections). The figures are the
 * light requests' under load (`p99LatencyMs`, target <= 20 ms), with their p99 latency alone in the
 * same run (`aloneP99LatencyMs`) and the heavy answers completed.
 *
 * Run alone: `npx tsx bench/heavy.bench.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { replay } from '../src/replay/replay.js';
import { KeyStore } from '../src/http/keys.js';
import { type HttpBenchResult, loadAutocannon, loops, startServer, stopServer } from './http.bench.js';

const DEMO_LOG = resolve(fileURLToPath(import.meta.url), '..', '..', 'fixtures', 'demo', 'demo.ndjson.gz');

/** The heavy requests of the bench: path and connections. */
const HEAVY: [string, number][] = [
  ['/v1/exchangerate/ETH/BTC/chart?time_start=2024-03-01T05:00:00Z&time_end=2024-03-01T05:54:00Z&period_id=5MIN', 2],
  ['/v1/exchangerate/ETH/BTC/chart?time_start=2024-03-01T05:00:00Z&time_end=2024-03-01T05:54:00Z&period_id=5MIN', 2],
  ['/v1/exchangerate/BTC/USD/history?period_id=1SEC&time_start=2024-03-01T02:30:00Z&time_end=2024-03-01T06:00:00Z&limit=100000', 2],
  ['/v1/metrics/group?metric_id=XRATE_MARKET_WEIGHT_SHARE&exchange_id=BINANCE&groupby=symbol_id&period_id=1SEC&limit=100000', 2],
];

/**
 * Runs `http/heavy-contention` (see the module description).
 *
 * @param opts.durationSeconds - measured seconds of light requests, alone and under load (default 10)
 */
export async function runHeavyContentionBench(opts: { durationSeconds?: number } = {}): Promise<HttpBenchResult[]> {
  const autocannon = await loadAutocannon();
  const work = mkdtempSync(join(tmpdir(), 'xrate-heavy-contention-'));
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const db = join(work, 'demo.sqlite');
    await replay({ inputs: [DEMO_LOG], db, ownMetrics: true });
    const keysPath = join(work, 'keys.sqlite');
    const keys = KeyStore.open(keysPath);
    const make = (name: string): string => keys.create({ name, limit: 1e12, concurrency: 100_000 }).key;
    const light = make('light');
    const heavyKeys = HEAVY.map((_, i) => make(`heavy-${i}`));
    keys.close();
    server = await startServer(db, keysPath);
    const seconds = opts.durationSeconds ?? 10;
    const base = { url: `${server.url}/v1/exchangerate/BTC/USD`, connections: 5, headers: { 'X-CoinAPI-Key': light } };
    await autocannon({ ...base, duration: 2 });
    const alone = await autocannon({ ...base, duration: seconds });
    const heavy = loops(
      HEAVY.map(([path, connections], i) => ({ url: server!.url + path, key: heavyKeys[i], connections })),
      seconds + 8,
    );
    // The heavy loops first fill the server (a chart takes seconds), then the light ones are measured.
    await new Promise((r) => setTimeout(r, 4000));
    const r = await autocannon({ ...base, duration: seconds });
    const h = await heavy;
    if (r.non2xx > 0 || r.errors > 0 || alone.non2xx > 0)
      throw new Error(`http bench: ${r.non2xx + alone.non2xx} non-2xx light responses, ${r.errors} errors`);
    const answered = h.reduce((a, x) => a + x.total - x.non2xx - x.errors, 0);
    return [
      {
        name: 'http/heavy-contention',
        unit: 'req/s',
        median: r.requests.p50,
        p99: r.requests.p1,
        samples: r.duration !== undefined ? Math.round(r.duration) : seconds,
        p99LatencyMs: r.latency.p99,
        medianLatencyMs: r.latency.p50,
        maxLatencyMs: r.latency.max,
        aloneP99LatencyMs: alone.latency.p99,
        aloneMedianReqPerSec: alone.requests.p50,
        p99LatencyRatioToAlone: alone.latency.p99 > 0 ? r.latency.p99 / alone.latency.p99 : null,
        connections: base.connections,
        heavyConnections: HEAVY.reduce((a, [, c]) => a + c, 0),
        heavyAnswers: answered,
        heavyRefused: h.reduce((a, x) => a + x.non2xx, 0),
        heavyErrors: h.reduce((a, x) => a + x.errors + x.timeouts, 0),
      },
    ];
  } finally {
    if (server) await stopServer(server.child);
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runHeavyContentionBench().then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (e: Error) => {
      console.error(e.message);
      process.exitCode = 1;
    },
  );
}
