/**
 * A spec-driven client (swagger-client, from the interface's OpenAPI file) calls each of the four
 * operations against the service and gets typed results that match the schemas.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoDb, expectSchema, PATHS, SPEC_PATH, startServer, tempDir, type TestServer } from './helpers.js';

interface SwaggerResponse {
  status: number;
  ok: boolean;
  body: unknown;
  headers: Record<string, string>;
}
interface SwaggerClientInstance {
  execute(req: { pathName: string; method: string; parameters?: Record<string, unknown> }): Promise<SwaggerResponse>;
  apis: Record<string, Record<string, (params: Record<string, unknown>) => Promise<SwaggerResponse>>>;
}
type SwaggerClientFactory = (opts: { spec: unknown; authorizations?: Record<string, string> }) => Promise<SwaggerClientInstance>;

let tmp: ReturnType<typeof tempDir>;
let srv: TestServer;
let client: SwaggerClientInstance;

beforeAll(async () => {
  tmp = tempDir();
  const db = await demoDb(tmp.dir);
  srv = await startServer({ db, keysPath: join(tmp.dir, 'keys.sqlite') });
  const key = srv.key({ name: 'swagger' });
  const spec = JSON.parse(readFileSync(SPEC_PATH, 'utf8')) as { servers: { url: string }[] };
  spec.servers = [{ url: srv.url }];
  const SwaggerClient = ((await import('swagger-client')) as { default: SwaggerClientFactory }).default;
  client = await SwaggerClient({ spec, authorizations: { ApiKey: key } });
});

afterAll(async () => {
  await srv?.close();
  tmp?.remove();
});

describe('swagger-client over the interface spec', () => {
  it('Get specific rate (by operationId)', async () => {
    const op = Object.values(client.apis)
      .map((a) => Object.entries(a).find(([name]) => /specific/i.test(name)))
      .find(Boolean);
    expect(op, Object.keys(client.apis).join(',')).toBeDefined();
    const res = await op![1]({ asset_id_base: 'BTC', asset_id_quote: 'USD', time: '2024-03-01T05:00:00Z' });
    expect(res.status).toBe(200);
    expectSchema(PATHS.rate, res.body);
    const b = res.body as { rate: number; time: string; asset_id_base: string };
    expect(typeof b.rate).toBe('number');
    expect(b.asset_id_base).toBe('BTC');
    expect(b.time < '2024-03-01T05:00:01').toBe(true);
  });

  it('Get all current rates', async () => {
    const res = await client.execute({
      pathName: PATHS.rates,
      method: 'get',
      parameters: { asset_id_base: 'BTC', filter_asset_id: 'USD;EUR', invert: true },
    });
    expect(res.status).toBe(200);
    expectSchema(PATHS.rates, res.body);
    const b = res.body as { asset_id_base: string; rates: { asset_id_quote: string; rate: number }[] };
    expect(b.rates.map((r) => r.asset_id_quote)).toEqual(['EUR', 'USD']);
    expect(b.rates.every((r) => typeof r.rate === 'number' && r.rate < 1)).toBe(true);
  });

  it('Timeseries periods', async () => {
    const res = await client.execute({ pathName: PATHS.periods, method: 'get' });
    expect(res.status).toBe(200);
    expectSchema(PATHS.periods, res.body);
    expect((res.body as unknown[]).length).toBe(33);
  });

  it('Timeseries data', async () => {
    const res = await client.execute({
      pathName: PATHS.history,
      method: 'get',
      parameters: {
        asset_id_base: 'BTC',
        asset_id_quote: 'USD',
        period_id: '1MIN',
        time_start: '2024-03-01T05:00:00Z',
        time_end: '2024-03-01T05:10:00Z',
        limit: 5,
      },
    });
    expect(res.status).toBe(200);
    expectSchema(PATHS.history, res.body);
    const items = res.body as { time_period_start: string; rate_close: number }[];
    expect(items.length).toBe(5);
    expect(items[0].time_period_start).toBe('2024-03-01T05:00:00.0000000Z');
    expect(typeof items[0].rate_close).toBe('number');
    expect(res.headers['x-ratelimit-request-cost']).toBe('1');
  });

  it('errors reach the client as JSON with a message', async () => {
    const res = await client
      .execute({ pathName: PATHS.rate, method: 'get', parameters: { asset_id_base: 'BTC', asset_id_quote: 'NOPE' } })
      .catch((e: { response: SwaggerResponse }) => e.response);
    expect(res.status).toBe(550);
    expect((res.body as { message: string }).message).toMatch(/NOPE/);
  });
});
