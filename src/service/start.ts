/**
 * Starting the rate service from options: the data provider (a replay database, or a live engine
 * that replays or follows a log), the API keys (a development key on first start), the HTTP
 * server, and one banner line saying what is served. `xrate serve` calls it with its flags; a
 * program may call it directly.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { EngineConfig } from '../core/config.js';
import { formatTime } from '../core/time.js';
import { ReplayStore } from '../io/store.js';
import { KeyStore, DEFAULT_CONCURRENCY, DEFAULT_LIMIT } from './keys.js';
import { startFollow, startReplay } from './live.js';
import { DatabaseRateProvider, type RateProvider } from './provider.js';
import { RedisKeyStore } from './redisKeys.js';
import { createService } from './server.js';
import { OWN_METRICS } from '../core/engine/ownMetrics.js';
import type { MetricsSource } from '../core/metrics/source.js';

/** Output of the commands. */
export interface ServiceIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** Default database of `serve` and `keys` (what `npm start` writes). */
export const DEFAULT_DB = 'out/xrate.sqlite';

/** Options of {@link startService}. */
export interface ServeOptions {
  db?: string;
  keys?: string;
  /** Keep the keys, their usage and their requests in flight in Redis at this URL, shared by replicas (instead of SQLite). */
  redis?: string;
  host?: string;
  port?: number;
  /** Replay this log first, then serve the engine. */
  replay?: string;
  /** With `replay`: keep reading the log as it grows, ticking on the wall clock. */
  follow?: boolean;
  format?: 'ndjson' | 'csv' | 'sqlite';
  config?: Partial<EngineConfig>;
  reorderWindowUs?: number;
  /** Maximum line length of the log, bytes of UTF-8 (default 1 MiB). */
  maxLineBytes?: number;
  /** Follow: poll period, ms. */
  pollMs?: number;
  /** Heavy requests (history with a `limit` above 1000) a key may have in flight at once (default 2). */
  heavyConcurrency?: number;
}

/** A running service. */
export interface RunningService {
  app: FastifyInstance;
  url: string;
  provider: RateProvider;
  keys: KeyStore | RedisKeyStore;
  /** The development key created at this start, if any. */
  devKey: string | undefined;
  close(): Promise<void>;
}

/** Sets up the provider, the keys (creating a development key when there is none) and listens. */
export async function startService(opts: ServeOptions, io: ServiceIo): Promise<RunningService> {
  const db = opts.db ?? DEFAULT_DB;
  let provider: RateProvider;
  if (opts.replay) {
    if (!existsSync(opts.replay)) throw new Error(`xrate: cannot open "${opts.replay}": no such file`);
    if (opts.follow) {
      io.out(`following ${opts.replay} (rates and OHLC written to ${db})\n`);
      provider = startFollow({
        log: opts.replay,
        db,
        config: opts.config,
        maxLineBytes: opts.maxLineBytes,
        pollMs: opts.pollMs,
        warn: (m) => io.err(`xrate serve: ${m}\n`),
      }).provider;
    } else {
      io.out(`replaying ${opts.replay} into ${db}\n`);
      provider = await startReplay({
        log: opts.replay,
        db,
        config: opts.config,
        format: opts.format,
        reorderWindowUs: opts.reorderWindowUs,
        maxLineBytes: opts.maxLineBytes,
      });
    }
  } else {
    if (!existsSync(db)) {
      throw new Error(
        `xrate: no database at "${db}": run "npm start" (or "xrate replay LOG --db ${db}") first, or serve a log with --replay LOG`,
      );
    }
    if (!ReplayStore.isReplayDatabase(db)) throw new Error(`xrate: "${db}" is not a database written by "xrate replay"`);
    provider = await DatabaseRateProvider.open(db);
  }
  let keys: KeyStore | RedisKeyStore | undefined;
  let metricStore: ReplayStore | undefined;
  try {
    // The stored metrics: the served run's (550 while a replay into the file runs), or, following
    // a log, those the follower has written so far.
    let metrics: MetricsSource;
    if (provider instanceof DatabaseRateProvider) metrics = provider.metrics(OWN_METRICS);
    else {
      metricStore = ReplayStore.open(db, { readonly: true });
      metrics = metricStore.metrics(OWN_METRICS);
    }
    let devKey: string | undefined;
    if (opts.redis !== undefined) {
      keys = await RedisKeyStore.open(opts.redis);
      // Atomic: of replicas starting together on an empty Redis, one creates the key.
      devKey = (await keys.create({ name: 'dev' }, true))?.key;
    } else {
      keys = KeyStore.open(opts.keys ?? db);
      if (keys.activeCount() === 0) devKey = keys.create({ name: 'dev' }).key;
    }
    const app = await createService({ provider, keys, metrics, heavyConcurrency: opts.heavyConcurrency });
    const host = opts.host ?? '127.0.0.1';
    try {
      await app.listen({ host, port: opts.port ?? 3000 });
    } catch (e) {
      const err = e as Error & { code?: string };
      const where = `${host}:${opts.port ?? 3000}`;
      if (err.code === 'EADDRINUSE')
        throw new Error(`xrate: cannot listen on ${where}: the port is in use (choose another with --port, or --port 0 for any free port)`);
      if (err.code === 'EACCES') throw new Error(`xrate: cannot listen on ${where}: permission denied (ports below 1024 need privileges)`);
      if (err.code === 'EADDRNOTAVAIL') throw new Error(`xrate: cannot listen on ${where}: no such local address (--host)`);
      throw new Error(`xrate: cannot listen on ${where}: ${err.message}`);
    }
    const addr = app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? 3000);
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    const info = provider.info();
    const span =
      info.firstTick !== undefined && info.lastTick !== undefined
        ? `ticks ${formatTime(info.firstTick)} .. ${formatTime(info.lastTick)}`
        : 'no tick yet';
    io.out(`xrate serve: listening on ${url} (${info.mode}: ${info.source}, ${info.pairs} pairs, ${span})\n`);
    if (devKey) {
      io.out(
        `created a local development key "dev" (limit ${DEFAULT_LIMIT} requests per 24 h, concurrency ${DEFAULT_CONCURRENCY}) in ${keys.path}; ` +
          `it is shown only now:\n${devKey}\n` +
          `try: curl -H 'X-CoinAPI-Key: ${devKey}' ${url}/v1/exchangerate/BTC/USD\n`,
      );
    } else {
      const redis = keys instanceof RedisKeyStore ? ` --redis ${keys.path}` : '';
      io.out(`keys: ${await keys.activeCount()} active in ${keys.path} (xrate keys${redis} list / create)\n`);
    }
    const k = keys;
    const m = metricStore;
    let closed = false;
    return {
      app,
      url,
      provider,
      keys: k,
      devKey,
      async close() {
        if (closed) return;
        closed = true;
        await app.close();
        await provider.close();
        await k.close();
        m?.close();
      },
    };
  } catch (e) {
    await keys?.close();
    metricStore?.close();
    await provider.close();
    throw e;
  }
}
