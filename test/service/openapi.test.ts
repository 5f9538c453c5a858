/**
 * The descriptions served at `GET /openapi.json` by the rate service and the EMS gateway: valid
 * OpenAPI 3.1 (@readme/openapi-parser), one operation for every route fastify registered (an
 * onRoute hook on every app the tests create: no route missing, none extra), the interface's
 * authentication methods, rights, parameters and errors; and every declared-required parameter,
 * when absent, a 400 naming it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEmsApp } from '../../src/ems/server.js';
import { PositionSource } from '../../src/ems/positions.js';
import { OWN_METRICS } from '../../src/core/engine/ownMetrics.js';
import { ReplayStore } from '../../src/io/store.js';
import { missingOneOf } from '../../src/http/errors.js';
import { KeyStore } from '../../src/http/keys.js';
import { answerMetrics } from '../../src/service/metrics.js';
import { DatabaseRateProvider } from '../../src/answers/index.js';
import { createService } from '../../src/service/server.js';
import { demoDb, tempDir } from './helpers.js';
import { type Doc, fillPath, operations, ownParams, SAMPLE, SITES } from './openapiHelpers.js';

/** The routes fastify registered on each app, as its onRoute hook saw them. */
const seen = vi.hoisted(() => ({ routes: new Map<object, { method: string; url: string }[]>() }));

vi.mock('fastify', async (importOriginal) => {
  const mod = await importOriginal<typeof import('fastify')>();
  const create = mod.default as unknown as (opts?: object) => FastifyInstance;
  const tracked = Object.assign((opts?: object) => {
    const app = create(opts);
    const routes: { method: string; url: string }[] = [];
    seen.routes.set(app, routes);
    app.addHook('onRoute', (r) => {
      for (const method of [r.method].flat()) routes.push({ method: String(method), url: r.url });
    });
    return app;
  }, create);
  return { ...mod, default: tracked, fastify: tracked };
});

const tmp = tempDir('xrate-openapi-');
let provider: DatabaseRateProvider;
let store: ReplayStore;
let keys: KeyStore;
let key: string;
let tls: { cert: string; key: string; ca: string };
const apps: FastifyInstance[] = [];

beforeAll(async () => {
  const db = await demoDb(tmp.dir);
  provider = await DatabaseRateProvider.open(db);
  store = ReplayStore.open(db, { readonly: true });
  keys = KeyStore.open(join(tmp.dir, 'keys.sqlite'));
  key = keys.create({ name: 'openapi' }).key;
  const p = (n: string) => join(tmp.dir, n);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  execFileSync('openssl', ['req', '-x509', ...ec, '-keyout', p('tls.key'), '-out', p('tls.crt'), '-subj', '/CN=localhost', '-days', '2'], {
    stdio: 'pipe',
  });
  const cert = readFileSync(p('tls.crt'), 'utf8');
  tls = { cert, key: readFileSync(p('tls.key'), 'utf8'), ca: cert };
}, 60_000);

afterAll(async () => {
  for (const a of apps) await a.close();
  keys?.close();
  store?.close();
  await provider?.close();
  tmp.remove();
});

async function service(): Promise<FastifyInstance> {
  const app = await createService({ provider, keys, metrics: provider.metrics(OWN_METRICS) });
  apps.push(app);
  return app;
}

async function gateway(mode: 'self-hosted' | 'managed' | 'managed-tls'): Promise<FastifyInstance> {
  const app = await createEmsApp({
    positions: new PositionSource(provider, store),
    sites: SITES,
    clientPem: tls.cert,
    ...(mode !== 'self-hosted' && { managed: { keys } }),
    ...(mode === 'managed-tls' && { tls }),
  });
  apps.push(app);
  return app;
}

/** The document an app serves (checked valid OpenAPI 3.1, with no warning). */
async function described(app: FastifyInstance): Promise<Doc> {
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const doc = JSON.parse(res.body) as Doc;
  const result = await validate(structuredClone(doc) as never);
  if (!result.valid) throw new Error(compileErrors(result));
  expect(result.warnings).toEqual([]);
  expect(doc.openapi).toBe('3.1.0');
  return doc;
}

/** The GET routes fastify registered on `app` (fastify syntax), each HEAD being the twin of one. */
function registeredGets(app: FastifyInstance): string[] {
  const routes = seen.routes.get(app);
  if (!routes) throw new Error('the app was not created through the tracked fastify');
  const gets = routes.filter((r) => r.method === 'GET').map((r) => r.url);
  expect(routes.filter((r) => r.method !== 'GET' && r.method !== 'HEAD')).toEqual([]);
  expect(routes.filter((r) => r.method === 'HEAD').map((r) => r.url)).toEqual(gets);
  return gets;
}

/** A document's paths in fastify's syntax. */
const docRoutes = (doc: Doc): string[] => Object.keys(doc.paths).map((p) => p.replace(/\{([a-z_]+)\}/g, ':$1'));

describe('every route registered is described, and nothing else', () => {
  it('the rate service (exchange rates, metrics, symbols, extensions, the page, operations, the description)', async () => {
    const app = await service();
    const doc = await described(app);
    const gets = registeredGets(app);
    expect(gets.length).toBeGreaterThan(30);
    expect(docRoutes(doc).sort()).toEqual([...gets].sort());
    for (const path of ['/v1/metrics/group', '/v1/symbols/{exchange_id}/active', '/metrics', '/readyz', '/', '/openapi.json'])
      expect(Object.keys(doc.paths)).toContain(path);
  });

  it('the EMS gateway, self-hosted and managed', async () => {
    for (const mode of ['self-hosted', 'managed', 'managed-tls'] as const) {
      const app = await gateway(mode);
      const doc = await described(app);
      const gets = registeredGets(app);
      expect(docRoutes(doc).sort()).toEqual([...gets].sort());
      expect(Object.keys(doc.paths).sort()).toEqual([
        '/openapi.json',
        '/v1/certificate/pem',
        '/v1/endpoints',
        '/v1/locations',
        '/v1/positions',
      ]);
    }
  });
});

describe('the rate service description', () => {
  let doc: Doc;
  beforeAll(async () => {
    doc = await described(await service());
  });

  it('names the interface’s key methods as security schemes, and the APIKEY- path segment in words', () => {
    const s = doc.components.securitySchemes!;
    expect(s.ApiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-CoinAPI-Key' });
    expect(s.ServiceKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Service-Key' });
    expect(s.ApiKeyQuery).toMatchObject({ type: 'apiKey', in: 'query', name: 'apikey' });
    expect(s.AuthorizationKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
    expect(s.BasicAuth).toMatchObject({ type: 'http', scheme: 'basic' });
    expect(s.BearerJwt).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(doc.info.description).toMatch(/APIKEY-<key>/);
  });

  it('routes with a right need a key and answer 401, 403, 429; open routes need none', () => {
    for (const { path, op } of operations(doc)) {
      const right = op['x-xrate-right'];
      if (right === undefined) {
        expect(op.security, path).toEqual([]);
        expect(Object.keys(op.responses), path).not.toContain('401');
        continue;
      }
      expect(op.security.length, path).toBeGreaterThan(0);
      for (const status of ['200', '400', '401', '403', '429', '503']) expect(Object.keys(op.responses), path).toContain(status);
      expect(op.responses['401'].content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    const open = operations(doc).filter(({ op }) => op['x-xrate-right'] === undefined);
    expect(open.map((o) => o.path).sort()).toEqual(
      [
        '/',
        '/healthz',
        '/metrics',
        '/openapi.json',
        '/readyz',
        '/ui/chart.css',
        '/ui/chart.js',
        '/ui/favicon.svg',
        '/ui/helpers.js',
        '/ui/panel.js',
        '/ui/uPlot.iife.min.js',
        '/ui/uPlot.min.css',
      ].sort(),
    );
    expect(doc.paths['/v1/exchangerate/{asset_id_base}/{asset_id_quote}/history'].get['x-xrate-right']).toBe('history');
    expect(doc.paths['/readyz'].get.responses['503'].content?.['application/json'].schema).toEqual({
      $ref: '#/components/schemas/NotReady',
    });
  });

  it('parameters carry their place, type, requiredness, enums, bounds and defaults', () => {
    const history = ownParams(doc.paths['/v1/exchangerate/{asset_id_base}/{asset_id_quote}/history'].get);
    const byName = Object.fromEntries(history.map((p) => [p.name, p]));
    expect(byName.asset_id_base).toMatchObject({ in: 'path', required: true });
    expect(byName.period_id).toMatchObject({ in: 'query', required: true });
    expect(byName.period_id.schema.enum).toHaveLength(33);
    expect(byName.time_start.required).toBe(true);
    expect(byName.time_end.required).toBe(true);
    expect(byName.limit.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100000, default: 100 });
    const rates = ownParams(doc.paths['/v1/exchangerate/{asset_id_base}'].get);
    expect(rates.find((p) => p.name === 'invert')?.schema).toEqual({ type: 'boolean', default: false });
    const formats = doc.paths['/v1/exchangerate/{asset_id_base}'].get.parameters!.filter((p) => '$ref' in p);
    expect(formats).toContainEqual({ $ref: '#/components/parameters/output_format' });
    const group = ownParams(doc.paths['/v1/metrics/group'].get);
    expect(group.find((p) => p.name === 'groupby')).toMatchObject({
      required: true,
      schema: { enum: ['symbol_id', 'asset_id', 'exchange_id', 'metric_id'] },
    });
    const content = doc.paths['/v1/symbols'].get.responses['200'].content!;
    expect(Object.keys(content)).toEqual(['application/json', 'application/xml', 'text/csv', 'application/x-msgpack']);
  });

  it('answers the same bytes each time, with no key', async () => {
    const app = await service();
    const a = await app.inject({ method: 'GET', url: '/openapi.json' });
    const b = await app.inject({ method: 'GET', url: '/openapi.json?apikey=nope' });
    expect(a.statusCode).toBe(200);
    expect(b.body).toBe(a.body);
  });
});

describe('the EMS gateway description', () => {
  it('self-hosted: no security; managed: key header, query and, with a client CA, mutual TLS', async () => {
    const selfHosted = await described(await gateway('self-hosted'));
    expect(selfHosted.components.securitySchemes).toBeUndefined();
    for (const { op } of operations(selfHosted)) expect(op.security).toEqual([]);
    const managed = await described(await gateway('managed'));
    expect(Object.keys(managed.components.securitySchemes!)).toEqual(['ApiKeyHeader', 'ServiceKeyHeader', 'ApiKeyQuery']);
    const withCa = await described(await gateway('managed-tls'));
    expect(withCa.components.securitySchemes!.MutualTls).toMatchObject({ type: 'mutualTLS' });
    const positions = withCa.paths['/v1/positions'].get;
    expect(positions.security).toContainEqual({ MutualTls: [] });
    expect(positions.responses['490'].content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/MessageReject' });
    expect(ownParams(positions).map((p) => p.name)).toEqual(['exchange_id', 'time']);
    expect(withCa.paths['/openapi.json'].get.security).toEqual([]);
  });

  it('managed: /openapi.json needs no key, the other routes do', async () => {
    const app = await gateway('managed');
    expect((await app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/v1/locations' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/v1/locations', headers: { 'x-coinapi-key': key } })).statusCode).toBe(200);
  });
});

describe('declared-required parameters', () => {
  it('absent (or empty), each is a 400 naming it, on every operation that declares one; a one-of group none of whose members is given, a 400 naming them', async () => {
    const app = await service();
    const doc = await described(app);
    let checked = 0;
    let groups = 0;
    for (const { path, op } of operations(doc)) {
      const query = ownParams(op).filter((p) => p.in === 'query');
      const oneOf = (op as { 'x-xrate-required-one-of'?: string[][] })['x-xrate-required-one-of'] ?? [];
      // What a request needs: every required parameter, and the first member of each group.
      const needed = [...query.filter((p) => p.required).map((p) => p.name), ...oneOf.map((g) => g[0])];
      const get = (params: string[], empty?: string) => {
        const q = [...params.map((n) => `${n}=${encodeURIComponent(SAMPLE[n])}`), ...(empty ? [`${empty}=`] : [])].join('&');
        return app.inject({ method: 'GET', url: `${fillPath(path)}?${q}`, headers: { 'x-coinapi-key': key } });
      };
      const messageOf = (res: { statusCode: number; body: string }, what: string): string => {
        expect(res.statusCode, `${path} ${what}`).toBe(400);
        return (JSON.parse(res.body) as { message: string }).message;
      };
      for (const p of query.filter((x) => x.required)) {
        const others = needed.filter((n) => n !== p.name);
        for (const empty of [undefined, p.name]) {
          expect(messageOf(await get(others, empty), p.name)).toMatch(new RegExp(`^Missing required parameter '${p.name}'`));
          checked++;
        }
      }
      for (const group of oneOf) {
        const message = messageOf(await get(needed.filter((n) => n !== group[0])), group.join(','));
        expect(message).toBe(missingOneOf(group).message);
        for (const n of group) expect(ownParams(op).find((x) => x.name === n)?.required).toBe(false);
        groups++;
      }
      if (needed.length > 0) expect((await get(needed)).body).not.toMatch(/Missing required parameter/);
    }
    // history (3), exchange listing and current (1 each), the scope histories (2, 2, 3), history (1), group (2); twice each.
    expect(checked).toBe(2 * 15);
    // symbol listing and current, history, group.
    expect(groups).toBe(4);
  });

  it('the CLI’s answers from the route tables check them too', () => {
    const metrics = provider.metrics(OWN_METRICS);
    expect(() => answerMetrics(metrics, '/v1/metrics/group', { metric_id: 'X', asset_id: 'BTC' })).toThrow(
      /^Missing required parameter 'groupby'/,
    );
    expect(() => answerMetrics(metrics, '/v1/metrics/exchange/current', { metric_id: 'X' })).toThrow(
      /^Missing required parameter 'exchange_id'/,
    );
    expect(() => answerMetrics(metrics, '/v1/metrics/symbol/listing', {})).toThrow(/one of 'exchange_id' or 'symbol_id' must be given$/);
  });
});
