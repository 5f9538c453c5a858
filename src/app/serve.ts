/**
 * Starting the rate service from options: the data provider (a replay database, or a live engine
 * that replays or follows a log), the API keys, the HTTP server, one banner line saying what is
 * served, and the development key when no key is active (made once listening, printed at once).
 * `xrate serve` calls it with its flags; a program may call it directly.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { EngineConfig } from '../core/config.js';
import { formatTime } from '../core/time.js';
import { ReplayStore } from '../io/store.js';
import { KeyStore, DEFAULT_CONCURRENCY, DEFAULT_LIMIT } from '../http/keys.js';
import { startFollow, startReplay } from '../service/live.js';
import { DatabaseRateProvider, type LiveRateProvider, type RateProvider } from '../answers/index.js';
import type { RedisKeyStore } from '../http/redisKeys.js';
import { listenOn } from '../http/listen.js';
import { createService } from '../service/server.js';
import type { Readiness } from '../service/ops.js';
import { DEFAULT_STREAM } from '../distributed/names.js';
import { type NatsSecurity, type RedisSecurity, redactUrl } from '../distributed/security.js';
import type { Replica } from '../distributed/replica.js';
import { OWN_METRICS } from '../core/engine/ownMetrics.js';
import type { MetricsSource } from '../core/metrics/source.js';
import { XrateError } from '../core/errors.js';
import { DEFAULT_DB } from './defaults.js';

/** Output of the commands. */
export interface ServiceIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

export { DEFAULT_DB };

/** Options of {@link startService}. */
export interface ServeOptions {
  db?: string;
  keys?: string;
  /** Keep the keys, their usage and their requests in flight in Redis at this URL, shared by replicas (instead of SQLite). */
  redis?: string;
  /** With `redis`: the ACL user, password and TLS material of the connection. */
  redisSecurity?: RedisSecurity;
  host?: string;
  port?: number;
  /** Replay this log first, then serve the engine. */
  replay?: string;
  /** Follow this growing plain NDJSON log into `db` (read as it grows, ticks on the wall clock), serving its engine. */
  follow?: string;
  format?: 'ndjson' | 'csv' | 'sqlite';
  config?: Partial<EngineConfig>;
  reorderWindowUs?: number;
  /** Maximum line length of the log, bytes of UTF-8 (default 1 MiB). */
  maxLineBytes?: number;
  /** Follow: poll period, ms. */
  pollMs?: number;
  /** Heavy requests (history with a `limit` above 1000) a key may have in flight at once (default 2). */
  heavyConcurrency?: number;
  /** Be a replica fed by this NATS server's JetStream stream (`stream`), writing `db` (src/distributed/replica.ts). */
  nats?: string;
  /** With `nats`: the credentials and TLS of the connection to NATS. */
  natsSecurity?: NatsSecurity;
  /** With `nats`: the stream (default `XRATE`). */
  stream?: string;
  /** With `nats`: event time between the replica's snapshots, µs (default 1 h). */
  snapshotEveryUs?: number;
  /** With `nats`: start from the newest snapshot of this other replica's database (copied into `db`, which must not exist). */
  snapshotFrom?: string;
  /** With `nats`: the stream lag (messages) under which `/readyz` answers ready (default 1000). */
  readyLag?: number;
  /** Structured logs (pino): this logger, or one writing JSON lines to stderr at `logLevel`. */
  logger?: Logger;
  /** Level of the default logger (default `silent`; `xrate serve` sets `info`). */
  logLevel?: string;
}

/** A running service. */
export interface RunningService {
  app: FastifyInstance;
  url: string;
  provider: RateProvider;
  keys: KeyStore | RedisKeyStore;
  /** The development key created at this start (once listening), if any. */
  devKey: string | undefined;
  /** The replica, when fed by a stream. */
  replica: Replica | undefined;
  logger: Logger;
  /**
   * Graceful stop: `/readyz` turns 503, the server stops accepting connections and finishes the
   * requests in flight, then the feed stops (a replica saves a snapshot) and the stores close.
   */
  close(): Promise<void>;
}

/**
 * The data provider of `opts` (shared by `xrate serve` and `xrate ems serve`): a replica of a
 * stream (`nats`, with the replica), a live engine that replays (`replay`) or follows (`follow`) a
 * log into `opts.db`, or the replay database `opts.db` (default {@link DEFAULT_DB});
 * says on `io` what it does. `command` names the
 * command in the follower's warnings.
 *
 * @throws XrateError for a missing log or database, or a file that is not a replay database
 */
export async function openProvider(
  opts: ServeOptions,
  io: ServiceIo,
  command = 'xrate serve',
  logger?: Logger,
): Promise<{ provider: RateProvider; replica?: Replica }> {
  const db = opts.db ?? DEFAULT_DB;
  let provider: RateProvider;
  let replica: Replica | undefined;
  if (opts.nats) {
    const { startReplica } = await import('../distributed/replica.js');
    const stream = opts.stream ?? DEFAULT_STREAM;
    io.out(`replica of the stream ${stream} on ${redactUrl(opts.nats)} (rates and OHLC written to ${db})\n`);
    replica = await startReplica({
      nats: opts.nats,
      natsSecurity: opts.natsSecurity,
      stream,
      db,
      config: opts.config,
      snapshotEveryUs: opts.snapshotEveryUs,
      snapshotFrom: opts.snapshotFrom,
      readyLag: opts.readyLag,
      log: logger ?? (await serviceLogger(opts)),
    });
    provider = replica.provider;
  } else if (opts.replay !== undefined || opts.follow !== undefined) {
    if (opts.replay !== undefined && opts.follow !== undefined)
      throw new XrateError('usage', '--replay LOG and --follow LOG exclude each other', { field: '--replay' });
    const log = (opts.follow ?? opts.replay) as string;
    if (!existsSync(log))
      throw new XrateError('input', `cannot open "${log}": no such file`, { field: opts.follow !== undefined ? '--follow' : '--replay' });
    if (opts.follow !== undefined) {
      io.out(`following ${log} (rates and OHLC written to ${db})\n`);
      provider = startFollow({
        log,
        db,
        config: opts.config,
        maxLineBytes: opts.maxLineBytes,
        pollMs: opts.pollMs,
        warn: (m) => io.err(`${command}: ${m}\n`),
      }).provider;
    } else {
      io.out(`replaying ${log} into ${db}\n`);
      provider = await startReplay({
        log,
        db,
        config: opts.config,
        format: opts.format,
        reorderWindowUs: opts.reorderWindowUs,
        maxLineBytes: opts.maxLineBytes,
      });
    }
  } else {
    if (!existsSync(db)) {
      throw new XrateError(
        'input',
        `no database at "${db}": run "npm start" (or "xrate replay LOG --db ${db}") first, or serve a log with --replay LOG`,
        { field: '--db' },
      );
    }
    if (!ReplayStore.isReplayDatabase(db)) throw new XrateError('input', `"${db}" is not a database written by "xrate replay"`);
    provider = await DatabaseRateProvider.open(db);
  }
  return { provider, replica };
}

/** The logger of `opts`, or one writing JSON lines to stderr at `opts.logLevel` (default silent). */
async function serviceLogger(opts: ServeOptions): Promise<Logger> {
  if (opts.logger) return opts.logger;
  // Loaded by the service only: every command of the CLI would start later.
  const { pino } = await import('pino');
  return pino({ level: opts.logLevel ?? 'silent', base: { service: 'xrate' } }, pino.destination(2));
}

/**
 * Sets up the provider and the keys, listens, and then creates a development key when no key is
 * active (printed on `io`; a start that fails creates none).
 */
export async function startService(opts: ServeOptions, io: ServiceIo): Promise<RunningService> {
  const db = opts.db ?? DEFAULT_DB;
  const logger = await serviceLogger(opts);
  const { provider, replica } = await openProvider(opts, io, 'xrate serve', logger);
  let keys: KeyStore | RedisKeyStore | undefined;
  let metricStore: ReplayStore | undefined;
  let listening: FastifyInstance | undefined;
  try {
    // The stored metrics: the served run's (550 while a replay into the file runs), or, following
    // a log, those the follower has written so far.
    let metrics: MetricsSource;
    if (provider instanceof DatabaseRateProvider) metrics = provider.metrics(OWN_METRICS);
    else {
      metricStore = ReplayStore.open(db, { readonly: true });
      metrics = metricStore.metrics(OWN_METRICS);
    }
    keys =
      opts.redis !== undefined
        ? await (await import('../http/redisKeys.js')).RedisKeyStore.open(opts.redis, opts.redisSecurity)
        : KeyStore.open(opts.keys ?? db);
    const ops = await import('../service/ops.js');
    let closing = false;
    const live = provider instanceof DatabaseRateProvider ? undefined : (provider as LiveRateProvider).engine;
    const r = replica;
    const shared = keys instanceof KeyStore ? undefined : keys;
    const readiness = (): Readiness => {
      if (closing) return { ready: false, message: 'The service is shutting down' };
      // Requests that need a key are 503 while the limits store is away.
      if (shared && shared.redis.status !== 'ready')
        return { ready: false, message: `Not ready: the keys and limits store (Redis at ${shared.path}) is unreachable` };
      if (r) {
        const s = r.status();
        const detail = { stream: s.stream, applied_seq: s.appliedSeq, stream_seq: s.streamSeq, lag: s.lag };
        if (s.error !== undefined) return { ready: false, message: `Not ready: ${s.error}`, detail };
        if (!s.connected) return { ready: false, message: `Not ready: the stream ${s.stream} cannot be read (NATS unreachable?)`, detail };
        if (!s.ready)
          return { ready: false, message: `Not ready: ${s.lag} messages of the stream behind (ready at ${s.readyLag} or fewer)`, detail };
        return { ready: true, detail };
      }
      return ops.providerReadiness(provider);
    };
    const app = await createService({
      provider,
      keys,
      metrics,
      heavyConcurrency: opts.heavyConcurrency,
      // Charts and long metric timeseries on worker threads, with their own connections to the file.
      heavy: { db, metricsFrom: provider instanceof DatabaseRateProvider ? 'database' : 'store' },
      ops: { readiness, engine: live ? () => live : undefined, lag: r ? () => r.status().lag : undefined },
      log: logger,
    });
    if (r) r.onTicks((s) => app.ops.observeTicks(s));
    listening = app;
    const host = opts.host ?? '127.0.0.1';
    const url = await listenOn(app, host, opts.port ?? 3000, 'http');
    const info = provider.info();
    const span =
      info.firstTick !== undefined && info.lastTick !== undefined
        ? `ticks ${formatTime(info.firstTick)} .. ${formatTime(info.lastTick)}`
        : 'no tick yet';
    // The development key is made only now that the service listens, and printed at once: a start
    // that fails leaves no key behind that nobody was shown.
    const devKey = await createDevKey(keys);
    io.out(`xrate serve: listening on ${url} (${info.mode}: ${info.source}, ${info.pairs} pairs, ${span})\n`);
    logger.info({ url, mode: info.mode, db: info.source, pairs: info.pairs }, 'listening');
    if (devKey) {
      io.out(
        `created a local development key "dev" (limit ${DEFAULT_LIMIT} requests per 24 h, concurrency ${DEFAULT_CONCURRENCY}) in ${keys.path}; ` +
          `it is shown only now:\n${devKey}\n` +
          `try: curl -H 'X-CoinAPI-Key: ${devKey}' ${url}/v1/exchangerate/BTC/USD\n`,
      );
    } else {
      const redis = keys instanceof KeyStore ? '' : ` --redis ${keys.path}`;
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
      replica: r,
      logger,
      async close() {
        if (closed) return;
        closed = true;
        closing = true;
        logger.info({}, 'shutting down: finishing the requests in flight');
        // A connection becomes idle when its request in flight is answered: close those as they
        // come (Node closes the idle ones only once, when closing starts; a keep-alive client
        // would hold the stop for its whole timeout).
        const idle = setInterval(() => app.server.closeIdleConnections(), 50);
        try {
          await app.close();
        } finally {
          clearInterval(idle);
        }
        // The read-only connection first: the last one to close checkpoints the database's WAL
        // into its file (so that a stopped replica's file can be copied on its own).
        m?.close();
        await provider.close();
        await k.close();
        logger.info({}, 'stopped');
        logger.flush();
      },
    };
  } catch (e) {
    await listening?.close();
    await keys?.close();
    metricStore?.close();
    await provider.close();
    throw e;
  }
}

/**
 * Creates the development key `dev` (default limits) when no key is active, and returns it (shown
 * once); undefined when a key is active. In Redis the check and the creation are one atomic step,
 * so of replicas starting together on an empty Redis, one creates the key.
 */
async function createDevKey(keys: KeyStore | RedisKeyStore): Promise<string | undefined> {
  if (keys instanceof KeyStore) return keys.activeCount() === 0 ? keys.create({ name: 'dev' }).key : undefined;
  return (await keys.create({ name: 'dev' }, true))?.key;
}
