/**
 * A client generated at run time from each server's `/openapi.json` (swagger-client) calls every
 * operation of the rate service (over the demo database with xrate's own metrics) and of the EMS
 * gateway (managed, over the EMS worked example), with a key of the key store: each 200 answer is
 * validated against the operation's schema in the document (ajv, JSON Schema 2020-12), and each
 * family of operations answers its errors (400 naming a parameter, 401, 403, 429, 550, 490, 503)
 * with the bodies the document gives them.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmsApp } from '../../src/ems/server.js';
import { PositionSource } from '../../src/ems/positions.js';
import { ReplayStore } from '../../src/io/store.js';
import { KeyStore } from '../../src/http/keys.js';
import { DatabaseRateProvider } from '../../src/answers/index.js';
import { createService } from '../../src/service/server.js';
import { request, startServer, tempDir, type TestServer } from './helpers.js';
import { answerChecker, type Doc, demoDbWithMetrics, emsDb, operations, SITES } from './openapiHelpers.js';

interface SwaggerResponse {
  status: number;
  body: unknown;
  text: string;
  headers: Record<string, string>;
}
interface Client {
  execute(req: {
    operationId: string;
    parameters?: Record<string, unknown>;
    securities?: { authorized: Record<string, string> };
  }): Promise<SwaggerResponse>;
}
type SwaggerClientFactory = (opts: { url: string }) => Promise<Client>;
type Server = 'service' | 'ems';
/** The credentials of a call: the values of security schemes (none: no key). */
type Auth = Record<string, string>;

const PAIR = { asset_id_base: 'BTC', asset_id_quote: 'USD' };
const WINDOW = { time_start: '2024-03-01T05:00:00Z', time_end: '2024-03-01T05:02:00Z' };

/** The parameters each operation of the rate service is called with (every operation must have an entry). */
const SERVICE_CALLS: Record<string, Record<string, unknown>> = {
  getOpenApiDescription: {},
  getHealth: {},
  getReadiness: {},
  getPrometheusMetrics: {},
  getSpecificRate: { ...PAIR, time: '2024-03-01T05:00:00Z' },
  getAllCurrentRates: { asset_id_base: 'BTC', filter_asset_id: 'USD;EUR', invert: true },
  getTimeseriesPeriods: {},
  getTimeseriesData: { ...PAIR, period_id: '1MIN', ...WINDOW, limit: 5 },
  explainRate: PAIR,
  getChartPage: {},
  getChartJs: {},
  getChartCss: {},
  getUPlotIifeMinJs: {},
  getUPlotMinCss: {},
  getRateChart: { ...PAIR, ...WINDOW, period_id: '1MIN' },
  listMetrics: {},
  listExchangeMetrics: { exchange_id: 'BINANCE' },
  getExchangeMetricsCurrent: { exchange_id: 'BINANCE' },
  getExchangeMetricsCurrentById: { exchange_id: 'BINANCE' },
  getExchangeMetricHistory: { metric_id: 'XRATE_EXCHANGE_RANK', exchange_id: 'BINANCE', period_id: '1HRS' },
  listSymbolMetrics: { metric_id: 'XRATE_MARKET_SPREAD', exchange_id: 'BINANCE' },
  getSymbolMetricsCurrent: { symbol_id: 'BINANCE_SPOT_BTC_USDT' },
  getSymbolMetricsCurrentById: { symbol_id: 'BINANCE_SPOT_BTC_USDT', time_format: 'unix_millisec' },
  getSymbolMetricHistory: { metric_id: 'XRATE_MARKET_SPREAD', symbol_id: 'BINANCE_SPOT_BTC_USDT', period_id: '10MIN', limit: 3 },
  listAssetMetrics: { asset_id: 'BTC' },
  getAssetMetricsCurrent: { asset_id: 'BTC' },
  getAssetMetricsCurrentById: { asset_id: 'BTC' },
  getAssetMetricHistory: {
    metric_id: 'XRATE_ASSET_USD_RATE',
    exchange_id: 'XRATE',
    asset_id: 'BTC',
    period_id: '1HRS',
    time_format: 'unix_sec',
  },
  getMetricsByExchange: { exchange_id: 'BINANCE' },
  getMetricHistory: { metric_id: 'XRATE_EXCHANGE_RANK', exchange_id: 'BINANCE', period_id: '1HRS' },
  getMetricGroups: { groupby: 'symbol_id', metric_id: 'XRATE_MARKET_SPREAD', exchange_id: 'BINANCE', period_id: '1HRS' },
  listAllSymbols: { filter_asset_id: 'BTC' },
  getSymbolMapping: { exchange_id: 'BINANCE' },
  listExchangeSymbols: { exchange_id: 'KRAKEN' },
  listActiveSymbols: { exchange_id: 'BINANCE', filter_symbol_id: 'BINANCE_SPOT_' },
};

/** The same for the EMS gateway. */
const EMS_CALLS: Record<string, Record<string, unknown>> = {
  getOpenApiDescription: {},
  getOpenPositions: { exchange_id: 'BINANCE' },
  getApiEndpoints: { filter_exchange_id: ['BINANCE', 'KRAKEN~main'] },
  getSiteLocations: {},
  getAuthenticationCertificate: {},
};

const PEM = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUexample\n-----END CERTIFICATE-----\n';

const tmp = tempDir('xrate-openapi-client-');
let srv: TestServer;
let ems: { app: FastifyInstance; url: string; provider: DatabaseRateProvider; store: ReplayStore; keys: KeyStore };
/** The documents as served, a client made from each, and a validator of the answers against each. */
const docs = {} as Record<Server, Doc>;
const clients = {} as Record<Server, Client>;
const check = {} as Record<Server, ReturnType<typeof answerChecker>>;
/** A key of each server's key store, by the scheme that carries it. */
const auth = {} as Record<Server, Auth>;
let SwaggerClient: SwaggerClientFactory;

const urlOf = (app: FastifyInstance): string => {
  const addr = app.server.address();
  return `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
};

beforeAll(async () => {
  const [db, emsPath] = await Promise.all([demoDbWithMetrics(tmp.dir), emsDb(tmp.dir)]);
  srv = await startServer({ db, keysPath: join(tmp.dir, 'keys.sqlite') });
  const provider = await DatabaseRateProvider.open(emsPath);
  const store = ReplayStore.open(emsPath, { readonly: true });
  const keys = KeyStore.open(join(tmp.dir, 'ems-keys.sqlite'));
  const app = await createEmsApp({ positions: new PositionSource(provider, store), sites: SITES, clientPem: PEM, managed: { keys } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  ems = { app, url: urlOf(app), provider, store, keys };
  SwaggerClient = ((await import('swagger-client')) as { default: SwaggerClientFactory }).default;
  for (const [which, url] of [
    ['service', srv.url],
    ['ems', ems.url],
  ] as const) {
    docs[which] = (await request(`${url}/openapi.json`)).json() as Doc;
    clients[which] = await SwaggerClient({ url: `${url}/openapi.json` });
    check[which] = answerChecker(docs[which]);
  }
  auth.service = { ApiKeyHeader: srv.key({ name: 'client' }) };
  auth.ems = { ApiKeyQuery: keys.create({ name: 'client' }).key };
}, 120_000);

afterAll(async () => {
  await srv?.close();
  if (ems) {
    await ems.app.close();
    await ems.provider.close();
    ems.store.close();
    ems.keys.close();
  }
  tmp.remove();
});

/** Runs an operation of `which` with `creds` (null: no key); an error status is returned as the response (swagger-client rejects it). */
async function call(which: Server, operationId: string, parameters: Record<string, unknown>, creds: Auth | null): Promise<SwaggerResponse> {
  const securities = { authorized: creds ?? {} };
  return clients[which].execute({ operationId, parameters, securities }).catch((e: { response?: SwaggerResponse }) => {
    if (!e.response) throw e;
    return e.response;
  });
}

/** The path of an operation of `doc`. */
function pathOf(doc: Doc, operationId: string): string {
  const found = operations(doc).find(({ op }) => op.operationId === operationId);
  if (!found) throw new Error(`no operation ${operationId}`);
  return found.path;
}

/**
 * Calls `operationId` of `which` expecting `status`; the answer validated against the response of
 * that status in the served document (its media type, and a JSON body against its schema).
 */
async function expectAnswer(
  which: Server,
  operationId: string,
  parameters: Record<string, unknown>,
  status: number,
  creds: Auth | null = auth[which],
): Promise<SwaggerResponse> {
  const res = await call(which, operationId, parameters, creds);
  expect(res.status, res.text.slice(0, 400)).toBe(status);
  const path = pathOf(docs[which], operationId);
  const content = docs[which].paths[path].get.responses[status]?.content;
  expect(content, `${operationId} declares no ${status}`).toBeDefined();
  const media = Object.keys(content!)[0];
  expect(res.headers['content-type']).toMatch(new RegExp(`^${media.replace('/', '\\/')}`));
  if (media === 'application/json') check[which](path, status, media, res.body);
  return res;
}

/** A 400 whose message names `param`. */
async function expectNamed(which: Server, operationId: string, parameters: Record<string, unknown>, param: string): Promise<void> {
  const res = await expectAnswer(which, operationId, parameters, 400);
  expect((res.body as { message: string }).message).toContain(`'${param}'`);
}

describe('every operation of the rate service, through a client generated from /openapi.json', () => {
  it('the document lists exactly the operations called here', () => {
    expect(
      operations(docs.service)
        .map(({ op }) => op.operationId)
        .sort(),
    ).toEqual(Object.keys(SERVICE_CALLS).sort());
  });

  it.each(Object.keys(SERVICE_CALLS))('%s answers 200 as its schema says', async (operationId) => {
    const res = await expectAnswer('service', operationId, SERVICE_CALLS[operationId], 200);
    if (Array.isArray(res.body)) expect(res.body.length, operationId).toBeGreaterThan(0);
  });
});

describe('every operation of the EMS gateway (managed), through a client generated from /openapi.json', () => {
  it('the document lists exactly the operations called here', () => {
    expect(
      operations(docs.ems)
        .map(({ op }) => op.operationId)
        .sort(),
    ).toEqual(Object.keys(EMS_CALLS).sort());
  });

  it.each(Object.keys(EMS_CALLS))('%s answers 200 as its schema says', async (operationId) => {
    const res = await expectAnswer('ems', operationId, EMS_CALLS[operationId], 200);
    if (Array.isArray(res.body)) expect(res.body.length, operationId).toBeGreaterThan(0);
  });

  it('positions at an earlier tick (the time extension), every account', async () => {
    const res = await expectAnswer('ems', 'getOpenPositions', { time: '2024-03-01T00:00:03Z' }, 200);
    expect((res.body as { exchange_id: string }[]).map((a) => a.exchange_id)).toEqual(['BINANCE', 'BINANCE~hedge', 'KRAKEN', 'OKX']);
  });
});

describe('errors of each family of operations, as the document gives them', () => {
  it('exchange rates: 400 naming the parameter, 401, 403, 429, 550', async () => {
    await expectNamed('service', 'getTimeseriesData', { ...PAIR, ...WINDOW, period_id: '1MTH' }, 'period_id');
    await expectNamed('service', 'getAllCurrentRates', { asset_id_base: 'BTC', invert: 'maybe' }, 'invert');
    await expectNamed('service', 'getTimeseriesPeriods', { output_format: 'yaml' }, 'output_format');
    await expectAnswer('service', 'getSpecificRate', PAIR, 401, null);
    await expectAnswer('service', 'getSpecificRate', { asset_id_base: 'BTC', asset_id_quote: 'NOPE' }, 550);
    await expectAnswer('service', 'getAllCurrentRates', { asset_id_base: 'BTC' }, 403, { ApiKeyHeader: srv.key({ rights: ['rate'] }) });
    const once = { ApiKeyQuery: srv.key({ limit: 1 }) };
    await expectAnswer('service', 'getTimeseriesPeriods', {}, 200, once);
    await expectAnswer('service', 'getTimeseriesPeriods', {}, 429, once);
  });

  it('metrics: 400 naming the parameter, 401, 550', async () => {
    await expectNamed('service', 'getExchangeMetricsCurrent', { exchange_id: 'BINANCE', time_format: 'unix' }, 'time_format');
    await expectNamed(
      'service',
      'getMetricGroups',
      { groupby: 'chain_id', metric_id: 'XRATE_EXCHANGE_RANK', exchange_id: 'BINANCE' },
      'groupby',
    );
    // One of several ids required: OpenAPI says it in words and in x-xrate-required-one-of; the answer names them all.
    const oneOf = await expectAnswer('service', 'getMetricHistory', { metric_id: 'XRATE_EXCHANGE_RANK' }, 400);
    expect((oneOf.body as { message: string }).message).toBe(
      "Missing required parameter: one of 'symbol_id', 'asset_id' or 'exchange_id' must be given",
    );
    await expectNamed('service', 'getSymbolMetricHistory', { metric_id: 'X', symbol_id: 'Y', limit: 0 }, 'limit');
    await expectAnswer('service', 'listMetrics', {}, 401, null);
    await expectAnswer('service', 'getExchangeMetricHistory', { metric_id: 'NOPE', exchange_id: 'BINANCE' }, 550);
  });

  it('symbols: 400 naming the parameter, 401, 550', async () => {
    await expectNamed('service', 'listAllSymbols', { time: 'yesterday' }, 'time');
    await expectAnswer('service', 'getSymbolMapping', { exchange_id: 'BINANCE' }, 401, null);
    await expectAnswer('service', 'listActiveSymbols', { exchange_id: 'BINANCE', time: '2024-03-01T03:00:00Z' }, 550);
  });

  it('extensions: 400 naming the parameter, 401, 550', async () => {
    await expectNamed('service', 'getRateChart', { ...PAIR, period_id: '1MTH' }, 'period_id');
    await expectNamed('service', 'getRateChart', { ...PAIR, points: 10 }, 'points');
    // Over 7200 ticks: by period, with each market's weight share (the database has xrate's own metrics).
    const long = { ...PAIR, time_start: '2024-03-01T02:30:00Z', time_end: '2024-03-01T05:30:00Z', points: 400 };
    const byPeriod = (await expectAnswer('service', 'getRateChart', long, 200)).body as { resolution: string; weight_share: unknown[] };
    expect([byPeriod.resolution, byPeriod.weight_share.length]).toEqual(['30SEC', 4]);
    await expectNamed('service', 'explainRate', { ...PAIR, time: 'soon' }, 'time');
    await expectAnswer('service', 'explainRate', PAIR, 401, null);
    await expectAnswer('service', 'explainRate', { ...PAIR, time: '2024-03-01T03:00:00Z' }, 550);
  });

  it('operations: /readyz 503 while not ready', async () => {
    const keys = KeyStore.open(join(tmp.dir, 'not-ready-keys.sqlite'));
    const app = await createService({
      provider: srv.provider,
      keys,
      ops: { readiness: () => ({ ready: false, message: 'Not ready: testing' }) },
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const client = await SwaggerClient({ url: `${urlOf(app)}/openapi.json` });
      const res = await client.execute({ operationId: 'getReadiness' }).catch((e: { response: SwaggerResponse }) => e.response);
      expect(res.status).toBe(503);
      check.service('/readyz', 503, 'application/json', res.body);
      expect(res.body).toEqual({ message: 'Not ready: testing' });
    } finally {
      await app.close();
      keys.close();
    }
  });

  it('EMS: 400 naming the parameter, 401, 490 (MessageReject), 550', async () => {
    await expectNamed('ems', 'getOpenPositions', { exchange_id: '~hedge' }, 'exchange_id');
    await expectNamed('ems', 'getApiEndpoints', { filter_exchange_id: ['BINANCE~'] }, 'filter_exchange_id');
    for (const op of Object.keys(EMS_CALLS).filter((o) => o !== 'getOpenApiDescription'))
      await expectAnswer('ems', op, EMS_CALLS[op], 401, null);
    const reject = await expectAnswer('ems', 'getOpenPositions', {}, 490);
    expect(reject.body).toMatchObject({ type: 'MESSAGE_REJECT', reject_reason: 'EXCHANGE_UNREACHABLE', exchange_id: 'KRAKEN' });
    await expectAnswer('ems', 'getOpenPositions', { time: '2024-02-01T00:00:00Z' }, 550);
  });
});
