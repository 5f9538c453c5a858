/**
 * The EMS gateway (docs/ems.md): an HTTP or HTTPS app answering the positions of the event log
 * valued at xrate's own rates, and the management operations, self-hosted (no authentication) or
 * managed (an API key, or a TLS client certificate signed by the client CA); and
 * {@link startEms}, which `xrate ems serve` calls.
 *
 * @module
 */
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { EngineConfig } from '../core/config.js';
import { formatTime } from '../core/time.js';
import { ReplayStore } from '../io/store.js';
import { describeRoutes } from '../service/api/declare.js';
import { openApiDocument } from '../service/api/openapi.js';
import { Authenticator, type RawRequest } from '../service/auth.js';
import { isXrateError, XrateError } from '../core/errors.js';
import { errorBody, unauthorized } from '../service/errors.js';
import { KeyStore } from '../service/keys.js';
import type { RateProvider } from '../service/provider.js';
import { DEFAULT_DB, listenOn, openProvider, type ServiceIo } from '../service/start.js';
import { emsAbout } from './api.js';
import { EXCHANGE_UNREACHABLE, PositionSource, UnreachableError } from './positions.js';
import { type EmsData, registerEmsRoutes } from './routes.js';
import { loadSites } from './sites.js';
import { clientCertificate, judgeClientCertificates, loadClientPem, loadTls, type TlsMaterial } from './tls.js';

/** Options of {@link createEmsApp}. */
export interface EmsAppOptions extends EmsData {
  /** Managed mode: every request needs an API key of `keys` or a trusted client certificate. */
  managed?: { keys: KeyStore; now?: () => number };
  /** Serve HTTPS with this material; with `ca`, client certificates are asked for and checked. */
  tls?: TlsMaterial;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Builds the gateway app (not listening). The key store and the data stay open (their owner
 * closes them).
 *
 * @example
 * ```ts
 * const app = await createEmsApp({ positions, sites: { locations: [], endpoints: [] } });
 * await app.listen({ host: '127.0.0.1', port: 0 });
 * ```
 */
export async function createEmsApp(opts: EmsAppOptions): Promise<FastifyInstance> {
  const base = { logger: false, routerOptions: { ignoreTrailingSlash: true, caseSensitive: false } } as const;
  const tls = opts.tls;
  // A client certificate is asked for, never required by the handshake: a request without one
  // may still carry an API key, and a refused one gets a 401 saying why.
  const app = (tls
    ? Fastify({
        ...base,
        https: { cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: tls.ca !== undefined, rejectUnauthorized: false },
      })
    : Fastify(base)) as unknown as FastifyInstance;
  if (tls?.ca !== undefined) judgeClientCertificates(app.server, tls.ca);
  const managed = opts.managed;
  // Every route is registered from its declaration, and described at /openapi.json.
  describeRoutes(app, (routes) =>
    openApiDocument(
      routes,
      emsAbout({ managed: managed !== undefined, clientCertificates: managed !== undefined && tls?.ca !== undefined }),
    ),
  );
  if (managed) {
    const auth = new Authenticator(managed.keys, managed.now);
    app.addHook('onRequest', async (req) => {
      if (req.routeOptions.config?.api?.open) return;
      const cert = clientCertificate(req.raw.socket);
      if (cert.authorized) return;
      try {
        await auth.authenticate(req.raw as RawRequest, req.query);
      } catch (e) {
        if (!isXrateError(e, 'unauthorized') || !cert.presented) throw e;
        throw unauthorized(`The TLS client certificate was refused (${cert.reason}), and ${e.message}`);
      }
    });
  }
  registerEmsRoutes(app, opts);
  app.setNotFoundHandler((req, reply) => {
    void reply
      .code(404)
      .header('content-type', JSON_TYPE)
      .send(
        errorBody(
          `Unknown route ${req.method} ${req.url.split('?')[0]} (see docs/ems.md: /v1/positions, /v1/endpoints, /v1/locations, /v1/certificate/pem)`,
        ),
      );
  });
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err instanceof UnreachableError) {
      void reply.code(EXCHANGE_UNREACHABLE).header('content-type', JSON_TYPE).send(JSON.stringify(err.body));
      return;
    }
    if (isXrateError(err) && err.status !== 500) {
      void reply.code(err.status).header('content-type', JSON_TYPE).send(errorBody(err.message));
      return;
    }
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    void reply
      .code(status)
      .header('content-type', JSON_TYPE)
      .send(errorBody(status === 500 ? 'Internal error' : `Bad request: ${err.message}`));
  });
  return app;
}

/** Options of {@link startEms} (the flags of `xrate ems serve`). */
export interface EmsServeOptions {
  /** The replay database (read, or written by `replay`/`follow`; default out/xrate.sqlite). */
  db?: string;
  /** Replay this log into `db` first, then serve the engine. */
  replay?: string;
  /** Follow this growing NDJSON log into `db`, ticking on the wall clock. */
  follow?: string;
  host?: string;
  port?: number;
  managed?: boolean;
  /** The key store of managed mode (default: `db`). */
  keys?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsClientCa?: string;
  sites?: string;
  clientPem?: string;
  config?: Partial<EngineConfig>;
  format?: 'ndjson' | 'csv' | 'sqlite';
  reorderWindowUs?: number;
  maxLineBytes?: number;
  /** Follow: poll period, ms. */
  pollMs?: number;
}

/** A running gateway. */
export interface RunningEms {
  app: FastifyInstance;
  url: string;
  provider: RateProvider;
  close(): Promise<void>;
}

/**
 * Reads the files of `opts` (TLS, sites, client PEM: checked before anything starts), opens the
 * data (a replay database, or a live engine replaying or following a log), and listens.
 *
 * @throws XrateError for a bad file, a missing database or log, a port that cannot be had
 */
export async function startEms(opts: EmsServeOptions, io: ServiceIo): Promise<RunningEms> {
  if (opts.tlsClientCa !== undefined && opts.tlsCert === undefined) {
    throw new XrateError('input', '--tls-client-ca needs --tls-cert and --tls-key (client certificates travel in a TLS handshake)', {
      field: '--tls-client-ca',
    });
  }
  if (opts.tlsClientCa !== undefined && !opts.managed) {
    throw new XrateError(
      'input',
      '--tls-client-ca authenticates the managed mode: add --managed (a self-hosted gateway asks for no authentication)',
      { field: '--tls-client-ca' },
    );
  }
  const tls = loadTls({ cert: opts.tlsCert, key: opts.tlsKey, clientCa: opts.tlsClientCa });
  const sites = opts.sites === undefined ? { locations: [], endpoints: [] } : loadSites(opts.sites);
  const clientPem = opts.clientPem === undefined ? undefined : loadClientPem(opts.clientPem);
  const db = opts.db ?? DEFAULT_DB;
  const { provider } = await openProvider(
    { ...opts, db, replay: opts.follow ?? opts.replay, follow: opts.follow !== undefined },
    io,
    'xrate ems serve',
  );
  let store: ReplayStore | undefined;
  let keys: KeyStore | undefined;
  let app: FastifyInstance | undefined;
  try {
    store = ReplayStore.open(db, { readonly: true });
    if (opts.managed) keys = KeyStore.open(opts.keys ?? db);
    const served = await createEmsApp({
      positions: new PositionSource(provider, store),
      sites,
      clientPem,
      managed: keys ? { keys } : undefined,
      tls,
    });
    app = served;
    const url = await listenOn(served, opts.host ?? '127.0.0.1', opts.port ?? 3001, tls ? 'https' : 'http');
    const info = provider.info();
    const span = info.lastTick !== undefined ? `last tick ${formatTime(info.lastTick)}` : 'no tick yet';
    const auth = !keys
      ? 'self-hosted: no authentication'
      : `managed: API keys of ${keys.path}${tls?.ca !== undefined ? ' or a client certificate of the client CA' : ''}`;
    // Made only once listening, and printed at once: a start that fails leaves no unseen key behind.
    const devKey = keys && keys.activeCount() === 0 && tls?.ca === undefined ? keys.create({ name: 'dev' }).key : undefined;
    io.out(`xrate ems serve: listening on ${url} (${info.mode}: ${info.source}, ${span}; ${auth})\n`);
    if (devKey) io.out(`created a local development key "dev" in ${keys!.path}; it is shown only now:\n${devKey}\n`);
    const s = store;
    const k = keys;
    let closed = false;
    return {
      app: served,
      url,
      provider,
      async close() {
        if (closed) return;
        closed = true;
        await served.close();
        await provider.close();
        s.close();
        k?.close();
      },
    };
  } catch (e) {
    await app?.close();
    keys?.close();
    store?.close();
    await provider.close();
    throw e;
  }
}
