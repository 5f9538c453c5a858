/**
 * The `xrate keys` command: creates, lists and revokes the API keys of the rate service and sets
 * their JWT keys, in SQLite (the `--db` file, or `--keys FILE`) or with `--redis URL` in the Redis
 * that replicas of `xrate serve --redis URL` share.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import {
  type ApiKey,
  type CreateKeyOptions,
  type JwtMaterial,
  type KeyListing,
  KeyStore,
  parseJwtKey,
  parseRights,
  RIGHTS,
  type Right,
} from '../http/keys.js';
import { isRedisUrl } from '../distributed/redisUrl.js';
import type { RedisSecurity } from '../distributed/security.js';
import { type RedisFlagValues, redisSecurityFlags } from './connection.js';
import { int } from './args.js';
import { DEFAULT_DB } from '../app/defaults.js';
import type { ServiceIo } from '../app/serve.js';
import type { UsageErrorFactory } from './serve.js';
import { isXrateError, messageOf, XrateError } from '../core/errors.js';

/** The flags of `xrate keys` that {@link keysCommand} reads. */
export interface KeysFlags extends RedisFlagValues {
  db?: string;
  keys?: string;
  redis?: string;
  name?: string;
  limit?: string;
  concurrency?: string;
  overage?: boolean;
  rights?: string;
  json?: boolean;
  id?: string;
  key?: string;
  'public-key'?: string;
  'secret-file'?: string;
  remove?: boolean;
}

function describeKey(k: ApiKey): string {
  return (
    `id ${k.id}, name "${k.name}", prefix ${k.prefix}, rights ${RIGHTS.filter((r) => k.rights.has(r)).join(',')}, ` +
    `limit ${k.limit} per 24 h${k.overage ? ' (overage enabled)' : ''}, concurrency ${k.concurrency}`
  );
}

function keyRef(values: KeysFlags, positionals: string[], usage: UsageErrorFactory): { id?: number; key?: string } {
  const id = int('id', values.id ?? positionals[0], 1, Number.MAX_SAFE_INTEGER, usage);
  const key = values.key;
  if (id === undefined && key === undefined) throw usage('give the key by --id N (see xrate keys list) or --key KEY');
  return { id, key };
}

/** What the subcommands do to the keys, in SQLite or in Redis (each step awaited). */
interface KeyAdmin {
  readonly path: string;
  create(opts: CreateKeyOptions): Promise<{ key: string; record: ApiKey }>;
  list(): Promise<KeyListing[]>;
  idOf(ref: { id?: number; key?: string }): Promise<number>;
  revoke(id: number): Promise<boolean>;
  setJwt(id: number, material: JwtMaterial | undefined): Promise<void>;
  close(): Promise<void>;
}

function sqliteAdmin(path: string): KeyAdmin {
  const keys = KeyStore.open(path);
  return {
    path,
    create: async (o) => keys.create(o),
    list: async () => keys.list(),
    idOf: async (ref) => keys.idOf(ref),
    revoke: async (id) => keys.revoke(id),
    setJwt: async (id, m) => keys.setJwt(id, m),
    close: async () => keys.close(),
  };
}

async function redisAdmin(url: string, security: RedisSecurity | undefined): Promise<KeyAdmin> {
  // Loaded only here: the SQLite path does not load the Redis client.
  const { RedisKeyStore } = await import('../http/redisKeys.js');
  const { RedisLimits } = await import('../service/redisLimits.js');
  const keys = await RedisKeyStore.open(url, security);
  const fail = (e: unknown): never => {
    if (isXrateError(e)) throw e;
    throw new XrateError('unavailable', `Redis at ${keys.path}: ${messageOf(e)}`, { cause: e });
  };
  return {
    path: keys.path,
    create: async (o) => (await keys.create(o).catch(fail))!,
    list: () => keys.list((ids, since) => RedisLimits.usedSince(keys.redis, ids, since)).catch(fail),
    idOf: (ref) => keys.idOf(ref).catch(fail),
    revoke: (id) => keys.revoke(id).catch(fail),
    setJwt: (id, m) => keys.setJwt(id, m).catch(fail),
    close: () => keys.close(),
  };
}

/** `xrate keys create|list|revoke|jwt-import` with parsed flags. */
export async function keysCommand(
  sub: string | undefined,
  values: KeysFlags,
  positionals: string[],
  io: ServiceIo,
  usage: UsageErrorFactory,
): Promise<number> {
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke' && sub !== 'jwt-import') {
    throw usage(`keys: unknown subcommand ${sub === undefined ? '(none)' : `"${sub}"`} (expected create, list, revoke or jwt-import)`);
  }
  let keys: KeyAdmin;
  const redisSecurity = redisSecurityFlags('redis', values.redis, values, usage);
  if (values.redis !== undefined) {
    if (values.keys !== undefined || values.db !== undefined)
      throw usage('--redis keeps the keys in Redis: give it without --db or --keys');
    if (!isRedisUrl(values.redis))
      throw usage(`--redis must be a redis:// URL (redis://HOST[:PORT][/DB], or rediss:// for TLS), got "${values.redis}"`);
    keys = await redisAdmin(values.redis, redisSecurity);
  } else {
    const file = values.keys ?? values.db ?? DEFAULT_DB;
    if (sub !== 'create' && !existsSync(file)) throw new XrateError('input', `no keys database at "${file}"`);
    keys = sqliteAdmin(file);
  }
  const path = keys.path;
  try {
    switch (sub) {
      case 'create': {
        let rights: Right[];
        try {
          rights = parseRights(values.rights);
        } catch (e) {
          throw usage(`--rights: ${messageOf(e)}`);
        }
        const { key, record } = await keys.create({
          name: values.name ?? 'key',
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
        const rows = await keys.list();
        if (values.json) {
          io.out(`${JSON.stringify(rows, null, 2)}\n`);
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
        for (const r of [head, ...table])
          io.out(
            `${r
              .map((c, i) => c.padEnd(widths[i]))
              .join('  ')
              .trimEnd()}\n`,
          );
        return 0;
      }
      case 'revoke': {
        const id = await keys.idOf(keyRef(values, positionals, usage));
        io.out((await keys.revoke(id)) ? `revoked key ${id}\n` : `key ${id} was already revoked\n`);
        return 0;
      }
      case 'jwt-import': {
        const id = await keys.idOf(keyRef(values, positionals, usage));
        const pub = values['public-key'];
        const secretFile = values['secret-file'];
        const given = [pub, secretFile, values.remove ? 'remove' : undefined].filter((x) => x !== undefined).length;
        if (given !== 1) throw usage('jwt-import: give exactly one of --public-key FILE, --secret-file FILE or --remove');
        if (values.remove) {
          await keys.setJwt(id, undefined);
          io.out(`key ${id}: JWT authentication removed\n`);
          return 0;
        }
        const read = (f: string): Buffer => {
          try {
            return readFileSync(f);
          } catch (e) {
            throw new XrateError('input', `cannot read "${f}": ${(e as Error).message}`);
          }
        };
        // A secret file's final line break (as `openssl rand -hex 32 > FILE` leaves) is not part of the secret.
        const secret = (): Buffer => {
          const b = read(secretFile!);
          const n = b.length >= 2 && b[b.length - 2] === 13 && b[b.length - 1] === 10 ? 2 : b.length >= 1 && b[b.length - 1] === 10 ? 1 : 0;
          return b.subarray(0, b.length - n);
        };
        const material = pub ? parseJwtKey({ publicKey: read(pub).toString('utf8') }) : parseJwtKey({ secret: secret() });
        await keys.setJwt(id, material);
        const algs = material.kind === 'rsa' ? 'RS256, PS256' : material.kind === 'ec' ? 'ES256' : 'HS256';
        io.out(
          `key ${id}: JWT required from now on (${algs}; nbf and exp required), sent as Authorization: Bearer <token> with the key in X-CoinAPI-Key, apikey or an APIKEY- path segment\n`,
        );
        return 0;
      }
    }
  } finally {
    await keys.close();
  }
  return 0;
}
