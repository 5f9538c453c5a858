/**
 * The `xrate serve` and `xrate keys` commands (src/cli/main.ts parses the flags and calls these).
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { EngineConfig } from '../core/config.js';
import { formatTime } from '../core/time.js';
import { ReplayStore } from '../io/store.js';
import { KeyStore, parseJwtKey, parseRights, DEFAULT_CONCURRENCY, DEFAULT_LIMIT, type ApiKey } from './keys.js';
import { startFollow, startReplay } from './live.js';
import { DatabaseRateProvider, type RateProvider } from './provider.js';
import { createService } from './server.js';

/** Output of the commands. */
export interface ServiceIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** Makes a bad-usage error (exit code 2) of the caller's kind. */
export type UsageErrorFactory = (message: string) => Error;

/** Default database of `serve` and `keys` (what `npm start` writes). */
export const DEFAULT_DB = 'out/xrate.sqlite';

/** Options of {@link startService}. */
export interface ServeOptions {
  db?: string;
  keys?: string;
  host?: string;
  port?: number;
  /** Replay this log first, then serve the engine. */
  replay?: string;
  /** With `replay`: keep reading the log as it grows, ticking on the wall clock. */
  follow?: boolean;
  format?: 'ndjson' | 'csv' | 'sqlite';
  config?: Partial<EngineConfig>;
  reorderWindowUs?: number;
  /** Follow: poll period, ms. */
  pollMs?: number;
}

/** A running service. */
export interface RunningService {
  app: FastifyInstance;
  url: string;
  provider: RateProvider;
  keys: KeyStore;
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
      provider = startFollow({ log: opts.replay, db, config: opts.config, pollMs: opts.pollMs, warn: (m) => io.err(`xrate serve: ${m}\n`) }).provider;
    } else {
      io.out(`replaying ${opts.replay} into ${db}\n`);
      provider = await startReplay({ log: opts.replay, db, config: opts.config, format: opts.format, reorderWindowUs: opts.reorderWindowUs });
    }
  } else {
    if (!existsSync(db)) {
      throw new Error(`xrate: no database at "${db}": run "npm start" (or "xrate replay LOG --db ${db}") first, or serve a log with --replay LOG`);
    }
    if (!ReplayStore.isReplayDatabase(db)) throw new Error(`xrate: "${db}" is not a database written by "xrate replay"`);
    provider = await DatabaseRateProvider.open(db);
  }
  let keys: KeyStore | undefined;
  try {
    keys = KeyStore.open(opts.keys ?? db);
    let devKey: string | undefined;
    if (keys.activeCount() === 0) {
      devKey = keys.create({ name: 'dev' }).key;
    }
    const app = await createService({ provider, keys });
    const host = opts.host ?? '127.0.0.1';
    await app.listen({ host, port: opts.port ?? 3000 });
    const addr = app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? 3000);
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    const info = provider.info();
    const span = info.firstTick !== undefined && info.lastTick !== undefined ? `ticks ${formatTime(info.firstTick)} .. ${formatTime(info.lastTick)}` : 'no tick yet';
    io.out(`xrate serve: listening on ${url} (${info.mode}: ${info.source}, ${info.pairs} pairs, ${span})\n`);
    if (devKey) {
      io.out(
        `created a local development key "dev" (limit ${DEFAULT_LIMIT} requests per 24 h, concurrency ${DEFAULT_CONCURRENCY}) in ${keys.path}; ` +
          `it is shown only now:\n${devKey}\n` +
          `try: curl -H 'X-CoinAPI-Key: ${devKey}' ${url}/v1/exchangerate/BTC/USD\n`,
      );
    } else {
      io.out(`keys: ${keys.activeCount()} active in ${keys.path} (xrate keys list / create)\n`);
    }
    const k = keys;
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
        k.close();
      },
    };
  } catch (e) {
    keys?.close();
    await provider.close();
    throw e;
  }
}

type Values = Record<string, string | boolean | string[] | undefined>;

function int(name: string, v: string | boolean | string[] | undefined, min: number, max: number, usage: UsageErrorFactory): number | undefined {
  if (v === undefined) return undefined;
  const s = String(v).trim();
  if (!/^\d+$/.test(s) || Number(s) < min || Number(s) > max) throw usage(`--${name} must be an integer in ${min}..${max}, got "${s}"`);
  return Number(s);
}

/** `xrate serve` with parsed flags: starts the service and keeps it running until SIGINT/SIGTERM. */
export async function serveCommand(
  values: Values,
  extra: { config?: Partial<EngineConfig>; format?: 'ndjson' | 'csv' | 'sqlite'; reorderWindowUs?: number },
  io: ServiceIo,
  usage: UsageErrorFactory,
): Promise<number> {
  const port = int('port', values.port, 0, 65535, usage);
  if (values.follow && !values.replay) throw usage('--follow needs --replay LOG (the NDJSON log to follow)');
  if (!values.replay && (extra.config !== undefined || extra.format !== undefined || extra.reorderWindowUs !== undefined)) {
    throw usage('--config, --format and --reorder-window apply to --replay LOG; a database answers with the config of its run');
  }
  const svc = await startService(
    {
      db: values.db as string | undefined,
      keys: values.keys as string | undefined,
      host: values.host as string | undefined,
      port,
      replay: values.replay as string | undefined,
      follow: !!values.follow,
      ...extra,
    },
    io,
  );
  const shutdown = (signal: string): void => {
    io.err(`xrate serve: ${signal}: closing\n`);
    svc.close().then(
      () => process.exit(0),
      (e: Error) => {
        io.err(`xrate serve: ${e.message}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  return 0;
}

function describeKey(k: ApiKey): string {
  return (
    `id ${k.id}, name "${k.name}", prefix ${k.prefix}, rights ${[...k.rights].join(',')}, ` +
    `limit ${k.limit} per 24 h${k.overage ? ' (overage enabled)' : ''}, concurrency ${k.concurrency}`
  );
}

function keyRef(values: Values, positionals: string[], usage: UsageErrorFactory): { id?: number; key?: string } {
  const id = int('id', values.id ?? positionals[0], 1, Number.MAX_SAFE_INTEGER, usage);
  const key = values.key as string | undefined;
  if (id === undefined && key === undefined) throw usage('give the key by --id N (see xrate keys list) or --key KEY');
  return { id, key };
}

/** `xrate keys create|list|revoke|jwt-import` with parsed flags. */
export async function keysCommand(sub: string | undefined, values: Values, positionals: string[], io: ServiceIo, usage: UsageErrorFactory): Promise<number> {
  const path = (values.keys as string | undefined) ?? (values.db as string | undefined) ?? DEFAULT_DB;
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke' && sub !== 'jwt-import') {
    throw usage(`keys: unknown subcommand ${sub === undefined ? '(none)' : `"${sub}"`} (expected create, list, revoke or jwt-import)`);
  }
  if (sub !== 'create' && !existsSync(path)) throw new Error(`xrate: no keys database at "${path}"`);
  const keys = KeyStore.open(path);
  try {
    switch (sub) {
      case 'create': {
        let rights;
        try {
          rights = parseRights(values.rights as string | undefined);
        } catch (e) {
          throw usage((e as Error).message.replace(/^xrate: /, '--rights: '));
        }
        const { key, record } = keys.create({
          name: (values.name as string | undefined) ?? 'key',
          limit: int('limit', values.limit, 1, Number.MAX_SAFE_INTEGER, usage),
          concurrency: int('concurrency', values.concurrency, 1, 1_000_000, usage),
          overage: !!values.overage,
          rights,
        });
        io.out(`created key ${describeKey(record)} in ${path}\n`);
        io.out('the key is shown only now; only its SHA-256 is stored:\n');
        io.out(`${key}\n`);
        return 0;
      }
      case 'list': {
        const rows = keys.list();
        if (values.json) {
          io.out(JSON.stringify(rows, null, 2) + '\n');
          return 0;
        }
        if (rows.length === 0) {
          io.out(`no keys in ${path} (xrate keys create)\n`);
          return 0;
        }
        const head = ['id', 'name', 'prefix', 'rights', 'limit', 'used_24h', 'overage', 'concurrency', 'jwt', 'created_at', 'revoked_at'];
        const table = rows.map((r) => [
          String(r.id),
          r.name,
          r.prefix,
          r.rights,
          String(r.limit),
          String(r.used_24h),
          r.overage ? 'yes' : 'no',
          String(r.concurrency),
          r.jwt ?? '-',
          r.created_at,
          r.revoked_at ?? '-',
        ]);
        const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => r[i].length)));
        for (const r of [head, ...table]) io.out(r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd() + '\n');
        return 0;
      }
      case 'revoke': {
        const id = keys.idOf(keyRef(values, positionals, usage));
        io.out(keys.revoke(id) ? `revoked key ${id}\n` : `key ${id} was already revoked\n`);
        return 0;
      }
      case 'jwt-import': {
        const id = keys.idOf(keyRef(values, positionals, usage));
        const pub = values['public-key'] as string | undefined;
        const secretFile = values['secret-file'] as string | undefined;
        const given = [pub, secretFile, values.remove ? 'remove' : undefined].filter((x) => x !== undefined).length;
        if (given !== 1) throw usage('jwt-import: give exactly one of --public-key FILE, --secret-file FILE or --remove');
        if (values.remove) {
          keys.setJwt(id, undefined);
          io.out(`key ${id}: JWT authentication removed\n`);
          return 0;
        }
        const read = (f: string): Buffer => {
          try {
            return readFileSync(f);
          } catch (e) {
            throw new Error(`xrate: cannot read "${f}": ${(e as Error).message}`);
          }
        };
        // A secret file's final line break (as `openssl rand -hex 32 > FILE` leaves) is not part of the secret.
        const secret = (): Buffer => {
          const b = read(secretFile!);
          const n = b.length >= 2 && b[b.length - 2] === 13 && b[b.length - 1] === 10 ? 2 : b.length >= 1 && b[b.length - 1] === 10 ? 1 : 0;
          return b.subarray(0, b.length - n);
        };
        const material = pub ? parseJwtKey({ publicKey: read(pub).toString('utf8') }) : parseJwtKey({ secret: secret() });
        keys.setJwt(id, material);
        const algs = material.kind === 'rsa' ? 'RS256, PS256' : material.kind === 'ec' ? 'ES256' : 'HS256';
        io.out(`key ${id}: JWT required from now on (${algs}; nbf and exp required), sent as Authorization: Bearer <token> with the key in X-CoinAPI-Key, apikey or an APIKEY- path segment\n`);
        return 0;
      }
    }
  } finally {
    keys.close();
  }
  return 0;
}
