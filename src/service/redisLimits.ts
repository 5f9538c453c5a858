/**
 * The request limits of limits.ts kept in Redis, shared by every replica of the service
 * (`xrate serve --redis URL`): the same sliding 24 h window, costs, headers and messages as the
 * {@link Limiter} of one process, exact across any number of replicas.
 *
 * What is stored, per key id (prefix `xrate:`):
 *
 * | key | type | what |
 * |---|---|---|
 * | `xrate:usage:{id}` | hash | second → cost charged in it, and `total`: the cost in the window |
 * | `xrate:useq:{id}` | sorted set | the seconds of `usage`, oldest first (score = member = the second) |
 * | `xrate:inflight:{id}` | hash | replica id → requests of the key in flight on that replica |
 * | `xrate:replica:{rid}` | string | present while the replica is alive (refreshed every second, expires after `replicaTtlMs`) |
 *
 * Every step is a Lua script, which Redis runs atomically, so concurrent requests on any number
 * of replicas can never together pass a limit. The steps of the requests of one turn of the event
 * loop go in one call of their script (a group commit, as the SQLite limiter writes its charges),
 * which takes them in order, each as it would alone:
 *
 * - **admission** (onRequest hook): drops the seconds that left the window; refuses (429, nothing
 *   counted) when not even a request of cost 1 fits, unless overage; counts the requests in flight
 *   of the live replicas (the fields of replicas whose liveness key has expired, e.g. killed by
 *   SIGKILL, are deleted on the way); refuses past the concurrency limit; else adds one for this
 *   replica. It returns what the headers need (used, newest second, in flight).
 * - **charge** (onSend hook, once the route knows the cost: a history with `limit` costs one per
 *   100 points returned): checks `used + cost <= limit` unless overage and adds the cost to the
 *   current second (or, after a clock step back, to the newest), as `Window.add` does; a refused
 *   charge turns the response into its 429 (charged nothing). The response leaves once the
 *   charge is in Redis: a restart of any replica, or of all, loses nothing.
 * - **release**: one less in flight for this replica, done by the charge script itself for a
 *   response sent in one piece (it leaves right after), else when the reply closes (a long answer
 *   sent a slice at a time, a refusal): two scripts per request in the common case, shared by
 *   the requests of a turn.
 *
 * Each replica keeps its own requests in flight in memory too; when a release fails (Redis away)
 * or its liveness key had expired, the next heartbeat writes its true counts back.
 *
 * Heavy requests (history `limit` above HEAVY_LIMIT) are capped per key **per replica** (in
 * memory, as with one process): the cap protects each replica's event loop, which is what it is
 * for; across n replicas a key may thus have n times the cap in flight.
 *
 * Redis unreachable: every request that needs a key is answered 503 with a message (never served
 * without its limits); the connection comes back by itself when Redis does.
 *
 * The scripts touch keys they compute (a key's hash, the replicas' liveness keys): one Redis
 * server (or a primary with replicas), not Redis Cluster.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { XrateError } from '../core/errors.js';
import { errorBody } from '../http/errors.js';
import { CONTENT_TYPES } from '../http/format/index.js';
import type { ApiKey } from '../http/keys.js';
import {
  concurrencyExceeded,
  DEFAULT_HEAVY_CONCURRENCY,
  HEAVY_LIMIT,
  heavyExceeded,
  type LimitHeaders,
  limitExceeded,
  limitHeaders,
  WINDOW_SECONDS,
  type WindowState,
} from './limits.js';
import { defineScript, PREFIX, type Script } from '../http/redisKeys.js';
import { soon } from './slices.js';
import type { RequestLimits } from './requestLimits.js';

/** Liveness of a replica, by default, ms: its in-flight counts stop counting this long after it died. */
export const DEFAULT_REPLICA_TTL_MS = 5000;

/** The message of the 503 answered while Redis is unreachable. */
export const LIMITS_UNREACHABLE =
  'The limits store (Redis) is unreachable: requests that need an API key are refused until it is back; try again shortly';

const COMMON = `
local W = ${WINDOW_SECONDS}
local function prune(u, q, nowS)
  local min = nowS - W
  while true do
    local old = redis.call('ZRANGEBYSCORE', q, '-inf', min, 'LIMIT', 0, 1000)
    if #old == 0 then break end
    local costs = redis.call('HMGET', u, unpack(old))
    local freed = 0
    for i = 1, #costs do freed = freed + (tonumber(costs[i]) or 0) end
    redis.call('HDEL', u, unpack(old))
    redis.call('ZREM', q, unpack(old))
    redis.call('HINCRBY', u, 'total', -freed)
  end
  return tonumber(redis.call('HGET', u, 'total')) or 0
end
local function newest(q)
  local r = redis.call('ZRANGE', q, -1, -1)
  if #r == 0 then return nil end
  return tonumber(r[1])
end
local function shown(s)
  if s == nil then return 'none' end
  return tostring(s)
end
local function untilFreed(u, q, need, nowS)
  local start = 0
  local freed = 0
  while true do
    local secs = redis.call('ZRANGE', q, start, start + 999)
    if #secs == 0 then return W end
    local costs = redis.call('HMGET', u, unpack(secs))
    for i = 1, #secs do
      freed = freed + (tonumber(costs[i]) or 0)
      if freed >= need then return tonumber(secs[i]) + W - nowS end
    end
    start = start + 1000
  end
end
local function inflight(h, rp, self)
  local f = redis.call('HGETALL', h)
  local n = 0
  for i = 1, #f, 2 do
    if f[i] == self or redis.call('EXISTS', rp .. f[i]) == 1 then n = n + tonumber(f[i + 1])
    else redis.call('HDEL', h, f[i]) end
  end
  return n
end
`;

/**
 * The requests of one turn of the event loop, in order: KEYS usage, useq, inflight of each; ARGV
 * replica, replica prefix, then nowS, limit, overage, concurrency of each. One reply per request:
 * {status (1 admitted, 0 over the request limit, 2 over the concurrency limit), used, newest
 * second, in flight, seconds to wait}.
 */
const ADMIT = `${COMMON}
local function admit(u, q, h, nowS, limit, overage, concurrency, self, rp)
  local used = prune(u, q, nowS)
  local last = shown(newest(q))
  local n = inflight(h, rp, self)
  if overage ~= '1' and used + 1 > limit then return {0, used, last, n, untilFreed(u, q, used + 1 - limit, nowS)} end
  if n >= concurrency then return {2, used, last, n, 1} end
  redis.call('HINCRBY', h, self, 1)
  return {1, used, last, n + 1, 0}
end
local out = {}
for e = 1, #KEYS / 3 do
  local a = 2 + 4 * (e - 1)
  out[e] = admit(KEYS[3 * e - 2], KEYS[3 * e - 1], KEYS[3 * e], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), ARGV[a + 3],
    tonumber(ARGV[a + 4]), ARGV[1], ARGV[2])
end
return out
`;

/**
 * The charges of one turn, in order: KEYS usage, useq, inflight of each; ARGV replica, replica
 * prefix, then nowS, cost, limit, overage, release of each (release '1': the request's slot is
 * given back too, after counting it for the headers). One reply per charge: {status (1 charged,
 * 0 refused), used, newest second, in flight, seconds to wait}.
 */
const CHARGE = `${COMMON}
local function charge(u, q, h, nowS, cost, limit, overage, release, self, rp)
  local used = prune(u, q, nowS)
  local n = inflight(h, rp, self)
  if release == '1' and redis.call('HINCRBY', h, self, -1) <= 0 then redis.call('HDEL', h, self) end
  local last = newest(q)
  if overage ~= '1' and used + cost > limit then
    local wait = W
    if cost <= limit then wait = untilFreed(u, q, used + cost - limit, nowS) end
    return {0, used, shown(last), n, wait}
  end
  local sec = nowS
  local fresh = last == nil or last < nowS
  if fresh then redis.call('ZADD', q, nowS, nowS) else sec = last end
  redis.call('HINCRBY', u, sec, cost)
  used = redis.call('HINCRBY', u, 'total', cost)
  if fresh then
    -- A day after its newest second has left the window, the key's usage goes by itself.
    redis.call('EXPIRE', u, W + 60)
    redis.call('EXPIRE', q, W + 60)
  end
  return {1, used, shown(sec), n, 0}
end
local out = {}
for e = 1, #KEYS / 3 do
  local a = 2 + 5 * (e - 1)
  out[e] = charge(KEYS[3 * e - 2], KEYS[3 * e - 1], KEYS[3 * e], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]),
    ARGV[a + 4], ARGV[a + 5], ARGV[1], ARGV[2])
end
return out
`;

/** KEYS usage, useq, inflight; ARGV nowS, replica, replica prefix. */
const STATE = `${COMMON}
local used = prune(KEYS[1], KEYS[2], tonumber(ARGV[1]))
return {1, used, shown(newest(KEYS[2])), inflight(KEYS[3], ARGV[3], ARGV[2]), 0}
`;

/** KEYS usage, useq; ARGV since: the cost of the seconds after `since`. */
const USED = `
local secs = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf')
local total = 0
for i = 1, #secs, 1000 do
  local costs = redis.call('HMGET', KEYS[1], unpack(secs, i, math.min(i + 999, #secs)))
  for j = 1, #costs do total = total + (tonumber(costs[j]) or 0) end
end
return total
`;

/** The releases of one turn: KEYS the inflight hash of each; ARGV replica. */
const RELEASE = `
for i = 1, #KEYS do
  if redis.call('HINCRBY', KEYS[i], ARGV[1], -1) <= 0 then redis.call('HDEL', KEYS[i], ARGV[1]) end
end
return #KEYS
`;

/** Calls of a script run as one at most (the arguments of a call stay well within a function call's). */
const MAX_BATCH = 500;

/**
 * The calls of one script made by the requests of one turn of the event loop, run as one call of
 * it at the start of the next turn (before the slices of long answers): the script handles them
 * in order, each as it would alone, and answers each. A failure fails them all.
 */
class Batched {
  private keys: string[] = [];
  private args: (string | number)[] = [];
  private waiters: { resolve: (r: unknown) => void; reject: (e: unknown) => void }[] = [];

  constructor(
    private readonly script: Script,
    private readonly head: readonly (string | number)[],
  ) {}

  run(keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.waiters.length === 0) soon(() => this.flush());
      this.keys.push(...keys);
      this.args.push(...args);
      this.waiters.push({ resolve, reject });
      if (this.waiters.length >= MAX_BATCH) this.flush();
    });
  }

  private flush(): void {
    const { keys, args, waiters } = this;
    if (waiters.length === 0) return;
    this.keys = [];
    this.args = [];
    this.waiters = [];
    this.script(keys, [...this.head, ...args]).then(
      (rs) => {
        for (let i = 0; i < waiters.length; i++) waiters[i].resolve((rs as unknown[])[i]);
      },
      (e: unknown) => {
        for (const w of waiters) w.reject(e);
      },
    );
  }
}

/** KEYS replica key; ARGV ttl ms: whether it was alive, and keeps it alive. */
const BEAT = `
local alive = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return alive
`;

const usageKey = (id: number): string => `${PREFIX}usage:${id}`;
const useqKey = (id: number): string => `${PREFIX}useq:${id}`;
const inflightKey = (id: number): string => `${PREFIX}inflight:${id}`;
const REPLICA = `${PREFIX}replica:`;

type ScriptResult = [number, number, string, number, number];

function stateOf(r: ScriptResult): WindowState {
  return { used: Number(r[1]), newest: r[2] === 'none' ? undefined : Number(r[2]), inflight: Number(r[3]) };
}

/** The 503 of a request whose limits could not be checked or charged. */
function unreachable(): XrateError {
  return new XrateError('unavailable', LIMITS_UNREACHABLE, { headers: { 'retry-after': '1' } });
}

/** What a request's limits know of it. */
interface RequestState {
  key: ApiKey;
  /** Its slot among the key's requests in flight: not taken, held, or given back (or being). */
  slot: 'none' | 'held' | 'released';
  /** Whether the reply has closed. */
  closed: boolean;
  /** The window as the last script of the request saw it. */
  state?: WindowState;
  /** Cost to charge in onSend. */
  cost?: number;
}

/** The requests in flight of one key on this replica. */
interface LocalCount {
  /** Admitted and not released. */
  n: number;
  /** Scripts sent for the key and not answered. */
  pending: number;
}

/** Options of {@link RedisLimits}. */
export interface RedisLimitsOptions {
  /** Wall clock in ms (injectable for tests). */
  now?: () => number;
  /** Heavy requests a key may have in flight at once on this replica. */
  heavyConcurrency?: number;
  /** Liveness of this replica's in-flight counts after its last heartbeat, ms (default 5000). */
  replicaTtlMs?: number;
}

/**
 * The {@link RequestLimits} of the replicas sharing one Redis (see the module description).
 *
 * @example
 * ```ts
 * const keys = await RedisKeyStore.open('redis://127.0.0.1:6379');
 * const limits = await RedisLimits.start(keys.redis);
 * ```
 */
export class RedisLimits implements RequestLimits {
  /** This replica's id (its field in the in-flight hashes). */
  readonly replica = randomUUID();
  private readonly now: () => number;
  private readonly heavyCap: number;
  private readonly ttlMs: number;
  private readonly requests = new WeakMap<FastifyRequest, RequestState>();
  private readonly local = new Map<number, LocalCount>();
  /** Keys whose in-flight count in Redis may differ from {@link local}'s. */
  private readonly dirty = new Set<number>();
  private readonly heavy = new Map<number, number>();
  private readonly scripts: Record<'state' | 'beat', Script>;
  private readonly admits: Batched;
  private readonly charges: Batched;
  private readonly releases: Batched;
  private timer: NodeJS.Timeout | undefined;
  private beating = false;

  private constructor(
    private readonly redis: Redis,
    opts: RedisLimitsOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.heavyCap = opts.heavyConcurrency ?? DEFAULT_HEAVY_CONCURRENCY;
    this.ttlMs = opts.replicaTtlMs ?? DEFAULT_REPLICA_TTL_MS;
    this.scripts = { state: defineScript(redis, 'xrateState', STATE), beat: defineScript(redis, 'xrateBeat', BEAT) };
    const head = [this.replica, REPLICA];
    this.admits = new Batched(defineScript(redis, 'xrateAdmit', ADMIT), head);
    this.charges = new Batched(defineScript(redis, 'xrateCharge', CHARGE), head);
    this.releases = new Batched(defineScript(redis, 'xrateRelease', RELEASE), [this.replica]);
  }

  /** The limits over `redis` (the connection of a RedisKeyStore), this replica announced alive. */
  static async start(redis: Redis, opts: RedisLimitsOptions = {}): Promise<RedisLimits> {
    const l = new RedisLimits(redis, opts);
    await l.beat();
    l.timer = setInterval(() => void l.beat(), Math.min(1000, Math.max(50, Math.floor(l.ttlMs / 3))));
    l.timer.unref();
    return l;
  }

  /** The cost charged to each key of `ids` in the seconds after `since` (for `xrate keys list`). */
  static async usedSince(redis: Redis, ids: number[], since: number): Promise<number[]> {
    const used = defineScript(redis, 'xrateUsed', USED);
    return Promise.all(ids.map(async (id) => Number(await used([usageKey(id), useqKey(id)], [since]))));
  }

  private count(id: number): LocalCount {
    let c = this.local.get(id);
    if (!c) {
      c = { n: 0, pending: 0 };
      this.local.set(id, c);
    }
    return c;
  }

  /** Keeps this replica alive; writes back the in-flight counts Redis may have wrong. */
  private async beat(): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    try {
      const alive = Number(await this.scripts.beat([REPLICA + this.replica], [this.ttlMs]));
      // Expired (Redis away too long): the other replicas may have dropped this one's counts.
      if (alive === 0) for (const [id, c] of this.local) if (c.n > 0) this.dirty.add(id);
      const fix = [...this.dirty].filter((id) => this.count(id).pending === 0);
      if (fix.length === 0) return;
      const m = this.redis.multi();
      for (const id of fix) {
        const n = this.count(id).n;
        if (n > 0) m.hset(inflightKey(id), this.replica, n);
        else m.hdel(inflightKey(id), this.replica);
      }
      await m.exec();
      for (const id of fix) this.dirty.delete(id);
    } catch {
      // Redis away: the requests get 503 meanwhile; the next beat tries again.
    } finally {
      this.beating = false;
    }
  }

  private static keysOf(key: ApiKey): string[] {
    return [usageKey(key.id), useqKey(key.id), inflightKey(key.id)];
  }

  admit(req: FastifyRequest, reply: FastifyReply, key: ApiKey): Promise<void> {
    const rs: RequestState = { key, slot: 'none', closed: false };
    this.requests.set(req, rs);
    const c = this.count(key.id);
    reply.raw.once('close', () => {
      rs.closed = true;
      if (rs.slot === 'held') this.release(rs);
    });
    const nowMs = this.now();
    c.pending++;
    const args = [Math.floor(nowMs / 1000), key.limit, key.overage ? 1 : 0, key.concurrency];
    return (this.admits.run(RedisLimits.keysOf(key), args) as Promise<ScriptResult>).then(
      (r) => {
        c.pending--;
        rs.state = stateOf(r);
        if (r[0] === 1) {
          c.n++;
          rs.slot = 'held';
          if (rs.closed) this.release(rs);
          return;
        }
        if (r[0] === 2) throw concurrencyExceeded(key);
        throw limitExceeded(key, rs.state.used, 1, Number(r[4]), limitHeaders(key, 0, rs.state, nowMs));
      },
      () => {
        c.pending--;
        this.dirty.add(key.id); // the count may or may not have been added
        throw unreachable();
      },
    );
  }

  private release(rs: RequestState): void {
    const key = rs.key;
    rs.slot = 'released';
    const c = this.count(key.id);
    c.n--;
    c.pending++;
    this.releases.run([inflightKey(key.id)], []).then(
      () => {
        c.pending--;
      },
      () => {
        c.pending--;
        this.dirty.add(key.id);
      },
    );
  }

  charge(req: FastifyRequest, _reply: FastifyReply, cost: number): void {
    const rs = this.requests.get(req);
    if (!rs) return;
    rs.cost = cost;
    req.charged = true;
  }

  headers(req: FastifyRequest, key: ApiKey, cost: number): LimitHeaders {
    const s = this.requests.get(req)?.state;
    return s ? limitHeaders(key, cost, s, this.now()) : {};
  }

  holdHeavy(req: FastifyRequest, reply: FastifyReply, limit: number): void {
    const key = req.apiKey;
    if (!key || limit <= HEAVY_LIMIT) return;
    const n = this.heavy.get(key.id) ?? 0;
    if (n >= this.heavyCap) throw heavyExceeded(this.heavyCap);
    this.heavy.set(key.id, n + 1);
    reply.raw.once('close', () => {
      const m = (this.heavy.get(key.id) ?? 1) - 1;
      if (m > 0) this.heavy.set(key.id, m);
      else this.heavy.delete(key.id);
    });
  }

  onSend(req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): void {
    const key = req.apiKey;
    if (!key) {
      done(null, payload);
      return;
    }
    const rs = this.requests.get(req) ?? { key, slot: 'none', closed: false };
    const cost = rs.cost;
    const nowMs = this.now();
    if (cost === undefined) {
      if (rs.state) {
        done(null, payload);
        return;
      }
      // Refused before admission (403): the headers still say where the key stands.
      this.scripts.state(RedisLimits.keysOf(key), [Math.floor(nowMs / 1000), this.replica, REPLICA]).then(
        (r) => {
          reply.headers(limitHeaders(key, 0, stateOf(r as ScriptResult), nowMs));
          done(null, payload);
        },
        () => this.replace(reply, payload, unreachable(), done),
      );
      return;
    }
    // A response in one piece leaves right after: its slot is given back by the charge script.
    const c = this.count(key.id);
    const release = rs.slot === 'held' && !(payload instanceof Readable);
    if (release) {
      rs.slot = 'released';
      c.n--;
      c.pending++;
    }
    const args = [Math.floor(nowMs / 1000), cost, key.limit, key.overage ? 1 : 0, release ? 1 : 0];
    (this.charges.run(RedisLimits.keysOf(key), args) as Promise<ScriptResult>).then(
      (r) => {
        if (release) c.pending--;
        const s = stateOf(r);
        rs.state = s;
        if (r[0] === 1) {
          reply.headers(limitHeaders(key, cost, s, nowMs));
          done(null, payload);
          return;
        }
        this.replace(reply, payload, limitExceeded(key, s.used, cost, Number(r[4]), limitHeaders(key, 0, s, nowMs)), done);
      },
      () => {
        if (release) {
          c.pending--;
          this.dirty.add(key.id); // released or not: the next heartbeat writes the true count
        }
        this.replace(reply, payload, unreachable(), done);
      },
    );
  }

  /** Sends `err` instead of the response (whose charge was refused, or could not be made). */
  private replace(reply: FastifyReply, payload: unknown, err: XrateError, done: (err: Error | null, payload?: unknown) => void): void {
    if (payload instanceof Readable) payload.destroy();
    reply.code(err.status);
    reply.raw.statusMessage = STATUS_CODES[err.status] ?? '';
    reply.headers(err.headers);
    reply.header('content-type', CONTENT_TYPES.json);
    reply.header('x-ratelimit-request-cost', '0');
    done(null, errorBody(err.message));
  }

  /** Stops the heartbeat and withdraws this replica (its in-flight counts stop counting at once). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    try {
      await this.redis.del(REPLICA + this.replica);
    } catch {
      // Redis away: the liveness key expires by itself.
    }
  }
}
