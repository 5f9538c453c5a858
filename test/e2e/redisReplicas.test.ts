/**
 * Replicas of `xrate serve --redis` as processes of the built CLI over one real `redis-server`,
 * with keys made by `xrate keys --redis`: one development key for replicas starting together, a
 * quota granted exactly over both, revocation reaching both, usage surviving a replica killed by
 * SIGKILL, and clear errors when Redis is unreachable or the URL is wrong.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { eventually, request, type Res } from '../service/helpers.js';
import { type BinProcess, bin, binStart, cli, DEMO, ensureBuilt } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-replicas-'));
const DB = join(dir, 'demo.sqlite');
const RATE = '/v1/exchangerate/BTC/USD';
let redis: RedisServer;
const started: BinProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  redis = await startRedis();
  const r = await cli('replay', DEMO, '--db', DB);
  expect(r.code, r.err).toBe(0);
}, 120_000);

afterAll(async () => {
  for (const p of started) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
  await Promise.all(started.map((p) => p.exited));
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `xrate serve --redis URL` on a free port; resolves once it listens, with its URL. */
async function serve(redisUrl: string): Promise<{ p: BinProcess; url: string }> {
  const p = binStart(['serve', '--db', DB, '--redis', redisUrl, '--port', '0']);
  started.push(p);
  const end = Date.now() + 60_000;
  for (;;) {
    const m = /listening on (http:\/\/\S+)/.exec(p.out());
    if (m && /\n(keys: \d+ active|try: curl)/.test(p.out())) return { p, url: m[1] };
    if (p.proc.exitCode !== null || Date.now() > end) throw new Error(`xrate serve did not start:\n${p.out()}${p.err()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `xrate keys ...` through the built CLI; the new key of `create` is the last line. */
function keys(...argv: string[]): { code: number | null; out: string; err: string } {
  const r = bin(['keys', ...argv]);
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function lastLine(s: string): string {
  return s.trimEnd().split('\n').at(-1)!;
}

const get = (url: string, key: string): Promise<Res> => request(url + RATE, { headers: { 'X-CoinAPI-Key': key } });

describe('xrate keys --redis', () => {
  it('create, list, jwt-import and revoke against Redis', () => {
    const url = `${redis.url}/3`;
    let r = keys('create', '--redis', url, '--name', 'alice', '--limit', '5', '--concurrency', '2', '--rights', 'rate,history');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(
      /created key id 1, name "alice", .* rights rate,history, limit 5 per 24 h, concurrency 2 in redis:\/\/127\.0\.0\.1:\d+\/3/,
    );
    const key = lastLine(r.out);
    expect(key).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/);
    r = keys('list', '--redis', url, '--json');
    expect(r.code, r.err).toBe(0);
    const rows = JSON.parse(r.out) as Record<string, unknown>[];
    expect(rows).toEqual([
      expect.objectContaining({
        id: 1,
        name: 'alice',
        prefix: key.slice(0, 8),
        rights: 'rate,history',
        limit: 5,
        concurrency: 2,
        used_24h: 0,
      }),
    ]);
    expect(r.out).not.toContain(key); // only the hash is stored
    const secret = join(dir, 'secret');
    writeFileSync(secret, `${'ab'.repeat(32)}\n`);
    r = keys('jwt-import', '--redis', url, '--key', key, '--secret-file', secret);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(keys('list', '--redis', url, '--json').out)[0]).toMatchObject({ jwt: 'HS256' });
    expect(keys('jwt-import', '--redis', url, '--id', '1', '--remove').code).toBe(0);
    expect(JSON.parse(keys('list', '--redis', url, '--json').out)[0]).toMatchObject({ jwt: null });
    r = keys('revoke', '--redis', url, '--id', '1');
    expect(r.out).toBe('revoked key 1\n');
    expect(keys('revoke', '--redis', url, '--key', key).out).toBe('key 1 was already revoked\n');
    r = keys('revoke', '--redis', url, '--id', '9');
    expect(r.code).toBe(1);
    expect(r.err).toBe('xrate: no key with id 9\n');
    expect(lastLine(keys('list', '--redis', url).out)).toMatch(/^1\s+alice\s.*\s\d{4}-\d\d-\d\dT\S+Z$/);
  });

  it('a bad URL is a usage error; an unreachable Redis an error naming the URL', () => {
    let r = keys('list', '--redis', 'http://127.0.0.1:6379');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^xrate: --redis must be a redis:\/\/ URL/);
    r = keys('list', '--redis', redis.url, '--keys', join(dir, 'k.sqlite'));
    expect(r.code).toBe(2);
    r = keys('list', '--redis', 'redis://127.0.0.1:1');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^xrate: cannot reach Redis at redis:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/);
    const s = bin(['serve', '--db', DB, '--redis', 'redis://127.0.0.1:1', '--port', '0']);
    expect(s.status).toBe(1);
    expect(s.stderr).toMatch(/^xrate: cannot reach Redis at redis:\/\/127\.0\.0\.1:1: /);
    expect(bin(['serve', '--db', DB, '--redis', 'localhost:6379']).status).toBe(2);
  });
});

describe('two xrate serve --redis replicas', () => {
  it('share keys and usage: one development key, an exact quota, revocation, usage after SIGKILL', async () => {
    const url = `${redis.url}/4`;
    const [a, b] = await Promise.all([serve(url), serve(url)]);
    // Started together on an empty Redis: exactly one made the development key, both accept it.
    const devs = [a, b].filter((x) => /shown only now/.test(x.p.out()));
    expect(devs.length).toBe(1);
    const dev = /shown only now:\n(\S+)\n/.exec(devs[0].p.out())![1];
    await eventually(async () => (await get(a.url, dev)).status === 200 && (await get(b.url, dev)).status === 200);

    const k = keys('create', '--redis', url, '--limit', '50', '--concurrency', '1000');
    expect(k.code, k.err).toBe(0);
    const key = lastLine(k.out);
    await eventually(async () => (await get(a.url, key)).status === 200);
    await eventually(async () => (await get(b.url, key)).status === 200);
    // 2 used; 80 at once over both replicas: exactly the 48 left pass.
    const res = await Promise.all(Array.from({ length: 80 }, (_, i) => get(i % 2 ? a.url : b.url, key)));
    expect(res.filter((r) => r.status === 200).length).toBe(48);
    expect(res.filter((r) => r.status === 429).length).toBe(32);
    const listed = JSON.parse(keys('list', '--redis', url, '--json').out) as { prefix: string; used_24h: number }[];
    expect(listed.find((x) => x.prefix === key.slice(0, 8))!.used_24h).toBe(50);

    // Killed without a chance to save anything: the usage was in Redis before each answer left.
    a.p.proc.kill('SIGKILL');
    await a.p.exited;
    const c = await serve(url);
    expect(c.p.out()).toMatch(/keys: 2 active in redis:\/\/127\.0\.0\.1:\d+\/4/);
    const r = await get(c.url, key);
    expect(r.status).toBe(429);
    expect(r.headers['x-ratelimit-used']).toBe('50');

    expect(keys('revoke', '--redis', url, '--key', dev).code).toBe(0);
    await eventually(async () => (await get(b.url, dev)).status === 401 && (await get(c.url, dev)).status === 401);

    b.p.proc.kill('SIGTERM');
    c.p.proc.kill('SIGTERM');
    expect(await b.p.exited).toBe(0);
    expect(await c.p.exited).toBe(0);
  });

  it('are not ready while Redis is away (their requests would be 503), and ready again once it is back', async () => {
    let own = await startRedis();
    try {
      const a = await serve(own.url);
      const ready = async (): Promise<{ status: number; body: { message?: string; status?: string } }> => {
        const r = await fetch(`${a.url}/readyz`);
        return { status: r.status, body: (await r.json()) as { message?: string; status?: string } };
      };
      expect(await ready()).toEqual({ status: 200, body: { status: 'ready' } });
      await own.stop();
      await eventually(async () => (await ready()).status === 503);
      expect((await ready()).body.message).toMatch(
        /^Not ready: the keys and limits store \(Redis at redis:\/\/127\.0\.0\.1:\d+\) is unreachable$/,
      );
      expect((await fetch(`${a.url}/healthz`)).status).toBe(200);
      own = await startRedis({ port: own.port });
      await eventually(async () => (await ready()).status === 200);
      a.p.proc.kill('SIGTERM');
      expect(await a.p.exited).toBe(0);
    } finally {
      await own.stop();
    }
  });
});
