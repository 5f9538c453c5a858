/**
 * Service replicas on a real NATS JetStream stream (docs/deploy.md): `xrate publish` puts a log on
 * a stream, `xrate serve --nats` replicas read it in sequence order in event time. Two replicas
 * answer byte for byte as each other and as `xrate serve` over `xrate replay` of the same log
 * (history and `time=` included) and write the same outputs; a replica killed with SIGKILL
 * mid-stream comes back from its snapshot and agrees; a new replica starts from a copy of another's
 * database; SIGTERM finishes a request in flight and saves a snapshot; `/readyz` follows the lag and
 * NATS; `/metrics` speaks Prometheus.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { startService, type RunningService } from '../../src/app/serve.js';
import { startNats, type NatsServer } from '../helpers/nats.js';
import { startRedis } from '../helpers/redis.js';
import { type BinProcess, bin, binStart, cli, ensureBuilt, expectSameOutputs, ROOT } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-replicas-'));
const LOG = join(dir, 'log.ndjson');
const SERIAL = join(dir, 'serial.sqlite');
/** Short windows, so that a log of 3.5 hours has rates from its first half hour on. */
const CONFIG = join(dir, 'config.json');
const STREAM = 'RATES';
/** The output tables a replica writes as a replay does (its open OHLC buckets are served from its engine, not flushed). */
const TABLES = ['rates', 'series', 'rejects', 'metric_points', 'metric_definitions'];

let nats: NatsServer;
let reference: RunningService;
let lastSeq = 0;
const started: BinProcess[] = [];

/** A replica process on the test stream, with its URL and development key once it listens. */
interface ReplicaProc {
  p: BinProcess;
  url: string;
  key: string;
}

/** Starts a replica writing `db`; `key`: the key of an earlier replica on that database (else the development key it creates). */
async function replica(db: string, extra: string[] = [], key?: string): Promise<ReplicaProc> {
  const p = binStart([
    'serve',
    '--nats',
    nats.url,
    '--stream',
    STREAM,
    '--db',
    db,
    '--config',
    CONFIG,
    '--port',
    '0',
    ...(extra.includes('--redis') ? [] : ['--keys', `${db}.keys`]),
    ...extra,
  ]);
  started.push(p);
  await p.waitErr(/"msg":"listening"/);
  // The key (or the keys line) is printed on stdout just after.
  for (let i = 0; i < 100 && !/try: curl|^keys: /m.test(p.out()); i++) await new Promise((f) => setTimeout(f, 50));
  const out = p.out();
  const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
  const k = key ?? /^([0-9A-F]{8}-[0-9A-F-]{27})$/m.exec(out)?.[1];
  if (!url || !k) throw new Error(`no URL or key in:\n${out}`);
  return { p, url, key: k };
}

async function json(url: string, key?: string): Promise<{ status: number; body: string }> {
  const r = await fetch(url, { headers: key ? { 'X-CoinAPI-Key': key } : {} });
  return { status: r.status, body: await r.text() };
}

/** Waits until the replica's /readyz says it applied `seq`. */
async function caughtUp(r: ReplicaProc, seq: number, timeoutMs = 90_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < until) {
    const res = await json(`${r.url}/readyz`);
    last = res.body;
    const body = JSON.parse(res.body) as Record<string, unknown>;
    if (body.applied_seq === seq && res.status === 200) return body;
    await new Promise((f) => setTimeout(f, 100));
  }
  throw new Error(`the replica did not reach sequence ${seq}: ${last}`);
}

/** Requests whose answers every replica must give byte for byte as the reference. */
const QUERIES = [
  '/v1/exchangerate/BTC/USD',
  '/v1/exchangerate/ETH/BTC',
  '/v1/exchangerate/USD?invert=true',
  '/v1/exchangerate/BTC/USD?time=2024-03-01T01:00:00Z',
  '/v1/exchangerate/SOL/EUR?time=2024-03-01T02:30:30.5Z',
  '/v1/exchangerate/BTC?time=2024-03-01T03:00:00Z',
  '/v1/exchangerate/BTC/USD/history?period_id=1MIN&time_start=2024-03-01T00:00:00Z&time_end=2100-01-01T00:00:00Z&limit=100000',
  '/v1/exchangerate/BTC/USD/history?period_id=10SEC&time_start=2024-03-01T02:00:00Z&time_end=2100-01-01T00:00:00Z&limit=1000',
  '/v1/exchangerate/ETH/USD/history?period_id=1HRS&time_start=2024-03-01T00:00:00Z&time_end=2100-01-01T00:00:00Z',
  '/v1/exchangerate/USD/ETH/history?period_id=5MIN&time_start=2024-03-01T01:00:00Z&time_end=2100-01-01T00:00:00Z&output_format=csv',
  '/v1/exchangerate/SOL/BTC/explain',
  // After the last tick (the log ends at 03:31:22): the engine advanced with no more events.
  '/v1/exchangerate/BTC/USD?time=2024-03-01T03:50:00Z',
  '/v1/exchangerate/ETH?time=2024-03-01T03:45:10Z',
  '/v1/exchangerate/SOL/BTC/explain?time=2024-03-01T03:40:00Z',
  '/v1/exchangerate/BTC/USD?time=2024-03-02T00:00:00Z',
  '/v1/symbols/KRAKEN?time=2024-03-01T04:00:00Z',
  '/v1/symbols',
  '/v1/metrics/listing',
];

async function answers(base: string, key: string): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUERIES) {
    const r = await json(`${base}${q}`, key);
    out.push(`${r.status} ${r.body}`);
  }
  return out;
}

let want: string[];

beforeAll(async () => {
  ensureBuilt();
  nats = await startNats();
  writeFileSync(CONFIG, JSON.stringify({ maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 }));
  await writeLog(LOG, { seed: 13, events: 24_000, rate: 2, badRate: 0.01, lateRate: 0.01 });
  const r = await cli('replay', LOG, '--db', SERIAL, '--config', CONFIG);
  expect(r.code, r.err).toBe(0);
  reference = await startService({ db: SERIAL, keys: join(dir, 'ref.keys'), port: 0 }, { out: () => {}, err: () => {} });
  want = await answers(reference.url, reference.devKey!);
  // Every query has an answer but the one a day after the end, when every rate has expired.
  const late = QUERIES.indexOf('/v1/exchangerate/BTC/USD?time=2024-03-02T00:00:00Z');
  expect(want.map((a, i) => (i === late ? a.startsWith('550 ') : a.startsWith('200 ')))).toEqual(QUERIES.map(() => true));
  const pub = bin(['publish', LOG, '--nats', nats.url, '--stream', STREAM, '--quiet'], { timeout: 120_000 });
  expect(pub.status, pub.stderr).toBe(0);
  lastSeq = Number(/last sequence (\d+)/.exec(pub.stdout)?.[1]);
  // Every line of the log, bad and late ones included, plus the end-of-run message.
  expect(lastSeq).toBe(24_001);
}, 180_000);

afterAll(async () => {
  for (const p of started) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
  await reference?.close();
  await nats?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('replicas of one stream', () => {
  let a: ReplicaProc;
  let b: ReplicaProc;

  it('answer byte for byte as each other and as a replay of the same log', async () => {
    [a, b] = await Promise.all([replica(join(dir, 'a.sqlite')), replica(join(dir, 'b.sqlite'))]);
    const [ra, rb] = await Promise.all([caughtUp(a, lastSeq), caughtUp(b, lastSeq)]);
    expect(ra).toEqual({ status: 'ready', stream: STREAM, applied_seq: lastSeq, stream_seq: lastSeq, lag: 0 });
    expect(rb.lag).toBe(0);
    expect(await answers(a.url, a.key)).toEqual(want);
    expect(await answers(b.url, b.key)).toEqual(want);
    // A chart replays logs, which a replica does not have.
    const chart = await json(`${a.url}/v1/exchangerate/BTC/USD/chart`, a.key);
    expect(chart.status).toBe(550);
    expect(JSON.parse(chart.body).message).toMatch(/a replica reads a stream, not logs: chart the published logs with "xrate plot LOG"/);
  }, 120_000);

  it('write the outputs of the replay, row for row, rejects included', () => {
    const rows = expectSameOutputs(join(dir, 'a.sqlite'), SERIAL, TABLES);
    expect(rows.rates).toBeGreaterThan(1000);
    expect(rows.rejects).toBeGreaterThan(100);
    expectSameOutputs(join(dir, 'b.sqlite'), SERIAL, TABLES);
  });

  it('export Prometheus metrics: requests by route and status, latency, events, ticks, lag', async () => {
    const m = (await json(`${a.url}/metrics`)).body;
    expect(m).toMatch(/^xrate_http_requests_total\{route="\/v1\/exchangerate\/:asset_id_base\/:asset_id_quote",status="200"\} \d+$/m);
    expect(m).toMatch(
      /^xrate_http_request_duration_seconds_bucket\{le="0.005",route="\/v1\/exchangerate\/:asset_id_base\/:asset_id_quote"\} \d+$/m,
    );
    expect(m).toMatch(/^xrate_stream_lag_messages 0$/m);
    const applied = Number(/^xrate_events_applied_total (\d+)$/m.exec(m)?.[1]);
    const rejected = Number(/^xrate_events_rejected_total (\d+)$/m.exec(m)?.[1]);
    expect(applied + rejected).toBe(24_000);
    expect(Number(/^xrate_ticks_total (\d+)$/m.exec(m)?.[1])).toBeGreaterThan(3600);
    expect(Number(/^xrate_tick_duration_seconds_count (\d+)$/m.exec(m)?.[1])).toBeGreaterThan(1000);
    // No key and no asset id becomes a label.
    expect(m).not.toContain(a.key);
    expect(m).not.toMatch(/route="\/v1\/exchangerate\/BTC/);
  });

  it('on SIGTERM: finish the request in flight, save a snapshot, exit 0; a new replica starts from a copy of that database', async () => {
    const res = await fetch(
      `${b.url}/v1/exchangerate/BTC/USD/history?period_id=1SEC&time_start=2024-03-01T00:00:00Z&time_end=2100-01-01T00:00:00Z&limit=100000`,
      {
        headers: { 'X-CoinAPI-Key': b.key },
      },
    );
    expect(res.status).toBe(200);
    // The headers are in; the long body is still being written a slice at a time.
    b.p.proc.kill('SIGTERM');
    const items = JSON.parse(await res.text()) as unknown[];
    expect(items.length).toBeGreaterThan(5000);
    expect(await b.p.exited).toBe(0);
    expect(b.p.err()).toMatch(new RegExp(`replica stopped at stream sequence ${lastSeq} \\(snapshot saved\\)`));

    // Stopped cleanly, the database is one file (its WAL checkpointed into it).
    expect(existsSync(join(dir, 'b.sqlite-wal'))).toBe(false);
    copyFileSync(join(dir, 'b.sqlite'), join(dir, 'd.sqlite'));
    const d = await replica(join(dir, 'd.sqlite'));
    expect(d.p.err()).toContain(`resuming the replica from its snapshot at stream sequence ${lastSeq}`);
    await caughtUp(d, lastSeq);
    expect(await answers(d.url, d.key)).toEqual(want);

    // From a running replica's database, copied while it runs.
    const e = await replica(join(dir, 'e-from-a.sqlite'), ['--snapshot-from', join(dir, 'a.sqlite')]);
    expect(e.p.err()).toMatch(/resuming the replica from its snapshot at stream sequence [1-9]\d*/);
    await caughtUp(e, lastSeq);
    expect(await answers(e.url, e.key)).toEqual(want);
    expectSameOutputs(join(dir, 'e-from-a.sqlite'), SERIAL, TABLES);
  }, 120_000);
});

describe('a replica with its keys and limits in Redis', () => {
  it('answers as the others with a key made by xrate keys --redis', async () => {
    const redis = await startRedis();
    try {
      const k = await cli('keys', 'create', '--redis', redis.url, '--name', 'desk', '--limit', '1000');
      expect(k.code, k.err).toBe(0);
      const key = k.out.trimEnd().split('\n').at(-1)!;
      const r = await replica(join(dir, 'redis.sqlite'), ['--redis', redis.url], key);
      await caughtUp(r, lastSeq);
      expect(await answers(r.url, key)).toEqual(want);
      // Its usage is in Redis, where xrate keys reads it.
      const limited = await fetch(`${r.url}/v1/exchangerate/BTC/USD`, { headers: { 'X-CoinAPI-Key': key } });
      expect(limited.headers.get('x-ratelimit-limit')).toBe('1000');
      const used = Number(limited.headers.get('x-ratelimit-used'));
      expect(used).toBeGreaterThan(QUERIES.length);
      const listed = JSON.parse((await cli('keys', 'list', '--redis', redis.url, '--json')).out) as { name: string; used_24h: number }[];
      expect(listed.find((x) => x.name === 'desk')?.used_24h).toBe(used);
      r.p.proc.kill('SIGTERM');
      expect(await r.p.exited).toBe(0);
    } finally {
      await redis.stop();
    }
  }, 120_000);
});

describe('a replica killed with SIGKILL', () => {
  it('comes back from its last snapshot and stream position, catches up and agrees', async () => {
    // The log published again, at 2,000 events/s, on a stream of its own: the replica cannot get
    // ahead of the publisher, so it is killed while the stream is still being written. The 24,000
    // events take 12 s to publish; the replica is killed after 4,000, so it may take up to 10 s to
    // start on a loaded machine (at 6,000 events/s and a kill after 6,000, 3 s was once too few).
    const pub = binStart(['publish', LOG, '--nats', nats.url, '--stream', 'KILL', '--rate', '2000', '--quiet']);
    started.push(pub);
    const db = join(dir, 'c.sqlite');
    // Snapshots every 10 minutes of event time: about one per 1,200 events of this log.
    const kill = ['--stream', 'KILL', '--snapshot-every', '10m'];
    let c = await replica(db, kill);
    const until = Date.now() + 60_000;
    let applied = 0;
    while (Date.now() < until) {
      applied = (JSON.parse((await json(`${c.url}/readyz`)).body) as { applied_seq: number }).applied_seq;
      if (applied >= 4000) break;
      await new Promise((f) => setTimeout(f, 20));
    }
    c.p.proc.kill('SIGKILL');
    expect(await c.p.exited).toBe('SIGKILL');
    // Killed mid-stream, while the publisher was still at work.
    expect(applied).toBeGreaterThanOrEqual(4000);
    expect(pub.proc.exitCode).toBeNull();
    expect(await pub.exited).toBe(0);
    expect(pub.out()).toContain(`(last sequence ${lastSeq})`);
    c = await replica(db, kill, c.key);
    expect(c.p.err()).toMatch(/resuming the replica from its snapshot at stream sequence [1-9]\d*/);
    await caughtUp(c, lastSeq);
    expect(await answers(c.url, c.key)).toEqual(want);
    expectSameOutputs(db, SERIAL, TABLES);
    c.p.proc.kill('SIGTERM');
    expect(await c.p.exited).toBe(0);
  }, 150_000);
});

describe('bad usage and unreachable servers', () => {
  it('say what is wrong, with exit code 2 for usage and 1 for a server that cannot be reached', async () => {
    expect(await cli('serve', '--nats', 'redis://127.0.0.1:6379')).toMatchObject({
      code: 2,
      err: 'xrate: --nats must be a nats:// URL (nats://HOST:PORT), got "redis://127.0.0.1:6379"\n',
    });
    expect((await cli('serve', '--nats', nats.url, '--stream', 'a.b')).err).toMatch(/--stream must be 1 to 64 letters/);
    expect((await cli('serve', '--stream', 'X')).err).toMatch(/apply to a replica \(--nats URL\)/);
    expect((await cli('serve', '--nats', nats.url, '--replay', LOG)).code).toBe(2);
    expect((await cli('serve', '--nats', nats.url, '--snapshot-from', SERIAL)).err).toMatch(/give it with --db FILE/);
    expect(await cli('publish', LOG)).toMatchObject({ code: 2, err: 'xrate: publish needs --nats nats://HOST:PORT\n' });
    expect((await cli('publish', LOG, '--nats', nats.url, '--rate', '0')).err).toMatch(/--rate must be a positive number/);
    expect((await cli('publish', LOG, LOG, '--nats', nats.url, '--follow')).err).toMatch(/--follow publishes one plain NDJSON log/);
    expect((await cli('publish', join(dir, 'missing.ndjson'), '--nats', nats.url)).code).toBe(1);
    const tardis = await cli(
      'publish',
      join(ROOT, 'fixtures', 'tardis', 'binance-futures', 'quotes', '2020-02-22_BTCUSDT.csv'),
      '--nats',
      nats.url,
    );
    expect(tardis.code).toBe(1);
    expect(tardis.err).toMatch(/is a tardis file: a stream carries xrate's own records/);
    const down = await cli('publish', LOG, '--nats', 'nats://127.0.0.1:1', '--quiet');
    expect(down.code).toBe(1);
    expect(down.err).toMatch(/^xrate: cannot reach NATS at nats:\/\/127\.0\.0\.1:1: /);
    // A database that is not a replica's snapshot cannot seed one.
    const seeded = await cli('serve', '--nats', nats.url, '--stream', STREAM, '--db', join(dir, 'g.sqlite'), '--snapshot-from', SERIAL);
    expect(seeded.code).toBe(1);
    expect(seeded.err).toMatch(/holds no snapshot of a replica/);
    expect(existsSync(join(dir, 'g.sqlite'))).toBe(false);
    // A replica keeps the configuration its database was computed with.
    writeFileSync(join(dir, 'other.json'), JSON.stringify({ maxRateAgeSeconds: 600 }));
    const other = await cli(
      'serve',
      '--nats',
      nats.url,
      '--stream',
      STREAM,
      '--db',
      join(dir, 'a.sqlite'),
      '--config',
      join(dir, 'other.json'),
    );
    expect(other.code).toBe(1);
    expect(other.err).toMatch(/was computed with another engine configuration than --config gives/);
  }, 60_000);
});

describe('a publish the stream does not store whole', () => {
  it('stops with the log and line of the checkpoint that found the gap, never silently, and the last line the stream holds', async () => {
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager, DiscardPolicy } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: nats.url });
    try {
      // A stream that takes 100 messages and refuses the rest.
      await (await jetstreamManager(nc)).streams.add({ name: 'SMALL', subjects: ['SMALL.>'], max_msgs: 100, discard: DiscardPolicy.New });
    } finally {
      await nc.close();
    }
    const r = bin(['publish', LOG, '--nats', nats.url, '--stream', 'SMALL', '--quiet']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^xrate: the stream did not take line 1000 of .*log\.ndjson \(sequence 1000 expected: a record before it was not stored, or another publisher wrote the stream\): /,
    );
    // And where the stream stands: the records it took, up to a line.
    expect(r.stderr).toMatch(
      /\. The stream SMALL holds line 100 of .*log\.ndjson last \(sequence 100\): run the same command with --resume to publish from line 101\n$/,
    );
  }, 60_000);
});

describe('a stream that no longer holds its first messages', () => {
  it('is refused by a replica that has not applied them, naming the sequences', async () => {
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: nats.url });
    try {
      // Retention keeps the newest 50 messages.
      await (await jetstreamManager(nc)).streams.add({ name: 'KEPT', subjects: ['KEPT.>'], max_msgs: 50 });
    } finally {
      await nc.close();
    }
    const small = join(dir, 'small.ndjson');
    const lines = Array.from(
      { length: 120 },
      (_, i) =>
        `{"type":"quote","time":"2024-03-01T00:00:${String(Math.floor(i / 2)).padStart(2, '0')}Z","symbol_id":"KRAKEN_SPOT_BTC_USD","bid_price":"100","bid_size":1,"ask_price":"101","ask_size":1}`,
    );
    writeFileSync(small, `${lines.join('\n')}\n`);
    expect(bin(['publish', small, '--nats', nats.url, '--stream', 'KEPT', '--quiet']).status).toBe(0);
    const r = await cli('serve', '--nats', nats.url, '--stream', 'KEPT', '--db', join(dir, 'kept.sqlite'), '--port', '0');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^xrate: the stream "KEPT" starts at sequence 72, but this replica has applied up to 0: the messages between are gone/,
    );
  }, 60_000);
});

describe('readiness', () => {
  it('is 503 with a message while NATS is down, and ready again once it is back', async () => {
    const e = await replica(join(dir, 'e.sqlite'));
    await caughtUp(e, lastSeq);
    await nats.stop();
    let r = await json(`${e.url}/readyz`);
    const until = Date.now() + 20_000;
    while (r.status === 200 && Date.now() < until) {
      await new Promise((f) => setTimeout(f, 200));
      r = await json(`${e.url}/readyz`);
    }
    expect(r.status).toBe(503);
    expect(JSON.parse(r.body).message).toMatch(/stream RATES cannot be read/);
    expect((await json(`${e.url}/healthz`)).status).toBe(200);
    // The rates it holds are still served.
    expect((await json(`${e.url}/v1/exchangerate/BTC/USD`, e.key)).status).toBe(200);
    await nats.restart();
    await caughtUp(e, lastSeq, 30_000);
  }, 90_000);

  it('a stream written while the replica runs: applied as it comes, and lag reported until caught up', async () => {
    const f = await replica(join(dir, 'f.sqlite'), ['--stream', 'LIVE', '--ready-lag', '0']);
    const live = join(dir, 'live.ndjson');
    writeFileSync(live, '');
    const pub = binStart(['publish', live, '--nats', nats.url, '--stream', 'LIVE', '--follow', '--quiet']);
    started.push(pub);
    const lines = [
      '{"type":"quote","time":"2024-03-01T00:00:00Z","symbol_id":"KRAKEN_SPOT_BTC_USD","bid_price":"100","bid_size":1,"ask_price":"101","ask_size":1}',
      '{"type":"trade","time":"2024-03-01T00:00:00.5Z","symbol_id":"KRAKEN_SPOT_BTC_USD","price":"100.5","size":"2"}',
      'not json',
      '{"type":"quote","time":"2024-03-01T00:00:03Z","symbol_id":"KRAKEN_SPOT_BTC_USD","bid_price":"102","bid_size":1,"ask_price":"103","ask_size":1}',
    ];
    appendFileSync(live, `${lines.join('\n')}\n`);
    await caughtUp(f, 4);
    const m = (await json(`${f.url}/metrics`)).body;
    expect(m).toMatch(/^xrate_events_rejected_total 1$/m);
    expect(m).toMatch(/^xrate_last_tick_seconds 1709251202$/m);
    pub.proc.kill('SIGTERM');
    expect(await pub.exited).toBe(0);
  }, 60_000);
});
