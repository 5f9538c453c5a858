/**
 * The `xrate keys` command: creates, lists and revokes the API keys of the rate service and sets
 * their JWT keys.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { KeyStore, parseJwtKey, parseRights, type ApiKey, type Right } from '../service/keys.js';
import { int } from './args.js';
import { DEFAULT_DB, type ServiceIo } from '../service/start.js';
import type { UsageErrorFactory } from './serve.js';

/** The flags of `xrate keys` that {@link keysCommand} reads. */
export interface KeysFlags {
  db?: string;
  keys?: string;
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
    `id ${k.id}, name "${k.name}", prefix ${k.prefix}, rights ${[...k.rights].join(',')}, ` +
    `limit ${k.limit} per 24 h${k.overage ? ' (overage enabled)' : ''}, concurrency ${k.concurrency}`
  );
}

function keyRef(values: KeysFlags, positionals: string[], usage: UsageErrorFactory): { id?: number; key?: string } {
  const id = int('id', values.id ?? positionals[0], 1, Number.MAX_SAFE_INTEGER, usage);
  const key = values.key;
  if (id === undefined && key === undefined) throw usage('give the key by --id N (see xrate keys list) or --key KEY');
  return { id, key };
}

/** `xrate keys create|list|revoke|jwt-import` with parsed flags. */
export async function keysCommand(
  sub: string | undefined,
  values: KeysFlags,
  positionals: string[],
  io: ServiceIo,
  usage: UsageErrorFactory,
): Promise<number> {
  const path = values.keys ?? values.db ?? DEFAULT_DB;
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke' && sub !== 'jwt-import') {
    throw usage(`keys: unknown subcommand ${sub === undefined ? '(none)' : `"${sub}"`} (expected create, list, revoke or jwt-import)`);
  }
  if (sub !== 'create' && !existsSync(path)) throw new Error(`xrate: no keys database at "${path}"`);
  const keys = KeyStore.open(path);
  try {
    switch (sub) {
      case 'create': {
        let rights: Right[];
        try {
          rights = parseRights(values.rights);
        } catch (e) {
          throw usage((e as Error).message.replace(/^xrate: /, '--rights: '));
        }
        const { key, record } = keys.create({
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
        const rows = keys.list();
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
        const id = keys.idOf(keyRef(values, positionals, usage));
        io.out(keys.revoke(id) ? `revoked key ${id}\n` : `key ${id} was already revoked\n`);
        return 0;
      }
      case 'jwt-import': {
        const id = keys.idOf(keyRef(values, positionals, usage));
        const pub = values['public-key'];
        const secretFile = values['secret-file'];
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
        io.out(
          `key ${id}: JWT required from now on (${algs}; nbf and exp required), sent as Authorization: Bearer <token> with the key in X-CoinAPI-Key, apikey or an APIKEY- path segment\n`,
        );
        return 0;
      }
    }
  } finally {
    keys.close();
  }
  return 0;
}
