/**
 * Keys and limits in Redis, shared by replicas (two apps over one real `redis-server`): the same
 * headers and costs as with SQLite, a quota of N granted exactly N times over two replicas under
 * concurrent requests, the concurrency limit across replicas (and a vanished replica's requests
 * no longer counting), revocation on every replica, usage surviving a replica's restart, and 503
 * while Redis is away, recovering when it is back.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { formatTime } from '../../src/core/time.js';
import { OWN_METRICS } from '../../src/core/engine/ownMetrics.js';
import { type CreateKeyOptions, hashKey } from '../../src/http/keys.js';
import type { RateProvider } from '../../src/answers/index.js';
import { RedisKeyStore } from '../../src/http/redisKeys.js';
import { LIMITS_UNREACHABLE } from '../../src/service/redisLimits.js';
import { createService } from '../../src/service/server.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { demoProvider, eventually, expectError, Gate, GatedHistory, limitsOf, request, type Res, startServer, tempDir } from './helpers.js';

const demo = demoProvider();
const clock = Date.UTC(2026, 0, 1, 12, 0, 0, 250);
const RATE = '/v1/exchangerate/BTC/USD';
const HIST = '/v1/exchangerate/BTC/USD/history?period_id=1SEC&time_start=2024-03-01T05:00:00Z&time_end=2024-03-01T05:10:00Z';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => redis?.stop());

interface Replica {
  url: string;
  keys: RedisKeyStore;
  key(opts?: CreateKeyOptions): Promise<string>;
  get(path: string, headers?: Record<string, string>): Promise<Res>;
  close(): Promise<void>;
}

/** One replica: an app with its own connection to the shared Redis. */
async function replica(
  opts: { url?: string; provider?: RateProvider; now?: () => number; replicaTtlMs?: number; heavyConcurrency?: number } = {},
): Promise<Replica> {
  const keys = await RedisKeyStore.open(opts.url ?? redis.url);
  const provider = opts.provider ?? demo.provider;
  const app = await createService({
    provider,
    keys,
    now: opts.now ?? (() => clock),
    replicaTtlMs: opts.replicaTtlMs,
    heavyConcurrency: opts.heavyConcurrency,
    metrics: demo.provider.metrics(OWN_METRICS),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return {
    url,
    keys,
    key: async (o) => (await keys.create(o))!.key,
    get: (path, headers) => request(url + path, { headers }),
    async close() {
      await app.close();
      await keys.close();
    },
  };
}

describe('headers and costs as with SQLite', () => {
  it('every authenticated response carries the limit headers; errors cost 1, refusals 0', async () => {
    const a = await replica();
    try {
      const key = await a.key({ limit: 1000, concurrency: 7 });
      const H = { 'X-CoinAPI-Key': key };
      const sec = Math.floor(clock / 1000);
      let r = await a.get(RATE, H);
      expect(r.status).toBe(200);
      expect(limitsOf(r)).toEqual({
        used: '1',
        limit: '1000',
        remaining: '999',
        cost: '1',
        reset: formatTime((sec + 86_400) * 1_000_000),
        overage: 'DISABLED',
        climit: '7',
        cremaining: '6',
      });
      r = await a.get('/v1/exchangerate/BTC/USD?time=bad', H);
      expectError(r, 400);
      expect(limitsOf(r)).toMatchObject({ used: '2', remaining: '998', cost: '1', climit: '7' });
      r = await a.get('/v1/exchangerate/BTC/NOPE', H);
      expectError(r, 550);
      expect(limitsOf(r)).toMatchObject({ used: '3', cost: '1' });
      const noHistory = await a.key({ rights: ['rate'] });
      r = await a.get(HIST, { 'X-CoinAPI-Key': noHistory });
      expectError(r, 403);
      expect(limitsOf(r)).toMatchObject({ used: '0', remaining: '1000000', cost: '0', reset: formatTime(Math.floor(clock) * 1000) });
      r = await a.get('/v1/exchangerate/history/periods', H);
      expect(limitsOf(r)).toMatchObject({ used: '4', cost: '1' });
      r = await a.get(`${HIST}&limit=250`, H);
      expect((r.json() as unknown[]).length).toBe(250);
      expect(limitsOf(r)).toMatchObject({ cost: '3', used: '7' });
      r = await a.get('/v1/metrics/listing', H);
      expect(r.status).toBe(200);
      expect(limitsOf(r)).toMatchObject({ cost: '1', used: '8' });
      r = await a.get('/nothing/here', H);
      expectError(r, 404);
      expect(r.headers['x-ratelimit-request-cost']).toBe('0');
      expectError(await a.get(RATE, { 'X-CoinAPI-Key': '00000000-0000-0000-0000-000000000000' }), 401);
    } finally {
      await a.close();
    }
  });

  it('a charge past the limit turns the answer into its 429 (charged nothing); overage goes negative', async () => {
    const a = await replica();
    try {
      const H = { 'X-CoinAPI-Key': await a.key({ limit: 5 }) };
      expect((await a.get(RATE, H)).status).toBe(200);
      expect((await a.get(RATE, H)).status).toBe(200);
      let r = await a.get(`${HIST}&limit=400`, H);
      expect(expectError(r, 429)).toBe('Request limit exceeded: 2 of 5 used in the last 24 hours and this request costs 4');
      expect(limitsOf(r)).toMatchObject({ used: '2', remaining: '3', cost: '0' });
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      r = await a.get(`${HIST}&limit=300`, { ...H, 'Accept-Encoding': 'gzip' });
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBe('gzip');
      expect(limitsOf(r)).toMatchObject({ used: '5', remaining: '0', cost: '3' });
      r = await a.get(RATE, H);
      expect(expectError(r, 429)).toMatch(/Request limit exceeded: 5 of 5/);
      expect(Number(r.headers['retry-after'])).toBe(86_400);
      const O = { 'X-CoinAPI-Key': await a.key({ limit: 2, overage: true }) };
      for (let i = 0; i < 3; i++) r = await a.get(RATE, O);
      expect(limitsOf(r)).toMatchObject({ used: '3', limit: '2', remaining: '-1', overage: 'ENABLED' });
    } finally {
      await a.close();
    }
  });

  it('property: the same requests at the same clock give the same status and headers as the SQLite limiter', async () => {
    const tmp = tempDir();
    let t = clock;
    const a = await replica({ now: () => t });
    const local = await startServer({ provider: demo.provider, keysPath: join(tmp.dir, 'keys.sqlite'), now: () => t });
    try {
      // Steps: a clock move (back a little, or forward up to a day) and a request costing 1..6.
      const step = fc.record({
        moveMs: fc.oneof(
          fc.integer({ min: -3000, max: 0 }),
          fc.integer({ min: 0, max: 3_600_000 }),
          fc.integer({ min: 0, max: 86_400_000 }),
        ),
        cost: fc.integer({ min: 0, max: 6 }),
      });
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 12 }),
          fc.boolean(),
          fc.array(step, { minLength: 1, maxLength: 25 }),
          async (limit, overage, steps) => {
            t = clock;
            const opts = { limit, overage, concurrency: 5 };
            const HR = { 'X-CoinAPI-Key': await a.key(opts) };
            const HL = { 'X-CoinAPI-Key': local.key(opts) };
            for (const s of steps) {
              t += s.moveMs;
              const path = s.cost === 0 ? RATE : `${HIST}&limit=${s.cost * 100}`;
              const [r, l] = [await a.get(path, HR), await local.get(path, HL)];
              expect(r.status).toBe(l.status);
              expect(limitsOf(r)).toEqual(limitsOf(l));
              expect(r.headers['retry-after']).toBe(l.headers['retry-after']);
              if (r.status !== 200) expect(r.json()).toEqual(l.json());
            }
          },
        ),
        { seed: 1313, numRuns: 25 },
      );
    } finally {
      await a.close();
      await local.close(true);
      local.keys.close();
      tmp.remove();
    }
  });
});

describe('what Redis holds', () => {
  it('the key hashed, never in clear; usage that expires a day after its newest second', async () => {
    const a = await replica();
    const raw = new Redis(redis.url);
    try {
      const key = await a.key({ name: 'stored' });
      expect((await a.get(RATE, { 'X-CoinAPI-Key': key })).status).toBe(200);
      const id = Number(await raw.hget('xrate:keys:byhash', hashKey(key)));
      expect(await raw.hgetall(`xrate:key:${id}`)).toMatchObject({ name: 'stored', key_hash: hashKey(key), key_prefix: key.slice(0, 8) });
      for (const k of await raw.keys('xrate:*')) {
        const type = await raw.type(k);
        const dump = type === 'hash' ? JSON.stringify(await raw.hgetall(k)) : type === 'set' ? JSON.stringify(await raw.smembers(k)) : '';
        expect(dump).not.toContain(key);
        expect(k).not.toContain(key);
      }
      for (const k of [`xrate:usage:${id}`, `xrate:useq:${id}`]) {
        const ttl = await raw.ttl(k);
        expect(ttl).toBeGreaterThan(86_400);
        expect(ttl).toBeLessThanOrEqual(86_460);
      }
    } finally {
      raw.disconnect();
      await a.close();
    }
  });
});

describe('shared by replicas', () => {
  it('a quota of N over two replicas grants exactly N under concurrent requests', async () => {
    const a = await replica();
    const b = await replica();
    try {
      const key = await a.key({ limit: 50, concurrency: 1000 });
      await b.keys.reload();
      const H = { 'X-CoinAPI-Key': key };
      const res = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).get(RATE, H)));
      expect(res.filter((r) => r.status === 200).length).toBe(50);
      expect(res.filter((r) => r.status === 429).length).toBe(30);
      expect(Math.max(...res.map((r) => Number(r.headers['x-ratelimit-used'])))).toBe(50);
      for (const r of res.filter((x) => x.status === 429)) expect(expectError(r, 429)).toMatch(/Request limit exceeded: 50 of 50/);
      // Every request admitted before any is charged: the charges race, and still exactly N pass.
      const gate = new Gate();
      const ga = await replica({ provider: new GatedHistory(demo.provider, gate) });
      const gb = await replica({ provider: new GatedHistory(demo.provider, gate) });
      try {
        const k2 = { 'X-CoinAPI-Key': await ga.key({ limit: 20, concurrency: 1000 }) };
        await gb.keys.reload();
        const pending = Array.from({ length: 60 }, (_, i) => (i % 2 ? ga : gb).get(HIST, k2));
        await gate.waitFor(60);
        gate.open();
        const done = await Promise.all(pending);
        expect(done.filter((r) => r.status === 200).length).toBe(20);
        expect(done.filter((r) => r.status === 429).length).toBe(40);
        expect(
          done
            .filter((r) => r.status === 200)
            .map((r) => Number(r.headers['x-ratelimit-used']))
            .sort((x, y) => x - y),
        ).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      } finally {
        await ga.close();
        await gb.close();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('the concurrency limit holds across replicas; a vanished replica stops counting', async () => {
    const gate = new Gate();
    const a = await replica({ provider: new GatedHistory(demo.provider, gate) });
    const b = await replica({ provider: new GatedHistory(demo.provider, gate), replicaTtlMs: 600 });
    const c = await replica();
    try {
      const key = await a.key({ concurrency: 2 });
      await b.keys.reload();
      await c.keys.reload();
      const H = { 'X-CoinAPI-Key': key };
      const slow = [a.get(HIST, H), b.get(HIST, H)];
      await gate.waitFor(2);
      for (const r of [await a.get(RATE, H), await c.get(RATE, H)]) {
        expect(expectError(r, 429)).toMatch(/concurrency limit of this API key is 2/);
        expect(limitsOf(r)).toMatchObject({ climit: '2', cremaining: '0', cost: '0' });
      }
      gate.open();
      const done = await Promise.all(slow);
      expect(done.map((x) => x.status)).toEqual([200, 200]);
      // The two slots are free again once the replicas' releases reach Redis.
      await eventually(async () => {
        const r = await c.get(RATE, H);
        return r.status === 200 && limitsOf(r).cremaining === '1';
      });

      // A replica that vanishes with requests in flight (its connection to Redis gone, as when
      // killed): once its liveness expires, its count no longer holds the key's slots.
      const held = new Gate();
      const d = await replica({ provider: new GatedHistory(demo.provider, held), replicaTtlMs: 600 });
      const inflight = [d.get(HIST, H), d.get(HIST, H)];
      await held.waitFor(2);
      expectError(await c.get(RATE, H), 429);
      d.keys.redis.disconnect();
      await eventually(async () => (await c.get(RATE, H)).status === 200);
      held.open();
      await Promise.all(inflight);
      await d.close();
    } finally {
      await a.close();
      await b.close();
      await c.close();
    }
  });

  it('a revoked key stops working on every replica; usage survives a replica restart', async () => {
    const a = await replica({ now: Date.now });
    let b = await replica({ now: Date.now });
    try {
      const key = await a.key({ limit: 10 });
      const H = { 'X-CoinAPI-Key': key };
      await eventually(async () => (await b.get(RATE, H)).status === 200);
      for (let i = 0; i < 3; i++) expect((await a.get(RATE, H)).status).toBe(200);
      await b.close();
      b = await replica({ now: Date.now });
      const r = await b.get(RATE, H);
      expect(limitsOf(r)).toMatchObject({ used: '5', remaining: '5' });
      // Revoked through a third connection (as `xrate keys --redis ... revoke` does).
      const admin = await RedisKeyStore.open(redis.url);
      expect(await admin.revoke(await admin.idOf({ key }))).toBe(true);
      await admin.close();
      await eventually(async () => (await a.get(RATE, H)).status === 401 && (await b.get(RATE, H)).status === 401);
      expect(expectError(await b.get(RATE, H), 401)).toBe('Invalid API key');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('heavy requests are capped per replica', async () => {
    const gate = new Gate();
    const a = await replica({ provider: new GatedHistory(demo.provider, gate), heavyConcurrency: 1 });
    try {
      const H = { 'X-CoinAPI-Key': await a.key() };
      const first = a.get(`${HIST}&limit=5000`, H);
      await gate.waitFor(1);
      const r = await a.get(`${HIST}&limit=5000`, H);
      expect(expectError(r, 429)).toMatch(/may have 1 history requests with a limit above 1000 in flight/);
      expect(limitsOf(r)).toMatchObject({ cost: '0' });
      gate.open();
      expect((await first).status).toBe(200);
    } finally {
      await a.close();
    }
  });
});

describe('Redis away', () => {
  it('503 with a message while Redis is down (never served unlimited); back to 200 when it returns', async () => {
    const dir = tempDir('xrate-redis-');
    let own = await startRedis({ dir: dir.dir });
    const gate = new Gate();
    const a = await replica({ url: own.url, provider: new GatedHistory(demo.provider, gate) });
    try {
      const key = await a.key({ limit: 100 });
      const H = { 'X-CoinAPI-Key': key };
      expect((await a.get(RATE, H)).status).toBe(200);
      // Admitted while Redis was there, answered once it has gone: not sent, since it cannot be charged.
      const admitted = a.get(HIST, H);
      await gate.waitFor(1);
      await own.stop();
      gate.open();
      const late = await admitted;
      expect(expectError(late, 503)).toBe(LIMITS_UNREACHABLE);
      expect(late.headers['retry-after']).toBe('1');
      for (const path of [RATE, '/v1/exchangerate/history/periods', HIST, '/v1/exchangerate/BTC/NOPE']) {
        const r = await a.get(path, H);
        expect(expectError(r, 503)).toBe(LIMITS_UNREACHABLE);
        expect(r.headers['x-ratelimit-request-cost']).toBe('0');
      }
      // Without a key it is still a 401, Redis or not.
      expectError(await a.get(RATE), 401);
      own = await startRedis({ port: own.port, dir: dir.dir });
      await eventually(async () => (await a.get(RATE, H)).status === 200);
      const r = await a.get(RATE, H);
      expect(limitsOf(r)).toMatchObject({ limit: '100' });
      // The usage charged before Redis stopped is still counted (persistent Redis), the 503s were not.
      expect(limitsOf(r).used).toBe('3');
    } finally {
      await a.close();
      await own.stop();
      dir.remove();
    }
  });

  it('a replica cannot start without Redis: an error naming the URL', async () => {
    const dead = `redis://127.0.0.1:${redis.port === 1 ? 2 : 1}`;
    await expect(RedisKeyStore.open(dead)).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/^cannot reach Redis at /),
    });
    await expect(RedisKeyStore.open(dead)).rejects.toThrow(`cannot reach Redis at ${dead}`);
    await expect(RedisKeyStore.open('http://127.0.0.1:6379')).rejects.toMatchObject({
      code: 'usage',
      field: '--redis',
      message: expect.stringMatching(/^--redis must be a redis:\/\/ URL/),
    });
  });
});
