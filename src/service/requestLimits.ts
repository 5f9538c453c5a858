/**
 * What the HTTP app asks of the request limits (limits.ts), wherever usage and concurrency are
 * kept: {@link RequestLimits}. Two implementations:
 *
 * - {@link localLimits}: the {@link Limiter} of one process (usage in memory, persisted in SQLite),
 *   synchronous — admission and charges happen in the request's own turn of the event loop;
 * - `RedisLimits` (redisLimits.ts): shared by every replica through atomic Redis scripts, so each
 *   step that needs the store is asynchronous (admission in the onRequest hook, the charge in the
 *   onSend hook, before the response leaves).
 *
 * The routes charge through {@link RequestLimits.charge} as soon as they know the cost; an
 * implementation may charge at once (and throw the 429) or record the cost for its onSend step.
 *
 * @module
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKey } from '../http/keys.js';
import { HEAVY_LIMIT, type LimitHeaders, type Limiter } from './limits.js';

/** The request limits as the HTTP app uses them (see the module description). */
export interface RequestLimits {
  /**
   * Admits a request of `key` (429 when not even a request of cost 1 fits, or past the concurrency
   * limit; 503 when the store is unreachable) and counts it in flight until its reply closes.
   */
  admit(req: FastifyRequest, reply: FastifyReply, key: ApiKey): void | Promise<void>;
  /** Charges the request of `req` `cost` (or records it for {@link onSend}) and marks it charged. */
  charge(req: FastifyRequest, reply: FastifyReply, cost: number): void;
  /** The limit headers of an error response to `key` that cost `cost`, as far as known now. */
  headers(req: FastifyRequest, key: ApiKey, cost: number): LimitHeaders;
  /** Counts a request as heavy (history `limit` above HEAVY_LIMIT) while in flight; 429 past the cap. */
  holdHeavy(req: FastifyRequest, reply: FastifyReply, limit: number): void;
  /**
   * The onSend step: what must happen before the response leaves (the charge committed, or made;
   * a refused charge turns the response into its 429).
   */
  onSend(req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): void;
  /** Stops the limits (flushes what is pending); the stores stay open. */
  close(): void | Promise<void>;
}

/**
 * The {@link RequestLimits} of one process's {@link Limiter}: everything synchronous, a charged
 * response sent once its charge is committed to SQLite ({@link Limiter.afterCommit}).
 */
export function localLimits(limiter: Limiter): RequestLimits {
  return {
    admit(_req, reply, key) {
      limiter.precheck(key);
      limiter.acquire(key);
      reply.raw.once('close', () => limiter.release(key));
    },
    charge(req, reply, cost) {
      const key = req.apiKey;
      if (!key) return;
      limiter.charge(key, cost);
      req.charged = true;
      reply.headers(limiter.headers(key, cost));
    },
    headers: (_req, key, cost) => limiter.headers(key, cost),
    holdHeavy(req, reply, limit) {
      const key = req.apiKey;
      if (!key || limit <= HEAVY_LIMIT) return;
      limiter.acquireHeavy(key);
      reply.raw.once('close', () => limiter.releaseHeavy(key));
    },
    // A charged response leaves only once its charge is committed (one transaction per turn of the
    // event loop), so a crash cannot lose usage that a client was answered for.
    onSend(req, _reply, payload, done) {
      if (!req.charged) return done(null, payload);
      limiter.afterCommit(() => done(null, payload));
    },
    close: () => limiter.close(),
  };
}
