/**
 * The rate service's HTTP app (fastify): `APIKEY-` path segments stripped before routing,
 * authentication and limits in one onRequest hook, the exchange-rate routes, gzip/deflate by
 * `Accept-Encoding`, and every non-200 answered as JSON `{"message": "..."}`.
 *
 * Used by `xrate serve` and by the tests (listen on 127.0.0.1 port 0).
 *
 * @example
 * ```ts
 * const app = await createService({ provider, keys });
 * await app.listen({ host: '127.0.0.1', port: 0 });
 * ```
 *
 * @module
 */
import compress from '@fastify/compress';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { describeRoutes } from '../http/declare.js';
import { openApiDocument } from '../http/openapi.js';
import { SERVICE_ABOUT } from './api/serviceDocument.js';
import { Authenticator, stripPathKey, type RawRequest } from '../http/auth.js';
import { registerChartRoutes } from './chart.js';
import type { XrateError } from '../core/errors.js';
import { answerOf, errorBody, forbidden, NO_DATA, notFound } from '../http/errors.js';
import { CONTENT_TYPES } from '../http/format/index.js';
import type { MetricsSource } from '../core/metrics/source.js';
import { KeyStore, type ApiKey } from '../http/keys.js';
import { HeavyPool, type HeavyPoolOptions, type MetricsFrom } from './heavyPool.js';
import { Limiter } from './limits.js';
import type { RedisKeyStore } from '../http/redisKeys.js';
import { localLimits, type RequestLimits } from './requestLimits.js';
import { registerMetricRoutes } from './metrics.js';
import type { OpsMetrics, OpsOptions } from './ops.js';
import type { RateProvider } from '../answers/index.js';
import type { Offload } from './routeTable.js';
import { registerRoutes, type RouteConfig } from './routes.js';
import { registerSymbolRoutes } from './symbols.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key (set by the onRequest hook). */
    apiKey: ApiKey | null;
    /** Whether the request's cost has been charged. */
    charged: boolean;
  }
  interface FastifyInstance {
    /** The operations metrics' hooks (ops.ts). */
    ops: OpsMetrics;
  }
}

/** Options of {@link createService}. */
export interface ServiceOptions {
  provider: RateProvider;
  /** The keys: in SQLite (one process), or in Redis (usage and concurrency then shared by the replicas, redisLimits.ts). */
  keys: KeyStore | RedisKeyStore;
  /** The stored metrics answered by the `/v1/metrics/...` routes (none: those routes are 404). */
  metrics?: MetricsSource;
  /** Wall clock, ms (injectable for tests of the 24 h window and JWT times). */
  now?: () => number;
  /** Write-behind period of the usage table, ms (default 250). */
  flushEveryMs?: number;
  /** Smallest body compressed when the client accepts gzip/deflate (default 0: always). */
  compressThreshold?: number;
  /** Heavy requests (history with a `limit` above 1000) a key may have in flight at once (default 2). */
  heavyConcurrency?: number;
  /** Sources of `/readyz` and `/metrics` (ops.ts). */
  ops?: OpsOptions;
  /** Where internal errors are reported (default: a line on stderr). */
  log?: { error(obj: object, msg: string): void };
  /** With keys in Redis: how long this replica's in-flight counts outlive its last heartbeat, ms (default 5000). */
  replicaTtlMs?: number;
  /**
   * Answer charts and long metric timeseries on worker threads reading this database (heavyPool.ts),
   * `metricsFrom` saying how `metrics` reads it; none: on the event loop.
   */
  heavy?: HeavyPoolOptions & { db: string; metricsFrom: MetricsFrom };
}

/** What the onRequest hook needs to know about a route. */
function routeRight(req: FastifyRequest): RouteConfig['right'] | undefined {
  return (req.routeOptions.config as Partial<RouteConfig> | undefined)?.right;
}

const RIGHT_NAMES: Record<RouteConfig['right'], string> = {
  rate: 'specific rates (/v1/exchangerate/{base}/{quote})',
  rates: 'all current rates (/v1/exchangerate/{base})',
  periods: 'timeseries periods (/v1/exchangerate/history/periods)',
  history: 'timeseries data (/v1/exchangerate/{base}/{quote}/history)',
  explain: 'provenance (/v1/exchangerate/{base}/{quote}/explain)',
  metrics: 'metrics (/v1/metrics/...)',
  symbols: 'symbols (/v1/symbols/...)',
};

function clientError(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const body = errorBody(status === 431 ? 'Request header fields too large' : `Bad request: ${err.code ?? 'malformed HTTP'}`);
  socket.end(
    `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: ${CONTENT_TYPES.json}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\nX-RateLimit-Request-Cost: 0\r\n\r\n${body}`,
  );
}

/**
 * Builds the app (not listening). Closing it flushes the usage table; the provider and the key
 * store stay open (their owner closes them).
 */
export async function createService(opts: ServiceOptions): Promise<FastifyInstance> {
  const now = opts.now ?? Date.now;
  const limits: RequestLimits =
    opts.keys instanceof KeyStore
      ? localLimits(new Limiter(opts.keys, now, opts.flushEveryMs ?? 250, opts.heavyConcurrency))
      : // Loaded only for keys in Redis, as its client: every command of the CLI would start later.
        await (await import('./redisLimits.js')).RedisLimits.start(opts.keys.redis, {
          now,
          heavyConcurrency: opts.heavyConcurrency,
          replicaTtlMs: opts.replicaTtlMs,
        });
  const auth = new Authenticator(opts.keys, now);

  const app = Fastify({
    logger: false, // never log requests: keys travel in URLs and headers
    rewriteUrl: (req) => stripPathKey(req as RawRequest),
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, caseSensitive: false, maxParamLength: 200 },
    return503OnClosing: true,
    // Node would answer a request without Host with an empty 400; the hook below answers in JSON.
    http: { requireHostHeader: false },
    clientErrorHandler: clientError,
    frameworkErrors: (err, _req, res) => {
      const reply = res as FastifyReply;
      void reply
        .code(400)
        .header('content-type', CONTENT_TYPES.json)
        .header('x-ratelimit-request-cost', '0')
        .send(errorBody(`Bad request: ${err.message}`));
    },
  });
  app.decorateRequest('apiKey', null);
  app.decorateRequest('charged', false);
  app.addHook('onRequest', (req, reply, done) => {
    if (req.headers.host === undefined && req.raw.httpVersionMajor === 1 && req.raw.httpVersionMinor >= 1) {
      void reply
        .code(400)
        .header('content-type', CONTENT_TYPES.json)
        .header('x-ratelimit-request-cost', '0')
        .send(errorBody('Bad request: an HTTP/1.1 request needs a Host header'));
      return;
    }
    done();
  });
  // Before compression: a refused charge (limits in Redis) replaces the payload with its 429.
  app.addHook('onSend', (req, reply, payload, done) => limits.onSend(req, reply, payload, done));

  await app.register(compress, {
    global: true,
    threshold: opts.compressThreshold ?? 0,
    encodings: ['gzip', 'deflate'],
    customTypes: /^(application\/(json|xml|x-msgpack)|text\/(csv|plain|html|javascript|css))/,
  });
  // Every route from here on is registered from its declaration, and described at /openapi.json.
  describeRoutes(app, (routes) => openApiDocument(routes, SERVICE_ABOUT));

  const admit = (req: FastifyRequest, reply: FastifyReply, key: ApiKey, right: RouteConfig['right']): void | Promise<void> => {
    req.apiKey = key;
    if (!key.rights.has(right)) throw forbidden(`This API key has no access to ${RIGHT_NAMES[right]}`);
    return limits.admit(req, reply, key);
  };
  /** Admits the request of `key`, then calls `done` (with the refusal, if any). */
  const admitThen = (
    req: FastifyRequest,
    reply: FastifyReply,
    key: ApiKey,
    right: RouteConfig['right'],
    done: (e?: Error) => void,
  ): void => {
    let r: void | Promise<void>;
    try {
      r = admit(req, reply, key, right);
    } catch (e) {
      done(e as Error);
      return;
    }
    if (r instanceof Promise) r.then(() => done(), done);
    else done();
  };

  app.addHook('onRequest', (req, reply, done) => {
    const right = routeRight(req);
    if (right === undefined) {
      done();
      return;
    }
    let r: ApiKey | Promise<ApiKey>;
    try {
      r = auth.authenticate(req.raw as RawRequest, req.query);
    } catch (e) {
      done(e as Error);
      return;
    }
    if (r instanceof Promise) {
      r.then(
        (key) => admitThen(req, reply, key, right, done),
        (e: Error) => done(e),
      );
      return;
    }
    admitThen(req, reply, r, right, done);
  });

  // prom-client is loaded by the service only: every command of the CLI would start later.
  const { registerOps } = await import('./ops.js');
  const heavy = opts.heavy;
  const pool = heavy ? new HeavyPool(heavy) : undefined;
  app.decorate('ops', registerOps(app, opts.provider, { ...opts.ops, ...(pool && { heavy: () => pool.load() }) }));
  registerRoutes(app, opts.provider, limits);
  registerChartRoutes(app, opts.provider, limits, pool);
  if (opts.metrics) {
    const offload: Offload | undefined =
      pool && heavy
        ? (path, query, format) => pool.run({ kind: 'metrics', db: heavy.db, from: heavy.metricsFrom, path, query, format })
        : undefined;
    registerMetricRoutes(app, opts.metrics, { limits, offload });
  }
  registerSymbolRoutes(app, opts.provider, { limits });

  app.setNotFoundHandler((req, reply) => {
    void reply
      .code(404)
      .header('content-type', CONTENT_TYPES.json)
      .header('x-ratelimit-request-cost', '0')
      .send(errorBody(notFound(req.method, req.url).message));
  });

  app.setErrorHandler((err: FastifyError, req, reply) => {
    let status: number;
    let message: string;
    let headers: Record<string, string> = {};
    // An error of xrate is answered with its code's status, but a 500 (a broken invariant, a failed
    // run) says no more than any unexpected error: "Internal error", the details in the log.
    const answer = answerOf(err);
    if (answer) {
      status = answer.status;
      message = answer.message;
      headers = { ...answer.headers };
    } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      status = err.statusCode;
      message = err.message;
    } else {
      status = 500;
      message = 'Internal error';
      const where = `${req.method} ${req.url.split('?')[0]}`;
      if (opts.log) opts.log.error({ route: req.routeOptions.url, err: (err as Error).stack ?? String(err) }, `internal error on ${where}`);
      else process.stderr.write(`xrate serve: internal error on ${where}: ${(err as Error).stack ?? String(err)}\n`);
    }
    const key = req.apiKey;
    let cost = 0;
    if (key) {
      // An answered request (bad parameter, no data) costs 1; refusals (401, 403, 429) cost nothing.
      if (!req.charged && (status === 400 || status === 404 || status === 550)) {
        try {
          limits.charge(req, reply, 1);
          cost = 1;
        } catch (e) {
          const se = e as XrateError;
          status = se.status;
          message = se.message;
          headers = { ...se.headers };
        }
      }
      headers = { ...limits.headers(req, key, cost), ...headers };
    }
    headers['x-ratelimit-request-cost'] = String(cost);
    if (status === NO_DATA) reply.raw.statusMessage = 'No Data';
    void reply.code(status).headers(headers).header('content-type', CONTENT_TYPES.json).send(errorBody(message));
  });

  app.addHook('onClose', async () => {
    await pool?.close();
    await limits.close();
  });
  return app;
}
