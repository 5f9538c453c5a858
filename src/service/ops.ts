/**
 * What operations ask of a running service (docs/deploy.md), on routes that need no key:
 *
 * - `GET /healthz`: 200 `{"status":"ok"}` while the process serves (liveness);
 * - `GET /readyz`: 200 `{"status":"ready", ...}` when it can answer with current data, else 503
 *   `{"message": ..., ...}` (readiness): a replica is ready while NATS answers and its stream lag
 *   is at most its bound (`--ready-lag`), a database while it holds a completed run;
 * - `GET /metrics`: Prometheus text (prom-client): requests by route and status, their latency,
 *   and, for a live engine, events applied and rejected, ticks, the stream lag and the time the
 *   ticks take.
 *
 * The route label is the route's pattern (`/v1/exchangerate/:asset_id_base/:asset_id_quote`), or
 * `unmatched`, so that no key or asset id becomes a label.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Engine } from '../core/engine.js';
import { registerDeclared } from '../http/declare.js';
import { HEALTH_ROUTE, PROMETHEUS_ROUTE, READY_ROUTE } from './api/rateRoutes.js';
import { CONTENT_TYPES } from '../http/format/index.js';
import { answerOf } from '../http/errors.js';
import { DatabaseRateProvider, type RateProvider } from '../answers/index.js';

/** A readiness answer. */
export interface Readiness {
  ready: boolean;
  /** Why not, when not ready. */
  message?: string;
  /** Extra fields of the answer (e.g. the stream position). */
  detail?: Record<string, unknown>;
}

/**
 * Whether `provider` can answer: a database while no replay is writing into it and it holds a
 * computed tick; a live engine once it has ticked.
 */
export function providerReadiness(provider: RateProvider): Readiness {
  const why = provider instanceof DatabaseRateProvider ? provider.unavailable() : undefined;
  if (why !== undefined) return { ready: false, message: `Not ready: ${answerOf(why)?.message ?? why.message}` };
  if (provider.info().lastTick === undefined) return { ready: false, message: 'Not ready: no tick has been computed yet' };
  return { ready: true };
}

/** The operations routes' sources. */
export interface OpsOptions {
  /** Readiness now (default: the provider's, {@link providerReadiness}). */
  readiness?: () => Readiness;
  /** The live engine, whose statistics are exported. */
  engine?: () => Engine | undefined;
  /** The stream lag in messages, for a replica. */
  lag?: () => number | undefined;
  /** Heavy answers running and waiting on the worker threads (heavyPool.ts). */
  heavy?: () => { running: number; queued: number };
}

/** What {@link registerOps} returns: hooks for the numbers it cannot read itself. */
export interface OpsMetrics {
  /** Records the duration of the ticks computed before one event, seconds. */
  observeTicks(seconds: number): void;
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const TICK_BUCKETS = [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1];

/** Registers `/healthz`, `/readyz` and `/metrics` and the hook that counts requests. */
export function registerOps(app: FastifyInstance, provider: RateProvider, opts: OpsOptions = {}): OpsMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'xrate_http_requests_total',
    help: 'HTTP requests answered, by route pattern and status',
    labelNames: ['route', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'xrate_http_request_duration_seconds',
    help: 'Time from a request to its response, by route pattern',
    labelNames: ['route'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const ticks = new Histogram({
    name: 'xrate_tick_duration_seconds',
    help: 'Time the engine takes to compute the ticks pending before an event (one observation per event that moves the clock)',
    buckets: TICK_BUCKETS,
    registers: [registry],
  });
  // The engine's own counts, read at each scrape: counters (they only grow while the process runs).
  const engineCount = (name: string, help: string, read: (e: Engine) => number): void => {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const e = opts.engine?.();
        if (!e) return;
        this.reset();
        this.inc(read(e));
      },
    });
  };
  engineCount('xrate_events_applied_total', 'Events the live engine accepted', (e) =>
    Object.values(e.getStats().events).reduce((a, b) => a + b, 0),
  );
  engineCount('xrate_events_rejected_total', 'Records the live engine rejected', (e) =>
    Object.values(e.getStats().rejects).reduce((a, b) => a + (b ?? 0), 0),
  );
  engineCount('xrate_ticks_total', 'Ticks the live engine computed', (e) => e.getStats().ticks);
  new Gauge({
    name: 'xrate_last_tick_seconds',
    help: 'Event time of the last tick, seconds since the epoch',
    registers: [registry],
    collect() {
      const t = opts.engine?.()?.lastTickTime;
      if (t !== undefined) this.set(t / 1e6);
    },
  });
  new Gauge({
    name: 'xrate_stream_lag_messages',
    help: "Messages of the stream the replica has not applied yet (the stream's last sequence minus the last applied)",
    registers: [registry],
    collect() {
      const lag = opts.lag?.();
      if (lag !== undefined) this.set(lag);
    },
  });
  const heavy = opts.heavy;
  // Only where heavy answers run on worker threads (a service without them has nothing to show).
  if (heavy) {
    for (const [name, help, of] of [
      ['xrate_heavy_running', 'Heavy answers (charts, metric timeseries) computing on the worker threads', 'running'],
      ['xrate_heavy_queued', 'Heavy answers waiting for a worker thread', 'queued'],
    ] as const) {
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(heavy()[of]);
        },
      });
    }
  }

  // The labelled children of each route and status, looked up once: prom-client hashes the labels
  // at every call otherwise.
  const children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const key = `${reply.statusCode} ${route}`;
    let c = children.get(key);
    if (!c) {
      c = { count: requests.labels({ route, status: String(reply.statusCode) }), time: latency.labels({ route }) };
      children.set(key, c);
    }
    c.count.inc();
    c.time.observe(reply.elapsedTime / 1000);
    done();
  });

  registerDeclared(app, HEALTH_ROUTE, (_req, reply) => reply.header('content-type', CONTENT_TYPES.json).send('{"status":"ok"}'));
  registerDeclared(app, READY_ROUTE, (_req, reply) => {
    const r = opts.readiness?.() ?? providerReadiness(provider);
    if (r.ready) return reply.header('content-type', CONTENT_TYPES.json).send(JSON.stringify({ status: 'ready', ...r.detail }));
    return reply
      .code(503)
      .header('content-type', CONTENT_TYPES.json)
      .send(JSON.stringify({ message: r.message ?? 'not ready', ...r.detail }));
  });
  registerDeclared(app, PROMETHEUS_ROUTE, async (_req, reply) => {
    const text = await registry.metrics();
    return reply.header('content-type', registry.contentType).send(text);
  });
  return { observeTicks: (s) => ticks.observe(s) };
}
