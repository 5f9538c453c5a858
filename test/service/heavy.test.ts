/**
 * Long history answers: read and written a slice at a time with the bytes of every format
 * unchanged (gzip and deflate included, and the CLI's JSON), short requests answered while four
 * long ones are in flight, the per-key cap on heavy requests (429, charged nothing), and a client
 * that goes away stopping the reading of rows.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OhlcBucket } from '../../src/core/ohlc.js';
import { exchangeRatePeriod } from '../../src/core/periods.js';
import { formatTime, parseTime } from '../../src/core/time.js';
import { queryHistory } from '../../src/replay/query.js';
import { historyPieces, negotiate, render, type OutputFormat } from '../../src/http/format/index.js';
import { Query } from '../../src/http/params.js';
import type { DatabaseRateProvider, HistoryQuery, RateProvider, TimeseriesItem } from '../../src/answers/index.js';
import { SlicedBody } from '../../src/service/slices.js';
import {
  demoProvider,
  expectError,
  Gate,
  GatedHistory,
  WrappedProvider,
  request,
  startServer,
  type Res,
  type TestServer,
} from './helpers.js';

const demo = demoProvider();

/** Every one-second bucket of BTC/USD in the demo database (6,852 of them). */
const BIG = '/v1/exchangerate/BTC/USD/history?period_id=1SEC&time_start=2024-03-01T00:00:00Z&time_end=2100-01-01T00:00:00Z&limit=100000';
const T0 = parseTime('2024-03-01T00:00:00Z')!;

let n = 0;
function server(p: RateProvider = demo.provider, heavyConcurrency?: number): Promise<TestServer> {
  return startServer({ provider: p, keysPath: join(demo.tmp.dir, `keys-${n++}.sqlite`), heavyConcurrency });
}

/** The history query and output format of a request path, as the route reads them. */
function parse(path: string, accept?: string): { base: string; quote: string; q: HistoryQuery; fmt: OutputFormat } {
  const u = new URL(`http://x${path}`);
  const [, , , base, quote] = u.pathname.split('/');
  const query = new Query(Object.fromEntries(u.searchParams));
  return {
    base,
    quote,
    q: {
      period: exchangeRatePeriod(query.text('period_id')!)!,
      from: query.time('time_start')!,
      to: query.time('time_end'),
      limit: query.int('limit', 1, 100_000, 100),
    },
    fmt: negotiate(query, accept),
  };
}

/** The body the service gave before answers were sliced: the whole array read at once, rendered at once. */
function renderedAtOnce(path: string, accept?: string): Buffer {
  const { base, quote, q, fmt } = parse(path, accept);
  const { body } = render('history', demo.provider.history(base, quote, q), fmt);
  return Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
}

describe('the bytes of a long answer are those of the whole answer rendered at once', () => {
  let srv: TestServer;
  let key: string;
  beforeAll(async () => {
    srv = await server();
    key = srv.key();
  });
  afterAll(async () => srv?.close(true));

  const cases: [string, string, Record<string, string>][] = [
    ['JSON', BIG, {}],
    ['XML', `${BIG}&output_format=xml`, {}],
    ['CSV', `${BIG}&output_format=csv`, {}],
    [
      'CSV with every option',
      `${BIG}&output_format=csv&csv_set_delimiter=,&csv_set_dec_mark=,&csv_include_quotes=true&csv_set_timeformat=unix&csv_set_newline=win&csv_exclude_col=rate_low`,
      {},
    ],
    [
      'CSV without header, custom time format',
      `${BIG}&output_format=csv&csv_include_header=false&csv_set_timeformat=dd.MM.yyyy%20HH:mm:ss.fff`,
      {},
    ],
    ['MessagePack', BIG, { accept: 'application/x-msgpack' }],
    [
      'an inverse pair, rolled up, bounded',
      '/v1/exchangerate/USD/BTC/history?period_id=10SEC&time_start=2024-03-01T04:10:00Z&time_end=2024-03-01T05:40:00Z&limit=500',
      {},
    ],
    [
      'a limit cutting the data',
      '/v1/exchangerate/ETH/USD/history?period_id=1SEC&time_start=2024-03-01T04:30:00.5Z&time_end=2100-01-01T00:00:00Z&limit=3001',
      {},
    ],
  ];
  for (const [name, path, headers] of cases) {
    it(name, async () => {
      const r = await srv.get(path, { 'X-CoinAPI-Key': key, ...headers });
      expect(r.status, r.text.slice(0, 300)).toBe(200);
      const want = renderedAtOnce(path, headers.accept);
      expect(want.length).toBeGreaterThan(100_000);
      expect(r.body.equals(want)).toBe(true);
    });
  }

  it('gzip and deflate: the same compressed bytes', async () => {
    let r = await srv.get(BIG, { 'X-CoinAPI-Key': key, 'accept-encoding': 'gzip' });
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(r.body).equals(renderedAtOnce(BIG))).toBe(true);
    expect(r.body.equals(gzipSync(renderedAtOnce(BIG)))).toBe(true);
    const xml = `${BIG}&output_format=xml`;
    r = await srv.get(xml, { 'X-CoinAPI-Key': key, 'accept-encoding': 'deflate' });
    expect(r.headers['content-encoding']).toBe('deflate');
    expect(r.body.equals(deflateSync(renderedAtOnce(xml)))).toBe(true);
  });

  it('JSON: the output of `xrate history DB`', async () => {
    const last = demo.provider.info().lastTick!;
    const cli = await queryHistory({ inputs: [demo.db] }, ['BTC', 'USD'], '1SEC', T0, last + 1_000_000, 100_000);
    expect(cli.length).toBe(6852);
    const r = await srv.get(BIG, { 'X-CoinAPI-Key': key });
    expect(r.text).toBe(JSON.stringify(cli));
  });

  it('the pieces of every format join to the whole rendering, at any array size and cut', () => {
    const item = (i: number): TimeseriesItem => ({
      time_period_start: formatTime(T0 + i * 1_000_000),
      time_period_end: formatTime(T0 + (i + 1) * 1_000_000),
      time_open: i % 7 === 0 ? null : formatTime(T0 + i * 1_000_000 + 1234),
      time_close: formatTime(T0 + i * 1_000_000 + 999_999),
      rate_open: i % 5 === 0 ? i : 62_000 + i / 3,
      rate_high: i % 11 === 0 ? null : 62_001.5 + i,
      rate_low: 1e-9 * (i + 1),
      rate_close: -i / 7,
    });
    const q = (o: Record<string, string>) => new Query(o);
    const formats: OutputFormat[] = [
      negotiate(q({}), undefined),
      negotiate(q({}), 'application/x-msgpack'),
      negotiate(q({ output_format: 'xml' }), undefined),
      negotiate(q({ output_format: 'csv' }), undefined),
      negotiate(q({ output_format: 'csv', csv_include_header: '0', csv_set_delimiter: '.', csv_set_dec_mark: ',' }), undefined),
    ];
    const all = Array.from({ length: 65_536 }, (_, i) => item(i));
    for (const size of [1, 2, 15, 16, 17, 300, 65_535, 65_536]) {
      const items = all.slice(0, size);
      for (const fmt of formats) {
        if (size > 1000 && fmt.kind !== 'msgpack') continue; // array 16 and array 32 headers
        const p = historyPieces(fmt, items.length, items[0]);
        const parts: (string | Buffer)[] = [p.head];
        for (let at = 0, run = 1; at < size; at += run, run = (run * 3) % 97 || 1) parts.push(p.items(items.slice(at, at + run), at));
        parts.push(p.tail);
        const joined = Buffer.concat(parts.map((x) => (typeof x === 'string' ? Buffer.from(x) : x)));
        const whole = render('history', items, fmt).body;
        expect(joined.equals(Buffer.isBuffer(whole) ? whole : Buffer.from(whole)), `${fmt.kind} of ${size}`).toBe(true);
      }
    }
  });
});

/** Wraps a provider, recording when history answers start and how far their reading went. */
class Recording extends WrappedProvider {
  starts = 0;
  pulled = 0;
  finished = false;
  closed = false;
  private waiters: { n: number; resolve: () => void }[] = [];

  /**
   * @param onItem - called with the number of buckets read so far, after each
   * @param spinMs - time each bucket takes to read (busy), as from a bigger or slower database
   */
  constructor(
    inner: DatabaseRateProvider,
    private readonly onItem: (pulled: number) => void = () => {},
    private readonly spinMs = 0,
  ) {
    super(inner);
  }

  /** Resolves once `n` history answers have started. */
  started(count: number): Promise<void> {
    if (this.starts >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n: count, resolve }));
  }

  private start(): void {
    this.starts++;
    for (const w of this.waiters.filter((x) => x.n <= this.starts)) w.resolve();
  }

  override history(b: string, q: string, h: HistoryQuery): TimeseriesItem[] {
    this.start();
    const items = this.inner.history(b, q, h);
    this.pulled += items.length;
    this.finished = true;
    return items;
  }
  historyBuckets(b: string, q: string, h: HistoryQuery): Iterator<OhlcBucket> {
    this.start();
    const it = this.inner.historyBuckets(b, q, h);
    return {
      next: () => {
        const until = performance.now() + this.spinMs;
        while (performance.now() < until);
        const r = it.next();
        if (r.done) this.finished = true;
        else this.onItem(++this.pulled);
        return r;
      },
      return: (v?: unknown) => {
        this.closed = true;
        it.return?.(v);
        return { done: true, value: undefined };
      },
    };
  }
}

/** Records, on the raw server, when each request arrives and when its response is ended. */
function timeline(srv: TestServer): string[] {
  const events: string[] = [];
  srv.app.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const id = String(req.headers['x-test-id']);
    events.push(`arrive ${id}`);
    const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
    res.end = ((...a: unknown[]) => {
      events.push(`end ${id}`);
      return end(...a);
    }) as typeof res.end;
  });
  return events;
}

describe('short requests while long ones are in flight', () => {
  it('light requests are answered while four heavy answers are still being read and written', async () => {
    const rec = new Recording(demo.provider);
    const srv = await server(rec);
    const events = timeline(srv);
    try {
      const keys = [srv.key(), srv.key()]; // the default cap is 2 heavy requests per key
      const heavy = [0, 1, 2, 3].map((i) => srv.get(BIG, { 'X-CoinAPI-Key': keys[i % 2], 'x-test-id': `heavy${i}` }));
      let heavyDone = 0;
      for (const h of heavy) void h.then(() => heavyDone++);
      // Once every heavy answer has begun reading, one light request after the other until they are all done.
      await rec.started(4);
      const light: Res[] = [];
      while (heavyDone < 4 && light.length < 500) {
        light.push(await srv.get('/v1/exchangerate/BTC/USD', { 'X-CoinAPI-Key': keys[0], 'x-test-id': `light${light.length}` }));
      }
      const done = await Promise.all(heavy);
      for (const r of done) expect(r.body.equals(renderedAtOnce(BIG))).toBe(true);
      for (const r of light) expect(r.status).toBe(200);
      // Some light request arrived after the four heavy ones had begun and was answered before any of them ended.
      const firstHeavyEnd = Math.min(...[0, 1, 2, 3].map((i) => events.indexOf(`end heavy${i}`)));
      const lastHeavyArrival = Math.max(...[0, 1, 2, 3].map((i) => events.indexOf(`arrive heavy${i}`)));
      const answeredMeanwhile = light.filter((_, i) => {
        const a = events.indexOf(`arrive light${i}`);
        const e = events.indexOf(`end light${i}`);
        return a > lastHeavyArrival && e < firstHeavyEnd;
      });
      expect(answeredMeanwhile.length, events.join('\n')).toBeGreaterThan(0);
      // A long answer is written as it is made (no Content-Length).
      expect(done[0].headers['content-length']).toBeUndefined();
      expect(done[0].headers['transfer-encoding']).toBe('chunked');
    } finally {
      await srv.close(true);
    }
  });
});

describe('the cap on heavy requests per key', () => {
  it('past 2 heavy requests in flight a key gets a 429 naming the cap, charged nothing; other keys and light requests go on', async () => {
    const gate = new Gate();
    const srv = await server(new GatedHistory(demo.provider, gate));
    try {
      const key = srv.key();
      const other = srv.key();
      const held = [srv.get(BIG, { 'X-CoinAPI-Key': key }), srv.get(`${BIG}&output_format=csv`, { 'X-CoinAPI-Key': key })];
      await gate.waitFor(2);
      const refused = await srv.get(BIG, { 'X-CoinAPI-Key': key });
      expect(expectError(refused, 429)).toBe(
        'Too many concurrent heavy requests: this API key may have 2 history requests with a limit above 1000 in flight at once',
      );
      expect(refused.headers['x-ratelimit-request-cost']).toBe('0');
      expect(refused.headers['x-ratelimit-used']).toBe('0');
      expect(refused.headers['retry-after']).toBe('1');
      // Not heavy: limit 1000 and below.
      const light = srv.get(BIG.replace('limit=100000', 'limit=1000'), { 'X-CoinAPI-Key': key });
      // Another key has its own cap.
      const otherHeavy = srv.get(BIG, { 'X-CoinAPI-Key': other });
      await gate.waitFor(4);
      gate.open();
      for (const r of await Promise.all([...held, light, otherHeavy])) expect(r.status, r.text.slice(0, 200)).toBe(200);
      const again = await srv.get(BIG, { 'X-CoinAPI-Key': key });
      expect(again.status).toBe(200);
      // 69 + 69 + 10 + 69: the refusal cost nothing.
      expect(again.headers['x-ratelimit-used']).toBe(String(69 + 69 + 10 + 69));
    } finally {
      await srv.close(true);
    }
  });

  it('the cap is configurable', async () => {
    const gate = new Gate();
    const srv = await server(new GatedHistory(demo.provider, gate), 1);
    try {
      const key = srv.key();
      const held = srv.get(BIG, { 'X-CoinAPI-Key': key });
      await gate.waitFor(1);
      expect(expectError(await srv.get(BIG, { 'X-CoinAPI-Key': key }), 429)).toMatch(/may have 1 history requests with a limit above 1000/);
      gate.open();
      expect((await held).status).toBe(200);
    } finally {
      await srv.close(true);
    }
  });
});

describe('a client that goes away', () => {
  it('stops the reading of rows', async () => {
    let client: ClientRequest | undefined;
    // The client goes away once the first 100 buckets have been read (of 6,852, each taking 0.02 ms).
    const rec = new Recording(
      demo.provider,
      (pulled) => {
        if (pulled === 100) client?.destroy();
      },
      0.02,
    );
    const srv = await server(rec);
    try {
      const key = srv.key();
      const closed = new Promise<void>((resolve) => {
        srv.app.server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => res.once('close', () => resolve()));
      });
      const u = new URL(srv.url + BIG);
      client = httpRequest({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers: { 'X-CoinAPI-Key': key } });
      client.on('error', () => {});
      client.end();
      await closed;
      // The server notices within a turn or two of the event loop; then no more rows are read.
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      const pulled = rec.pulled;
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      expect(rec.finished).toBe(false);
      expect(rec.closed).toBe(true);
      expect(rec.pulled).toBe(pulled);
      expect(rec.pulled).toBeLessThan(6852);
      // The key was charged nothing, and its slot is free again.
      const r = await srv.get('/v1/exchangerate/BTC/USD', { 'X-CoinAPI-Key': key });
      expect(r.headers['x-ratelimit-used']).toBe('1');
      expect(r.headers['x-concurrencylimit-remaining']).toBe('99');
    } finally {
      await srv.close(true);
    }
  });

  it('stops the writing of a sliced body', async () => {
    let made = 0;
    const body = new SlicedBody(() => {
      made++;
      return 'x'.repeat(1 << 16);
    });
    const chunks: Buffer[] = [];
    body.on('data', (c: Buffer) => {
      chunks.push(c);
      if (chunks.length === 3) body.destroy();
    });
    await new Promise<void>((resolve) => body.on('close', () => resolve()));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(made).toBe(3);
  });
});

describe('history answers unchanged in shape', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await server();
  });
  afterAll(async () => srv?.close(true));

  it('a short answer is one piece with its length; an empty one too', async () => {
    const key = srv.key();
    const r = await srv.get(
      '/v1/exchangerate/BTC/USD/history?period_id=1MIN&time_start=2024-03-01T05:00:00Z&time_end=2100-01-01T00:00:00Z&limit=10',
      {
        'X-CoinAPI-Key': key,
      },
    );
    expect(r.headers['content-length']).toBe(String(r.body.length));
    expect((r.json() as unknown[]).length).toBe(10);
    const e = await srv.get(
      '/v1/exchangerate/BTC/USD/history?period_id=1MIN&time_start=2024-03-02T05:00:00Z&time_end=2100-01-01T00:00:00Z&limit=100000',
      {
        'X-CoinAPI-Key': key,
      },
    );
    expect(e.status).toBe(200);
    expect(e.text).toBe('[]');
    const x = await request(
      `${srv.url}/v1/exchangerate/BTC/USD/history?period_id=1SEC&time_start=2024-03-02T05:00:00Z&time_end=2100-01-01T00:00:00Z&output_format=xml`,
      {
        headers: { 'X-CoinAPI-Key': key },
      },
    );
    expect(x.text).toBe(
      renderedAtOnce(
        '/v1/exchangerate/BTC/USD/history?period_id=1SEC&time_start=2024-03-02T05:00:00Z&time_end=2100-01-01T00:00:00Z&output_format=xml',
      ).toString(),
    );
  });
});
