/**
 * Starting the EMS gateway from options ({@link startEms}, which `xrate ems serve` calls): its
 * files read and checked, its data opened (a replay database, or a live engine replaying or
 * following a log), its keys, and the gateway listening.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { XrateError } from '../core/errors.js';
import type { EngineConfig } from '../core/config.js';
import { formatTime } from '../core/time.js';
import { ReplayStore } from '../io/store.js';
import type { RateProvider } from '../answers/index.js';
import { KeyStore } from '../http/keys.js';
import { listenOn } from '../http/listen.js';
import { createEmsApp } from '../ems/server.js';
import { PositionSource } from '../ems/positions.js';
import { loadSites } from '../ems/sites.js';
import { loadClientPem, loadTls } from '../ems/tls.js';
import { DEFAULT_DB } from './defaults.js';
import { openProvider, type ServiceIo } from './serve.js';

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
  const { provider } = await openProvider({ ...opts, db }, io, 'xrate ems serve');
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
