/**
 * The API keys of the rate service in Redis (`xrate serve --redis URL`, `xrate keys --redis URL`),
 * shared by every replica; SQLite (keys.ts) stays the default for one process.
 *
 * What is stored (prefix `xrate:`):
 *
 * | key | type | what |
 * |---|---|---|
 * | `xrate:key:{id}` | hash | the columns of a key as in SQLite (`key_hash` = SHA-256 of the upper-cased key, never the key) |
 * | `xrate:keys:byhash` | hash | key hash → id |
 * | `xrate:keys:active` | set | ids of the keys not revoked |
 * | `xrate:keys:nextid` | string | the last id given |
 * | `xrate:keys:version` | string | bumped by every change of a key |
 *
 * Every change is one Lua script (atomic) that bumps the version. A serving process keeps the
 * active keys in memory and re-reads them when the version has changed, looked at no more than
 * once a second and without holding a request ({@link RedisKeyStore.refresh}): a revoked key stops
 * working within about a second on every replica, as with SQLite. The usage of the keys (the 24 h
 * window) and their requests in flight are redisLimits.ts's.
 *
 * @module
 */
import { Redis, type RedisOptions } from 'ioredis';
import { connectRedis, redisAuthOptions } from '../distributed/redisConnect.js';
import { isRedisUrl } from '../distributed/redisUrl.js';
import { type RedisSecurity, redactUrl } from '../distributed/security.js';
import { ActiveKeys, type ApiKey, type CreateKeyOptions, hashKey, type JwtMaterial, type KeyListing, listingOf, newKey } from './keys.js';
import type { KeyRow } from '../io/keyDb.js';
import { XrateError } from '../core/errors.js';

/** Prefix of every Redis key the service writes. */
export const PREFIX = 'xrate:';

const K = {
  byHash: `${PREFIX}keys:byhash`,
  active: `${PREFIX}keys:active`,
  nextId: `${PREFIX}keys:nextid`,
  version: `${PREFIX}keys:version`,
  key: (id: number | string): string => `${PREFIX}key:${id}`,
};

/** A Lua script run by EVALSHA (loaded on first use), with its keys and arguments. */
export type Script = (keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;

/** Defines `lua` on `redis` as command `name`; the returned function runs it. */
export function defineScript(redis: Redis, name: string, lua: string): Script {
  redis.defineCommand(name, { lua });
  const fn = (redis as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name].bind(redis);
  return (keys, args) => fn(keys.length, ...keys, ...args);
}

/** `url` without its user and password, for messages. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return redactUrl(url);
  }
}

/**
 * A connected Redis client for the keys and limits: no offline queue, no command resent after a
 * reconnection (a charge must never run twice), one attempt per command and a 1 s timeout, so
 * that a request fails fast while Redis is away; it reconnects by itself (every second at most).
 * `security`: the ACL user, password and TLS material.
 *
 * @throws XrateError naming the URL when `url` is not a Redis URL or Redis cannot be reached
 * (saying `authentication failed` or `TLS verification failed` when that is why)
 */
export async function limitsConnection(url: string, security?: RedisSecurity): Promise<Redis> {
  if (!isRedisUrl(url))
    throw new XrateError(
      'usage',
      `--redis must be a redis:// URL (redis://HOST[:PORT][/DB], or rediss:// for TLS), got "${redactUrl(url)}"`,
      { field: '--redis' },
    );
  const options: RedisOptions = {
    ...redisAuthOptions(url, security),
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    commandTimeout: 1000,
    retryStrategy: (times) => Math.min(times * 100, 1000),
    // The scripts of the requests of one turn of the event loop go in one write.
    enableAutoPipelining: true,
  };
  return connectRedis(new Redis(url, options), `Redis at ${shownUrl(url)}`);
}

const CREATE = `
if ARGV[1] == '1' and redis.call('SCARD', KEYS[3]) > 0 then return 0 end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return redis.error_reply('key hash collision') end
local id = redis.call('INCR', KEYS[1])
redis.call('HSET', '${PREFIX}key:' .. id, 'id', id, 'key_hash', ARGV[2], 'key_prefix', ARGV[3], 'name', ARGV[4], 'rights', ARGV[5],
  'request_limit', ARGV[6], 'overage', ARGV[7], 'concurrency', ARGV[8], 'created_at', ARGV[9])
redis.call('HSET', KEYS[2], ARGV[2], id)
redis.call('SADD', KEYS[3], id)
redis.call('INCR', KEYS[4])
return id
`;

const REVOKE = `
local k = '${PREFIX}key:' .. ARGV[1]
if redis.call('EXISTS', k) == 0 or redis.call('HEXISTS', k, 'revoked_at') == 1 then return 0 end
redis.call('HSET', k, 'revoked_at', ARGV[2])
redis.call('SREM', KEYS[1], ARGV[1])
redis.call('INCR', KEYS[2])
return 1
`;

const SET_JWT = `
local k = '${PREFIX}key:' .. ARGV[1]
if redis.call('EXISTS', k) == 0 then return 0 end
if ARGV[2] == '' then redis.call('HDEL', k, 'jwt_kind', 'jwt_key') else redis.call('HSET', k, 'jwt_kind', ARGV[2], 'jwt_key', ARGV[3]) end
redis.call('INCR', KEYS[1])
return 1
`;

/** A key's hash as Redis returns it, as the row SQLite would. */
function rowOf(h: Record<string, string>): KeyRow {
  return {
    id: Number(h.id),
    key_hash: h.key_hash,
    key_prefix: h.key_prefix,
    name: h.name,
    rights: h.rights,
    request_limit: Number(h.request_limit),
    overage: Number(h.overage),
    concurrency: Number(h.concurrency),
    jwt_kind: h.jwt_kind ?? null,
    jwt_key: h.jwt_key ?? null,
    created_at: h.created_at,
    revoked_at: h.revoked_at ?? null,
  };
}

/**
 * The keys in Redis (see the module description): what {@link KeyStore} does for SQLite, its
 * changes and listings asynchronous, its lookups ({@link find}) from memory.
 *
 * @example
 * ```ts
 * const keys = await RedisKeyStore.open('redis://127.0.0.1:6379');
 * const { key } = await keys.create({ name: 'me', limit: 1000 });
 * keys.find(key)?.limit; // 1000
 * ```
 */
export class RedisKeyStore {
  private active = new ActiveKeys();
  private version: string | null = null;
  private checkedAt = -Infinity;
  private checking = false;
  private closed = false;
  private readonly scripts: { create: Script; revoke: Script; setJwt: Script };

  private constructor(
    /** The connection (shared with the limits of redisLimits.ts). */
    readonly redis: Redis,
    /** The URL, without credentials. */
    readonly path: string,
  ) {
    this.scripts = {
      create: defineScript(redis, 'xrateKeyCreate', CREATE),
      revoke: defineScript(redis, 'xrateKeyRevoke', REVOKE),
      setJwt: defineScript(redis, 'xrateKeySetJwt', SET_JWT),
    };
  }

  /**
   * Connects (with `security`'s credentials and TLS) and reads the active keys.
   * @throws XrateError naming the URL when Redis cannot be reached
   */
  static async open(url: string, security?: RedisSecurity): Promise<RedisKeyStore> {
    const redis = await limitsConnection(url, security);
    const store = new RedisKeyStore(redis, shownUrl(url));
    try {
      await store.reload();
    } catch (e) {
      redis.disconnect();
      throw new XrateError('unavailable', `cannot read the keys in Redis at ${store.path}: ${(e as Error).message}`);
    }
    return store;
  }

  /** Whether the connection is still open (not closed by {@link close}). */
  get isOpen(): boolean {
    return !this.closed;
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }

  /**
   * Re-reads the keys when their version in Redis has changed, looked at no more than every
   * `everyMs`; never waits (the look runs in the background; Redis away: the keys stay as they are).
   */
  refresh(nowMs: number, everyMs = 1000): void {
    if (this.checking || this.closed || nowMs - this.checkedAt < everyMs) return;
    this.checkedAt = nowMs;
    this.checking = true;
    this.redis
      .get(K.version)
      .then((v) => (v !== this.version ? this.reload() : undefined))
      .catch(() => undefined)
      .finally(() => {
        this.checking = false;
      });
  }

  /** Re-reads every active key now. */
  async reload(): Promise<void> {
    const version = await this.redis.get(K.version);
    const ids = await this.redis.smembers(K.active);
    const p = this.redis.pipeline();
    for (const id of ids) p.hgetall(K.key(id));
    const res = (await p.exec()) ?? [];
    const rows: KeyRow[] = [];
    for (const [err, h] of res) {
      if (err) throw err;
      const row = h as Record<string, string>;
      if (row.key_hash) rows.push(rowOf(row));
    }
    this.active = new ActiveKeys(rows);
    this.version = version;
  }

  /** The active key matching `key` (hashed), or undefined. */
  find(key: string): ApiKey | undefined {
    return this.active.find(key);
  }

  /** Number of active keys. */
  activeCount(): Promise<number> {
    return this.redis.scard(K.active);
  }

  /**
   * Creates a key; the clear key is returned once and never stored. With `ifNoActive`, only when
   * no key is active (atomically: replicas starting together create one development key), else
   * undefined.
   */
  async create(opts: CreateKeyOptions = {}, ifNoActive = false): Promise<{ key: string; record: ApiKey } | undefined> {
    const { key, row } = newKey(opts);
    const id = Number(
      await this.scripts.create(
        [K.nextId, K.byHash, K.active, K.version],
        [
          ifNoActive ? '1' : '0',
          row.key_hash,
          row.key_prefix,
          row.name,
          row.rights,
          row.request_limit,
          row.overage,
          row.concurrency,
          row.created_at,
        ],
      ),
    );
    if (id === 0) return undefined;
    await this.reload();
    const record = this.active.byId(id);
    if (!record) throw new XrateError('conflict', `key ${id} was created but is not active (revoked at once by another client?)`);
    return { key, record };
  }

  /** Resolves `--id N` or `--key KEY` to a key id (active or not). */
  async idOf(ref: { id?: number; key?: string }): Promise<number> {
    if (ref.id !== undefined) {
      if ((await this.redis.exists(K.key(ref.id))) === 0) throw new XrateError('not_found', `no key with id ${ref.id}`);
      return ref.id;
    }
    if (ref.key !== undefined) {
      const id = await this.redis.hget(K.byHash, hashKey(ref.key));
      if (id === null) throw new XrateError('not_found', 'no such key');
      return Number(id);
    }
    throw new XrateError('usage', 'give the key by --id N or --key KEY');
  }

  /** Revokes a key (it stops working within a second on every replica); false when it already was. */
  async revoke(id: number, at = new Date().toISOString()): Promise<boolean> {
    const r = Number(await this.scripts.revoke([K.active, K.version], [id, at]));
    await this.reload();
    return r === 1;
  }

  /** Registers (or with `undefined` removes) the JWT verification key of a key. */
  async setJwt(id: number, material: JwtMaterial | undefined): Promise<void> {
    await this.scripts.setJwt([K.version], [id, material?.kind ?? '', material?.stored ?? '']);
    await this.reload();
  }

  /**
   * Every key with its usage of the last 24 h (`nowMs`), by id; `usedSince(ids, since)` gives the
   * cost charged to each key in the seconds after `since` (redisLimits.ts).
   */
  async list(usedSince: (ids: number[], since: number) => Promise<number[]>, nowMs = Date.now()): Promise<KeyListing[]> {
    const last = Number((await this.redis.get(K.nextId)) ?? 0);
    const p = this.redis.pipeline();
    for (let id = 1; id <= last; id++) p.hgetall(K.key(id));
    const rows: KeyRow[] = [];
    for (const [err, h] of (await p.exec()) ?? []) {
      if (err) throw err;
      const row = h as Record<string, string>;
      if (row.key_hash) rows.push(rowOf(row));
    }
    const used = await usedSince(
      rows.map((r) => r.id),
      Math.floor(nowMs / 1000) - 86_400,
    );
    return rows.map((r, i) => listingOf({ ...r, used: used[i] }));
  }
}
