/**
 * The EMS gateway over real HTTP (docs/ems.md): positions per account valued at xrate's rates, 490
 * alone and among others, `time`, bad parameters, the live engine's answers equal to the
 * database's, self-hosted with no key, managed with an API key (HTTPS and client certificates:
 * emsTls.test.ts), and the management operations. Bodies are validated against the EMS OpenAPI
 * description (fixtures/) and, for the management operations it lacks, against the schemas of the
 * EMS documentation.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEms } from '../../src/app/ems.js';
import { createEmsApp, type EmsAppOptions } from '../../src/ems/server.js';
import { PositionSource } from '../../src/ems/positions.js';
import { loadSites } from '../../src/ems/sites.js';
import { formatTime } from '../../src/core/time.js';
import { ReplayStore } from '../../src/io/store.js';
import { replay } from '../../src/replay/replay.js';
import { KeyStore } from '../../src/http/keys.js';
import { startFollow, startReplay } from '../../src/service/live.js';
import { DatabaseRateProvider, type RateProvider } from '../../src/answers/index.js';
import { FIXTURES, request, type Res, tempDir } from './helpers.js';

// ------------------------------------------------------------------ the log

const at = (s: string) => `2024-03-01T${s}Z`;
const line = (o: Record<string, unknown>) => JSON.stringify(o);
const market = (t: string, id: string, price: number) => [
  line({ type: 'trade', time: at(t), symbol_id: id, price, size: 1 }),
  line({ type: 'quote', time: at(t), symbol_id: id, bid_price: price * 0.999, bid_size: 1, ask_price: price * 1.001, ask_size: 1 }),
];
const position = (t: string, exchange: string, sym: string, over: Record<string, unknown> = {}) =>
  line({
    type: 'position',
    time: at(t),
    exchange_id: exchange,
    symbol_id_exchange: sym,
    avg_entry_price: '100',
    quantity: '1',
    side: 'BUY',
    ...over,
  });
const connectivity = (t: string, exchange: string, reachable: boolean) =>
  line({ type: 'connectivity', time: at(t), exchange_id: exchange, reachable });

/**
 * BTC/USD = 62000 and USDT/USD = 0.5 on KRAKEN (so BTC/USDT, a cross rate, is 124000); positions
 * of three BINANCE accounts, KRAKEN and OKX; KRAKEN unreachable from 00:00:10, OKX from 00:00:11.
 */
const LOG = [
  ...market('00:00:00.5', 'KRAKEN_SPOT_BTC_USD', 62000),
  ...market('00:00:00.5', 'KRAKEN_SPOT_USDT_USD', 0.5),
  position('00:00:02.5', 'BINANCE~hedge', 'BTCUSDT', { symbol_id: 'BINANCE_SPOT_BTC_USDT', avg_entry_price: '120000', quantity: '0.5' }),
  position('00:00:02.5', 'BINANCE~hedge', 'SOLUSDT', { symbol_id: 'BINANCE_SPOT_SOL_USDT' }),
  position('00:00:02.5', 'BINANCE', 'BTCUSDT', {
    symbol_id: 'BINANCE_SPOT_BTC_USDT',
    avg_entry_price: '125000',
    side: 'SELL',
    leverage: 2,
    cross_margin: false,
  }),
  position('00:00:02.5', 'BINANCE/2574', 'ETHUSDT', { raw_data: { note: 'no ETH market' } }),
  position('00:00:02.5', 'KRAKEN', 'XBTUSD', {
    symbol_id: 'KRAKEN_SPOT_BTC_USD',
    avg_entry_price: '61000',
    quantity: '2',
    liquidation_price: '30000',
  }),
  position('00:00:02.5', 'OKX', 'BTC-USD', { symbol_id: 'OKX_SPOT_BTC_USD', avg_entry_price: '60000' }),
  // Replaced, then closed.
  position('00:00:03.5', 'BINANCE~hedge', 'SOLUSDT', { symbol_id: 'BINANCE_SPOT_SOL_USDT', quantity: '0' }),
  position('00:00:03.5', 'BINANCE', 'BTCUSDT', {
    symbol_id: 'BINANCE_SPOT_BTC_USDT',
    avg_entry_price: '126000',
    side: 'SELL',
    leverage: 2,
    cross_margin: false,
  }),
  // Rejects: account separator misuse, negative quantity, unknown side.
  position('00:00:04.5', 'BINANCE~', 'BTCUSDT'),
  position('00:00:04.5', 'BINANCE', 'BTCUSDT', { quantity: '-1' }),
  position('00:00:04.5', 'BINANCE', 'BTCUSDT', { side: 'LONG' }),
  connectivity('00:00:10.5', 'KRAKEN', false),
  connectivity('00:00:11.5', 'OKX', false),
  ...market('00:00:12.5', 'KRAKEN_SPOT_BTC_USD', 62000),
].join('\n');

// ------------------------------------------------------------------ schemas

type Json = Record<string, unknown>;
const SPEC = JSON.parse(readFileSync(join(FIXTURES, 'ems-gateway-rest.openapi.json'), 'utf8')) as {
  paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }>;
  components: Json;
};
const ajv = new Ajv({ strict: false, allErrors: true });
for (const f of ['double', 'float', 'int32', 'int64']) ajv.addFormat(f, true);
ajv.addSchema({ $id: 'ems.json', components: SPEC.components });
const localRefs = (schema: unknown) =>
  JSON.parse(
    JSON.stringify(schema).replace(/"#\/components\/schemas\/([^"]+)"/g, (_m, n: string) =>
      JSON.stringify(`ems.json#/components/schemas/${n}`),
    ),
  );
const positions = SPEC.paths['/v1/positions'].get.responses;
const validPositions = ajv.compile(localRefs(positions['200'].content['application/json'].schema));
// The description types the 490 body "appliction/json" (sic): the schema is taken whatever the type.
const validReject = ajv.compile(localRefs(Object.values(positions['490'].content)[0].schema));
// From the EMS documentation pages (the description has no management paths).
const str = { type: 'string' };
const validEndpoints = ajv.compile({
  type: 'array',
  items: {
    type: 'object',
    required: ['exchange_id', 'location_id', 'endpoint_schema', 'endpoint_host', 'endpoint_url'],
    properties: { exchange_id: str, location_id: str, endpoint_schema: str, endpoint_host: str, endpoint_url: str },
    additionalProperties: false,
  },
});
const validLocations = ajv.compile({
  type: 'array',
  items: {
    type: 'object',
    required: ['location_id', 'region_name', 'provider_name'],
    properties: { location_id: str, region_name: str, provider_name: str },
    additionalProperties: false,
  },
});

function check(valid: ReturnType<typeof ajv.compile>, body: unknown): unknown {
  if (!valid(body)) throw new Error(`${ajv.errorsText(valid.errors)}\n${JSON.stringify(body).slice(0, 400)}`);
  return body;
}

/** A 200 of /v1/positions, validated. */
function positionsOf(res: Res): { exchange_id: string; data: Json[] }[] {
  expect(res.status, res.text).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return check(validPositions, res.json()) as { exchange_id: string; data: Json[] }[];
}

/** A 490, validated; its body. */
function rejectOf(res: Res): Json {
  expect(res.status, res.text).toBe(490);
  return check(validReject, res.json()) as Json;
}

/** A `{message}` error with `status`; its message. */
function errorOf(res: Res, status: number): string {
  expect(res.status, res.text).toBe(status);
  const body = res.json() as Json;
  expect(Object.keys(body)).toEqual(['message']);
  expect(typeof body.message).toBe('string');
  return body.message as string;
}

// ------------------------------------------------------------------ set-up

const tmp = tempDir('xrate-ems-');
const dir = tmp.dir;
const DB = join(dir, 'ems.sqlite');
const LOG_PATH = join(dir, 'ems.ndjson');
let provider: DatabaseRateProvider;
let store: ReplayStore;
const apps: FastifyInstance[] = [];

/** Serves the gateway (default: over the replay database `DB`) on 127.0.0.1, port 0; its URL. */
async function serve(
  opts: Partial<EmsAppOptions> = {},
  data: { provider: RateProvider; store: ReplayStore } = { provider, store },
): Promise<string> {
  const app = await createEmsApp({
    positions: new PositionSource(data.provider, data.store),
    sites: { locations: [], endpoints: [] },
    ...opts,
  });
  apps.push(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  return `${opts.tls ? 'https' : 'http'}://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
}

const get = (url: string, headers: Record<string, string> = {}) => request(url, { headers });

beforeAll(async () => {
  writeFileSync(LOG_PATH, `${LOG}\n`);
  await replay({ inputs: [LOG_PATH], db: DB });
  provider = await DatabaseRateProvider.open(DB);
  store = ReplayStore.open(DB, { readonly: true });
}, 60_000);

afterAll(async () => {
  for (const a of apps) await a.close();
  await provider?.close();
  store?.close();
  tmp.remove();
});

// ------------------------------------------------------------------ positions

describe('GET /v1/positions (self-hosted, no key)', () => {
  it('answers the accounts of an exchange, sorted, with P&L at the cross rate, replaced snapshots and closed positions gone', async () => {
    const url = await serve();
    const body = positionsOf(await get(`${url}/v1/positions?exchange_id=BINANCE`));
    expect(body.map((a) => a.exchange_id)).toEqual(['BINANCE', 'BINANCE/2574', 'BINANCE~hedge']);
    const [plain, tagged, hedge] = body;
    // SELL 1 at 126000, BTC/USDT = 62000 / 0.5 = 124000: (124000 - 126000) x 1 x -1 = 2000.
    expect(plain.data).toHaveLength(1);
    expect(plain.data[0]).toMatchObject({
      symbol_id_exchange: 'BTCUSDT',
      avg_entry_price: 126000,
      side: 'SELL',
      leverage: 2,
      cross_margin: false,
    });
    expect(plain.data[0].unrealized_pnl as number).toBeCloseTo(2000, 6);
    // No symbol id: no base/quote, so no P&L field at all (never a wrong number).
    expect(tagged.data).toEqual([
      { symbol_id_exchange: 'ETHUSDT', avg_entry_price: 100, quantity: 1, side: 'BUY', raw_data: { note: 'no ETH market' } },
    ]);
    // BUY 0.5 at 120000: (124000 - 120000) x 0.5 = 2000; SOLUSDT closed.
    expect(hedge.data.map((p) => p.symbol_id_exchange)).toEqual(['BTCUSDT']);
    expect(hedge.data[0].unrealized_pnl as number).toBeCloseTo(2000, 6);
    expect(Object.keys(hedge.data[0])).toEqual([
      'symbol_id_exchange',
      'symbol_id_coinapi',
      'avg_entry_price',
      'quantity',
      'side',
      'unrealized_pnl',
    ]);
  });

  it('matches one account exactly, and answers [] for an account with nothing open', async () => {
    const url = await serve();
    expect(positionsOf(await get(`${url}/v1/positions?exchange_id=BINANCE~hedge`)).map((a) => a.exchange_id)).toEqual(['BINANCE~hedge']);
    expect(positionsOf(await get(`${url}/v1/positions?exchange_id=BINANCE~main`))).toEqual([]);
    expect(positionsOf(await get(`${url}/v1/positions?exchange_id=BITSTAMP`))).toEqual([]);
  });

  it('gives 490 for an unreachable exchange asked alone, naming it', async () => {
    const url = await serve();
    const r = rejectOf(await get(`${url}/v1/positions?exchange_id=KRAKEN`));
    expect(r).toMatchObject({ type: 'MESSAGE_REJECT', reject_reason: 'EXCHANGE_UNREACHABLE', exchange_id: 'KRAKEN' });
    expect(r.message).toMatch(/KRAKEN is unreachable/);
    // An account of an unreachable exchange too.
    expect(rejectOf(await get(`${url}/v1/positions?exchange_id=KRAKEN~main`)).exchange_id).toBe('KRAKEN');
  });

  it('gives 490 naming every unreachable exchange when asked for all (a partial list would mislead)', async () => {
    const url = await serve();
    const r = rejectOf(await get(`${url}/v1/positions`));
    expect(r).not.toHaveProperty('exchange_id');
    expect(r.message).toMatch(/^Exchanges KRAKEN, OKX are unreachable/);
    // With one down, the reject names it.
    const one = rejectOf(await get(`${url}/v1/positions?time=${at('00:00:11')}`));
    expect(one.exchange_id).toBe('KRAKEN');
    expect(one.message).toMatch(/^Exchange KRAKEN is unreachable at 2024-03-01T00:00:11.0000000Z/);
  });

  it('answers at a tick with time=: the snapshots up to it, at its rates', async () => {
    const url = await serve();
    const before = positionsOf(await get(`${url}/v1/positions?time=${at('00:00:03')}`));
    expect(before.map((a) => a.exchange_id)).toEqual(['BINANCE', 'BINANCE/2574', 'BINANCE~hedge', 'KRAKEN', 'OKX']);
    // At 00:00:03 BINANCE's snapshot was still the first one (125000), SOLUSDT still open.
    expect(before[0].data[0].avg_entry_price).toBe(125000);
    expect(before[2].data.map((p) => p.symbol_id_exchange)).toEqual(['BTCUSDT', 'SOLUSDT']);
    // SOL has no rate: no P&L. KRAKEN: (62000 - 61000) x 2.
    expect(before[2].data[1]).not.toHaveProperty('unrealized_pnl');
    expect(before[3].data[0].unrealized_pnl as number).toBeCloseTo(2000, 6);
    expect(before[3].data[0].liquidation_price).toBe(30000);
    // OKX has no BTC/USD market of its own, but xrate's BTC/USD is the same for every exchange.
    expect(before[4].data[0].unrealized_pnl as number).toBeCloseTo(2000, 6);
    // Before any position.
    expect(positionsOf(await get(`${url}/v1/positions?time=${at('00:00:01')}`))).toEqual([]);
    // Before the first tick: not covered, the same 550 as a rate's.
    expect(errorOf(await get(`${url}/v1/positions?time=${at('00:00:00')}`), 550)).toMatch(
      /no positions at 2024-03-01T00:00:00.0000000Z: no data before the first tick/,
    );
  });

  it('refuses bad parameters with 400 and a specific message', async () => {
    const url = await serve();
    expect(errorOf(await get(`${url}/v1/positions?exchange_id=~hedge`), 400)).toMatch(
      /exchange_id.*exchange part before the account separator "~" is empty/,
    );
    expect(errorOf(await get(`${url}/v1/positions?exchange_id=BINANCE~`), 400)).toMatch(/tag after "~" is empty/);
    expect(errorOf(await get(`${url}/v1/positions?exchange_id=`), 400)).toMatch(/exchange_id.*empty/);
    expect(errorOf(await get(`${url}/v1/positions?time=yesterday`), 400)).toMatch(/parameter 'time'.*ISO 8601/);
    expect(errorOf(await get(`${url}/v1/nowhere`), 404)).toMatch(/Unknown route GET \/v1\/nowhere/);
  });

  it('gives the same answers from a live engine (serve --replay) as from its database', async () => {
    const liveDb = join(dir, 'live.sqlite');
    const live = await startReplay({ log: LOG_PATH, db: liveDb });
    const liveStore = ReplayStore.open(liveDb, { readonly: true });
    try {
      const liveUrl = await serve({}, { provider: live, store: liveStore });
      const url = await serve();
      for (const q of ['exchange_id=BINANCE', 'exchange_id=OKX', '', `time=${at('00:00:03')}`, 'exchange_id=KRAKEN']) {
        const [a, b] = [await get(`${liveUrl}/v1/positions?${q}`), await get(`${url}/v1/positions?${q}`)];
        expect([a.status, a.text], q).toEqual([b.status, b.text]);
      }
    } finally {
      liveStore.close();
      await live.close();
    }
  });
});

describe('GET /v1/positions over a followed log (--follow LOG)', () => {
  it('answers the current book at the current rate as lines are appended, then 490 once the exchange is down', async () => {
    const T0 = Date.parse('2024-03-01T01:00:00Z');
    let clock = T0;
    const iso = (ms: number) => formatTime(ms * 1000);
    const quote = (ms: number, mid: number) =>
      line({
        type: 'quote',
        time: iso(ms),
        symbol_id: 'EXA_SPOT_BTC_USD',
        bid_price: mid - 1,
        bid_size: 1,
        ask_price: mid + 1,
        ask_size: 1,
      });
    const log = join(dir, 'follow.ndjson');
    const db = join(dir, 'follow.sqlite');
    writeFileSync(
      log,
      `${[
        line({ type: 'trade', time: iso(T0 - 20_000), symbol_id: 'EXA_SPOT_BTC_USD', price: 100, size: 1 }),
        quote(T0 - 20_000, 100),
        line({
          type: 'position',
          time: iso(T0 - 10_000),
          exchange_id: 'EXA~desk',
          symbol_id_exchange: 'BTCUSD',
          symbol_id: 'EXA_SPOT_BTC_USD',
          avg_entry_price: 90,
          quantity: 2,
          side: 'BUY',
        }),
      ].join('\n')}\n`,
    );
    const f = startFollow({ log, db, now: () => clock, pollMs: 3_600_000, lagMs: 1000 });
    const followStore = ReplayStore.open(db, { readonly: true });
    try {
      const live = await serve({}, { provider: f.provider, store: followStore });
      const pnl = async () =>
        positionsOf(await get(`${live}/v1/positions`)).map((a) => [a.exchange_id, a.data.map((p) => p.unrealized_pnl)]);
      // (100 - 90) x 2.
      expect(await pnl()).toEqual([['EXA~desk', [20]]]);
      // The price moves: the same position is worth more, at once.
      appendFileSync(log, `${quote(T0 + 500, 110)}\n`);
      clock = T0 + 2000;
      f.poll();
      expect(await pnl()).toEqual([['EXA~desk', [40]]]);
      // Closed, and another opened on the exchange's untagged account; then the exchange goes down.
      appendFileSync(
        log,
        `${line({ type: 'position', time: iso(T0 + 2500), exchange_id: 'EXA~desk', symbol_id_exchange: 'BTCUSD', avg_entry_price: 90, quantity: 0, side: 'BUY' })}\n` +
          `${line({ type: 'position', time: iso(T0 + 2500), exchange_id: 'EXA', symbol_id_exchange: 'BTCUSD', symbol_id: 'EXA_SPOT_BTC_USD', avg_entry_price: 120, quantity: 1, side: 'SELL' })}\n`,
      );
      clock = T0 + 4000;
      f.poll();
      expect(await pnl()).toEqual([['EXA', [10]]]);
      appendFileSync(log, `${line({ type: 'connectivity', time: iso(T0 + 4500), exchange_id: 'EXA', reachable: false })}\n`);
      clock = T0 + 6000;
      f.poll();
      expect(rejectOf(await get(`${live}/v1/positions?exchange_id=EXA~desk`)).exchange_id).toBe('EXA');
      // Earlier ticks from the rows the follower wrote.
      expect(positionsOf(await get(`${live}/v1/positions?time=${iso(T0 + 1000)}`)).map((a) => a.exchange_id)).toEqual(['EXA~desk']);
    } finally {
      followStore.close();
      await f.provider.close();
    }
  });
});

// ------------------------------------------------------------------ managed mode

describe('managed mode', () => {
  let keys: KeyStore;
  let key: string;
  beforeAll(() => {
    keys = KeyStore.open(join(dir, 'keys.sqlite'));
    key = keys.create({ name: 'desk' }).key;
  });
  afterAll(() => keys.close());

  it('refuses a request without a key with 401 {message}, takes the X-CoinAPI-Key header or the apikey parameter', async () => {
    const url = await serve({ managed: { keys } });
    expect(errorOf(await get(`${url}/v1/positions?exchange_id=OKX&time=${at('00:00:03')}`), 401)).toMatch(/Missing API key/);
    expect(errorOf(await get(`${url}/v1/locations`, { 'X-CoinAPI-Key': 'not-a-key' }), 401)).toMatch(/Invalid API key/);
    positionsOf(await get(`${url}/v1/positions?exchange_id=OKX&time=${at('00:00:03')}`, { 'X-CoinAPI-Key': key }));
    positionsOf(await get(`${url}/v1/positions?exchange_id=OKX&time=${at('00:00:03')}&apikey=${key}`));
    // The 490 is behind authentication too.
    expect(rejectOf(await get(`${url}/v1/positions?exchange_id=KRAKEN`, { 'X-CoinAPI-Key': key })).exchange_id).toBe('KRAKEN');
  });
});

// ------------------------------------------------------------------ management operations

describe('management operations', () => {
  const sitesPath = join(dir, 'sites.json');
  const SITES = {
    locations: [
      { location_id: 'aws-eu-central-1', region_name: 'eu-central-1', provider_name: 'aws' },
      { location_id: 'aws-us-east-1', region_name: 'us-east-1', provider_name: 'aws' },
    ],
    endpoints: [
      {
        exchange_id: 'BINANCE',
        location_id: 'aws-eu-central-1',
        endpoint_schema: 'https',
        endpoint_host: 'eu.example.com',
        endpoint_url: 'https://eu.example.com/',
      },
      {
        exchange_id: 'BINANCE~hedge',
        location_id: 'aws-us-east-1',
        endpoint_schema: 'https',
        endpoint_host: 'us.example.com',
        endpoint_url: 'https://us.example.com/',
      },
      {
        exchange_id: 'KRAKEN',
        location_id: 'aws-us-east-1',
        endpoint_schema: 'https',
        endpoint_host: 'us.example.com',
        endpoint_url: 'https://us.example.com/',
      },
    ],
  };

  it('lists endpoints (all, of an exchange, of an account) and locations from --sites, and the client PEM', async () => {
    writeFileSync(sitesPath, JSON.stringify(SITES));
    const url = await serve({ sites: loadSites(sitesPath), clientPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' });
    const ids = async (q: string) =>
      (check(validEndpoints, (await get(`${url}/v1/endpoints${q}`)).json()) as Json[]).map((e) => e.exchange_id);
    expect(await ids('')).toEqual(['BINANCE', 'BINANCE~hedge', 'KRAKEN']);
    expect(await ids('?filter_exchange_id=BINANCE')).toEqual(['BINANCE', 'BINANCE~hedge']);
    expect(await ids('?filter_exchange_id=BINANCE~hedge')).toEqual(['BINANCE~hedge']);
    expect(await ids('?filter_exchange_id=OKX')).toEqual([]);
    // An array, as the interface description types it: the parameter repeated, or a comma-separated list.
    expect(await ids('?filter_exchange_id=KRAKEN&filter_exchange_id=BINANCE~hedge')).toEqual(['BINANCE~hedge', 'KRAKEN']);
    expect(await ids('?filter_exchange_id=KRAKEN,BINANCE~hedge')).toEqual(['BINANCE~hedge', 'KRAKEN']);
    expect(errorOf(await get(`${url}/v1/endpoints?filter_exchange_id=`), 400)).toMatch(/filter_exchange_id.*is empty/);
    expect(errorOf(await get(`${url}/v1/endpoints?filter_exchange_id=BINANCE=`), 400)).toMatch(
      /filter_exchange_id.*tag after "=" is empty/,
    );
    expect(check(validLocations, (await get(`${url}/v1/locations`)).json())).toEqual(SITES.locations);
    const pem = await get(`${url}/v1/certificate/pem`);
    expect([pem.status, pem.headers['content-type']]).toEqual([200, 'text/plain; charset=utf-8']);
    expect(pem.text).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it('refuses a sites file that is not right, naming the item', () => {
    const bad = (sites: unknown) => {
      writeFileSync(sitesPath, JSON.stringify(sites));
      return () => loadSites(sitesPath);
    };
    expect(bad({ locations: [] })).toThrow(/"endpoints" must be an array/);
    expect(bad({ ...SITES, endpoints: [{ ...SITES.endpoints[0], location_id: 'mars' }] })).toThrow(
      /endpoints\[0\]: location_id "mars" is not in "locations"/,
    );
    expect(bad({ ...SITES, endpoints: [{ ...SITES.endpoints[0], exchange_id: '/x' }] })).toThrow(/endpoints\[0\]: exchange_id "\/x"/);
    expect(bad({ ...SITES, locations: [{ location_id: 'a', region_name: 'b' }] })).toThrow(
      /locations\[0\]: "provider_name" must be a non-empty string/,
    );
    writeFileSync(sitesPath, '{');
    expect(() => loadSites(sitesPath)).toThrow(/is not valid/);
  });

  it('answers 404 {message} for the certificate when none was given', async () => {
    const url = await serve();
    expect(errorOf(await get(`${url}/v1/certificate/pem`), 404)).toMatch(/--client-pem/);
    expect(check(validEndpoints, (await get(`${url}/v1/endpoints`)).json())).toEqual([]);
  });
});

describe('startEms', () => {
  it('serves a database self-hosted, and refuses --tls-client-ca without --managed or TLS', async () => {
    const io = { out: () => {}, err: () => {} };
    await expect(startEms({ db: DB, port: 0, tlsClientCa: 'x.pem' }, io)).rejects.toThrow(/needs --tls-cert/);
    await expect(startEms({ db: DB, port: 0, tlsCert: 'a', tlsKey: 'b', tlsClientCa: 'x.pem' }, io)).rejects.toThrow(/add --managed/);
    const out: string[] = [];
    const ems = await startEms({ db: DB, port: 0 }, { out: (s) => out.push(s), err: () => {} });
    try {
      expect(out.join('')).toMatch(
        /xrate ems serve: listening on http:\/\/127\.0\.0\.1:\d+ \(database: .*self-hosted: no authentication\)/,
      );
      positionsOf(await get(`${ems.url}/v1/positions?exchange_id=BINANCE`));
    } finally {
      await ems.close();
    }
  });
});
