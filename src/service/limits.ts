/**
 * Request limits per API key:
 *
 * - **24 h request limit**, a sliding window: the cost of every request made in the last 86,400
 *   whole seconds (a request at second s counts until s + 86,400 s) must stay within the key's
 *   limit. Cost 1 per call; with the `limit` parameter, one per 100 data points returned (at
 *   least 1). A request whose cost would take the key past its limit is refused with 429 (nothing
 *   is charged) unless the key has overage enabled; then `X-RateLimit-Remaining` goes negative.
 * - **Concurrency limit**: requests of a key in flight at once; one more is refused with 429.
 * - **Heavy requests**: history requests whose `limit` is above {@link HEAVY_LIMIT} (up to
 *   100,000 items, read and written a slice at a time) in flight at once per key, at most the
 *   service's heavy concurrency ({@link DEFAULT_HEAVY_CONCURRENCY} unless configured); one more is
 *   refused with 429 before any work, and charged nothing.
 *
 * Exactness: Node runs the check-and-charge of a request synchronously, so concurrent requests
 * can never together pass the limit. The window lives in memory (per key, one entry per second
 * with traffic) and is read back from SQLite (`api_key_usage`) at start. A charged response is
 * sent only once its charge is committed ({@link Limiter.afterCommit}): the charges of one turn
 * of the event loop are written in one transaction (a group commit), so usage survives a restart
 * and a `kill -9` alike. One server process per keys database.
 *
 * @module
 */
import { formatTime } from '../core/time.js';
import type { XrateError } from '../core/errors.js';
import { tooManyRequests } from '../http/errors.js';
import { soon } from './slices.js';
import type { ApiKey, KeyStore } from '../http/keys.js';

/** Seconds in the window. */
export const WINDOW_SECONDS = 86_400;

/** A history request whose `limit` is above this many items is heavy. */
export const HEAVY_LIMIT = 1000;

/** Heavy requests a key may have in flight at once, by default. */
export const DEFAULT_HEAVY_CONCURRENCY = 2;

/** A key's window in memory: one entry per second with traffic, oldest first. */
class Window {
  seconds: number[] = [];
  costs: number[] = [];
  head = 0;
  total = 0;
  inflight = 0;
  heavy = 0;

  prune(nowS: number): void {
    const min = nowS - WINDOW_SECONDS; // entries at second <= min have left
    while (this.head < this.seconds.length && this.seconds[this.head] <= min) {
      this.total -= this.costs[this.head];
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.seconds.length) {
      this.seconds = this.seconds.slice(this.head);
      this.costs = this.costs.slice(this.head);
      this.head = 0;
    }
  }

  add(second: number, cost: number): void {
    const n = this.seconds.length;
    if (n > this.head && this.seconds[n - 1] >= second)
      this.costs[n - 1] += cost; // same second (or a clock step back)
    else {
      this.seconds.push(second);
      this.costs.push(cost);
    }
    this.total += cost;
  }

  /** Second of the newest entry, or undefined. */
  newest(): number | undefined {
    return this.seconds.length > this.head ? this.seconds[this.seconds.length - 1] : undefined;
  }

  /** Seconds from nowS until `need` of the cost has left the window. */
  secondsUntilFreed(need: number, nowS: number): number {
    let freed = 0;
    for (let i = this.head; i < this.seconds.length; i++) {
      freed += this.costs[i];
      if (freed >= need) return this.seconds[i] + WINDOW_SECONDS - nowS;
    }
    return WINDOW_SECONDS;
  }
}

/** The limit headers of a response. */
export type LimitHeaders = Record<string, string>;

/** What the limit headers say of a key's window, wherever it is kept (memory here, Redis in redisLimits.ts). */
export interface WindowState {
  /** Cost used in the window. */
  used: number;
  /** Second of the newest charge in the window, or undefined. */
  newest: number | undefined;
  /** Requests of the key in flight. */
  inflight: number;
}

/**
 * The limit headers of a response to `key` that cost `cost`, the window being `s` at `nowMs`
 * (`X-RateLimit-Reset`: when the newest charge leaves the window, or now when there is none).
 */
export function limitHeaders(key: ApiKey, cost: number, s: WindowState, nowMs: number): LimitHeaders {
  const reset = s.newest === undefined ? Math.floor(nowMs) * 1000 : (s.newest + WINDOW_SECONDS) * 1_000_000;
  return {
    'x-ratelimit-used': String(s.used),
    'x-ratelimit-limit': String(key.limit),
    'x-ratelimit-remaining': String(key.limit - s.used),
    'x-ratelimit-request-cost': String(cost),
    'x-ratelimit-reset': formatTime(reset),
    'x-ratelimit-overage': key.overage ? 'ENABLED' : 'DISABLED',
    'x-concurrencylimit-limit': String(key.concurrency),
    'x-concurrencylimit-remaining': String(Math.max(0, key.concurrency - s.inflight)),
  };
}

/**
 * The 429 of a request of cost `cost` refused with `used` in the window: `waitSeconds` until
 * enough has left it (Retry-After), `headers` the limit headers of the refusal (cost 0).
 */
export function limitExceeded(key: ApiKey, used: number, cost: number, waitSeconds: number, headers: LimitHeaders): XrateError {
  const msg =
    cost > key.limit
      ? `Request cost ${cost} exceeds the 24 h request limit of this API key (${key.limit}); ask for fewer data points (limit)`
      : `Request limit exceeded: ${used} of ${key.limit} used in the last 24 hours and this request costs ${cost}`;
  const e = tooManyRequests(msg, waitSeconds);
  Object.assign(e.headers, headers);
  return e;
}

/** The 429 of one request more than the key's concurrency limit. */
export function concurrencyExceeded(key: ApiKey): XrateError {
  return tooManyRequests(`Too many concurrent requests: the concurrency limit of this API key is ${key.concurrency}`, 1);
}

/** The 429 of one heavy request more than `cap` in flight. */
export function heavyExceeded(cap: number): XrateError {
  return tooManyRequests(
    `Too many concurrent heavy requests: this API key may have ${cap} history requests with a limit above ${HEAVY_LIMIT} in flight at once`,
    1,
  );
}

/**
 * Tracks usage and concurrency of every key.
 *
 * @example
 * ```ts
 * const limiter = new Limiter(keys, () => Date.now());
 * limiter.acquire(key);          // 429 past the concurrency limit
 * limiter.charge(key, 1);        // 429 past the 24 h limit (unless overage)
 * limiter.release(key);
 * ```
 */
export class Limiter {
  private readonly windows = new Map<number, Window>();
  private pending = new Map<number, Map<number, number>>();
  private readonly timer: NodeJS.Timeout | undefined;
  private waiters: (() => void)[] = [];
  private commitScheduled = false;

  /**
   * @param keys - where usage is persisted
   * @param now - wall clock in ms (injectable for tests)
   * @param flushEveryMs - write-behind period (0: only on flush/close)
   * @param heavyConcurrency - heavy requests a key may have in flight at once
   */
  constructor(
    private readonly keys: KeyStore,
    private readonly now: () => number = Date.now,
    flushEveryMs = 250,
    private readonly heavyConcurrency = DEFAULT_HEAVY_CONCURRENCY,
  ) {
    for (const r of keys.loadUsage(now())) this.window(r.key_id).add(r.second, r.cost);
    if (flushEveryMs > 0) {
      this.timer = setInterval(() => this.flush(), flushEveryMs);
      this.timer.unref();
    }
  }

  private window(id: number): Window {
    let w = this.windows.get(id);
    if (!w) {
      w = new Window();
      this.windows.set(id, w);
    }
    return w;
  }

  /** Cost used in the window now. */
  used(key: ApiKey): number {
    const w = this.window(key.id);
    w.prune(Math.floor(this.now() / 1000));
    return w.total;
  }

  /** Counts one more request in flight, or throws 429 past the concurrency limit. */
  acquire(key: ApiKey): void {
    const w = this.window(key.id);
    if (w.inflight >= key.concurrency) {
      throw concurrencyExceeded(key);
    }
    w.inflight++;
  }

  /** One request of the key finished. */
  release(key: ApiKey): void {
    const w = this.window(key.id);
    if (w.inflight > 0) w.inflight--;
  }

  /** Counts one more heavy request in flight (see the module description), or throws 429 past the cap. */
  acquireHeavy(key: ApiKey): void {
    const w = this.window(key.id);
    if (w.heavy >= this.heavyConcurrency) {
      throw heavyExceeded(this.heavyConcurrency);
    }
    w.heavy++;
  }

  /** One heavy request of the key finished. */
  releaseHeavy(key: ApiKey): void {
    const w = this.window(key.id);
    if (w.heavy > 0) w.heavy--;
  }

  /** Throws 429 when not even a request of cost 1 fits (checked before doing the work). */
  precheck(key: ApiKey): void {
    if (key.overage) return;
    const nowS = Math.floor(this.now() / 1000);
    const w = this.window(key.id);
    w.prune(nowS);
    if (w.total + 1 > key.limit) throw this.exhausted(key, w, 1, nowS);
  }

  private exhausted(key: ApiKey, w: Window, cost: number, nowS: number): Error {
    const wait = cost > key.limit ? WINDOW_SECONDS : w.secondsUntilFreed(w.total + cost - key.limit, nowS);
    return limitExceeded(key, w.total, cost, wait, this.headers(key, 0));
  }

  /**
   * Charges `cost` to the key, or throws 429 (charging nothing) when that would pass the limit
   * and the key has no overage. Synchronous: exact under concurrent requests.
   */
  charge(key: ApiKey, cost: number): void {
    const nowMs = this.now();
    const nowS = Math.floor(nowMs / 1000);
    const w = this.window(key.id);
    w.prune(nowS);
    if (!key.overage && w.total + cost > key.limit) throw this.exhausted(key, w, cost, nowS);
    w.add(nowS, cost);
    let p = this.pending.get(key.id);
    if (!p) {
      p = new Map();
      this.pending.set(key.id, p);
    }
    p.set(nowS, (p.get(nowS) ?? 0) + cost);
  }

  /** The limit headers of a response to `key` that cost `cost`. */
  headers(key: ApiKey, cost: number): LimitHeaders {
    const nowMs = this.now();
    const w = this.window(key.id);
    w.prune(Math.floor(nowMs / 1000));
    return limitHeaders(key, cost, { used: w.total, newest: w.newest(), inflight: w.inflight }, nowMs);
  }

  /**
   * Calls `done` once every charge made so far is committed: the charges of this turn of the event
   * loop are written in one transaction at its end (before the slices of long answers, slices.ts),
   * then every waiter of the turn is called.
   * A failed write is reported on stderr; the waiters are called all the same.
   */
  afterCommit(done: () => void): void {
    this.waiters.push(done);
    if (this.commitScheduled) return;
    this.commitScheduled = true;
    soon(() => {
      this.commitScheduled = false;
      const waiters = this.waiters;
      this.waiters = [];
      try {
        if (this.keys.isOpen) this.flush();
      } catch (e) {
        process.stderr.write(`xrate serve: usage not saved: ${(e as Error).message}\n`);
      }
      for (const w of waiters) w();
    });
  }

  /** Writes the usage charged since the last flush. */
  flush(): void {
    if (this.pending.size === 0) return;
    const rows: { keyId: number; second: number; cost: number }[] = [];
    for (const [keyId, m] of this.pending) for (const [second, cost] of m) rows.push({ keyId, second, cost });
    this.pending = new Map();
    this.keys.saveUsage(rows, this.now());
  }

  /** Flushes and stops the write-behind timer. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.keys.isOpen) this.flush();
  }
}
