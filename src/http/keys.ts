/**
 * API keys of the rate service, kept in SQLite (the `--db` file unless `--keys FILE`):
 *
 * - a key is 32 random hex digits in the 8-4-4-4-12 layout of the interface's keys; only its
 *   SHA-256 is stored (matching is case-insensitive: the hash is of the upper-cased key), plus
 *   its first 8 characters to tell keys apart in `xrate keys list`;
 * - per key: name, rights (the resources it may call), the 24 h request limit, whether overage is
 *   allowed, the concurrency limit, and optionally a JWT verification key (RSA or EC P-256
 *   public key, or an HMAC secret);
 * - the request usage of the sliding 24 h window (see limits.ts) lives in `api_key_usage`.
 *
 * The tables and statements are src/io/keyDb.ts; this module is what a key means.
 *
 * Keys are never logged. The HMAC secret of an HS256 key must be stored as is (verification
 * needs it): protect the keys file like a password file.
 *
 * @module
 */
import { createHash, createPublicKey, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { KeyDatabase, type KeyRow, type NewKeyRow } from '../io/keyDb.js';
import { RIGHTS, type Right } from './rights.js';
import { XrateError } from '../core/errors.js';

export { RIGHTS, type Right } from './rights.js';

/** Default 24 h request limit of a new key. */
export const DEFAULT_LIMIT = 1_000_000;
/** Default concurrency limit of a new key. */
export const DEFAULT_CONCURRENCY = 100;

/** Kind of JWT verification key. */
export type JwtKind = 'rsa' | 'ec' | 'hmac';

/** Algorithms accepted per kind of JWT key (the allow-list: nothing else, never `none`). */
export const JWT_ALGORITHMS: Record<JwtKind, readonly string[]> = {
  rsa: ['RS256', 'PS256'],
  ec: ['ES256'],
  hmac: ['HS256'],
};

/** A key as the service uses it. */
export interface ApiKey {
  id: number;
  name: string;
  /** First 8 characters of the key. */
  prefix: string;
  rights: ReadonlySet<Right>;
  /** Request cost allowed per sliding 24 h. */
  limit: number;
  overage: boolean;
  concurrency: number;
  jwt: { kind: JwtKind; key: KeyObject; algorithms: readonly string[]; version: string } | undefined;
  createdAt: string;
  revokedAt: string | null;
}

/** A row of `xrate keys list`. */
export interface KeyListing {
  id: number;
  name: string;
  prefix: string;
  rights: string;
  limit: number;
  overage: boolean;
  concurrency: number;
  jwt: string | null;
  created_at: string;
  revoked_at: string | null;
  used_24h: number;
}

/** SHA-256 (hex) of a key, as stored. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key.trim().toUpperCase()).digest('hex');
}

/** A new random key: 32 hex digits as 8-4-4-4-12, upper case. */
export function generateKey(): string {
  const h = randomBytes(16).toString('hex').toUpperCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The rights of a stored key: `all` is every right, those of families added later included. */
function rightsOf(stored: string): Set<Right> {
  if (stored === 'all') return new Set(RIGHTS);
  return new Set(stored.split(',').filter(Boolean) as Right[]);
}

/** Parses a rights list (`all` or comma-separated {@link RIGHTS}); throws an XrateError. */
export function parseRights(text: string | undefined): Right[] {
  if (text === undefined || text.trim().toLowerCase() === 'all') return [...RIGHTS];
  const out = new Set<Right>();
  for (const r of text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)) {
    if (!(RIGHTS as readonly string[]).includes(r))
      throw new XrateError('usage', `unknown right "${r}" (one of ${RIGHTS.join(', ')}, or all)`, { field: 'rights' });
    out.add(r as Right);
  }
  if (out.size === 0) throw new XrateError('usage', `no right listed (all, or a comma list of ${RIGHTS.join(', ')})`, { field: 'rights' });
  return RIGHTS.filter((r) => out.has(r));
}

/** Options of {@link KeyStore.create}. */
export interface CreateKeyOptions {
  name?: string;
  rights?: readonly Right[];
  limit?: number;
  overage?: boolean;
  concurrency?: number;
  /** ISO time of creation (default now). */
  createdAt?: string;
}

/** A parsed JWT verification key, ready to store. */
export interface JwtMaterial {
  kind: JwtKind;
  /** SPKI PEM (rsa, ec) or base64 of the secret (hmac). */
  stored: string;
}

/**
 * Reads a JWT verification key: a PEM public key or certificate (RSA, RSA-PSS, EC P-256), a JWK
 * (JSON) public key, or an HMAC secret (at least 32 bytes).
 *
 * @throws XrateError for a private key, another curve, a short secret or unreadable text.
 */
export function parseJwtKey(input: { publicKey?: string; secret?: Buffer }): JwtMaterial {
  if (input.secret) {
    if (input.secret.length < 32) throw new XrateError('input', `an HS256 secret must be at least 32 bytes (got ${input.secret.length})`);
    return { kind: 'hmac', stored: input.secret.toString('base64') };
  }
  const text = input.publicKey ?? '';
  if (/PRIVATE KEY/.test(text))
    throw new XrateError('input', 'that is a private key: import the public key (keep the private key to sign tokens)');
  let key: KeyObject;
  try {
    key = text.trim().startsWith('{') ? createPublicKey({ key: JSON.parse(text) as never, format: 'jwk' }) : createPublicKey(text);
  } catch (e) {
    throw new XrateError('input', `not a PEM or JWK public key: ${(e as Error).message}`);
  }
  const t = key.asymmetricKeyType;
  if (t === 'rsa' || t === 'rsa-pss') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < 2048) throw new XrateError('input', `RSA keys must have at least 2048 bits (got ${bits})`);
    return { kind: 'rsa', stored: key.export({ type: 'spki', format: 'pem' }) as string };
  }
  if (t === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve !== 'prime256v1') throw new XrateError('input', `EC keys must be on P-256 for ES256 (got ${curve})`);
    return { kind: 'ec', stored: key.export({ type: 'spki', format: 'pem' }) as string };
  }
  throw new XrateError('input', `unsupported key type ${t} (RSA for RS256/PS256, EC P-256 for ES256, or an HS256 secret)`);
}

/** The key of a stored row (SQLite's, or a Redis hash read as one). */
export function keyFromRow(r: KeyRow): ApiKey {
  let jwt: ApiKey['jwt'];
  if (r.jwt_kind && r.jwt_key) {
    const kind = r.jwt_kind as JwtKind;
    const key = kind === 'hmac' ? createSecretKey(Buffer.from(r.jwt_key, 'base64')) : createPublicKey(r.jwt_key);
    jwt = { kind, key, algorithms: JWT_ALGORITHMS[kind], version: hashKey(r.jwt_key).slice(0, 16) };
  }
  return {
    id: r.id,
    name: r.name,
    prefix: r.key_prefix,
    rights: rightsOf(r.rights),
    limit: r.request_limit,
    overage: r.overage === 1,
    concurrency: r.concurrency,
    jwt,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  };
}

/** The `xrate keys list` row of a stored key with `used`, its cost charged in the last 24 h. */
export function listingOf(r: KeyRow & { used: number }): KeyListing {
  return {
    id: r.id,
    name: r.name,
    prefix: r.key_prefix,
    rights: r.rights,
    limit: r.request_limit,
    overage: r.overage === 1,
    concurrency: r.concurrency,
    jwt: r.jwt_kind ? JWT_ALGORITHMS[r.jwt_kind as JwtKind].join('/') : null,
    created_at: r.created_at,
    revoked_at: r.revoked_at,
    used_24h: r.used,
  };
}

/**
 * A new key from `opts` (defaults filled in, limits checked): the clear key, shown once, and the
 * row to store (its hash, never the key).
 */
export function newKey(opts: CreateKeyOptions): { key: string; row: NewKeyRow } {
  const limit = opts.limit ?? DEFAULT_LIMIT;
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new XrateError('usage', `--limit must be a positive integer, got ${limit}`, { field: '--limit' });
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw new XrateError('usage', `--concurrency must be a positive integer, got ${concurrency}`, { field: '--concurrency' });
  const key = generateKey();
  const rights = opts.rights ?? RIGHTS;
  const all = RIGHTS.every((x) => rights.includes(x));
  const row: NewKeyRow = {
    key_hash: hashKey(key),
    key_prefix: key.slice(0, 8),
    name: opts.name ?? 'key',
    // Every right is stored as `all`, so the key also reaches the families added later.
    rights: all ? 'all' : rights.join(','),
    request_limit: limit,
    overage: opts.overage ? 1 : 0,
    concurrency,
    created_at: opts.createdAt ?? new Date().toISOString(),
  };
  return { key, row };
}

/**
 * The active keys in memory, found by their clear key: hashed on first sight, then remembered
 * (sparing the hash on the hot path).
 */
export class ActiveKeys {
  /** Clear key -> active key, for keys seen recently. */
  private readonly seen = new Map<string, ApiKey>();
  private readonly byHash = new Map<string, ApiKey>();

  /** The keys of `rows` (rows of revoked keys are left out). */
  constructor(rows: Iterable<KeyRow> = []) {
    for (const r of rows) if (r.revoked_at === null) this.byHash.set(r.key_hash, keyFromRow(r));
  }

  /** The active key matching `key` (hashed), or undefined. */
  find(key: string): ApiKey | undefined {
    const hit = this.seen.get(key);
    if (hit) return hit;
    const k = this.byHash.get(hashKey(key));
    if (k) {
      if (this.seen.size >= 10_000) this.seen.clear();
      this.seen.set(key, k);
    }
    return k;
  }

  /** The active key with this id. */
  byId(id: number): ApiKey | undefined {
    for (const k of this.byHash.values()) if (k.id === id) return k;
    return undefined;
  }
}

/**
 * The keys table (and the usage table of limits.ts) in a SQLite file.
 *
 * @example
 * ```ts
 * const keys = KeyStore.open('out/xrate.sqlite');
 * const { key } = keys.create({ name: 'me', limit: 1000 });
 * keys.find(key)?.limit; // 1000
 * ```
 */
export class KeyStore {
  private active = new ActiveKeys();
  private dataVersion = -1;
  private checkedAt = -Infinity;

  private constructor(private readonly db: KeyDatabase) {
    this.reload();
  }

  /** Opens (creating the file and tables when missing) the keys database. */
  static open(path: string): KeyStore {
    return new KeyStore(KeyDatabase.open(path));
  }

  /** The keys database file. */
  get path(): string {
    return this.db.path;
  }

  /** Whether the keys database is still open. */
  get isOpen(): boolean {
    return this.db.isOpen;
  }

  close(): void {
    this.db.close();
  }

  /** Re-reads the keys when another connection changed the file (checked at most every `everyMs`). */
  refresh(nowMs: number, everyMs = 1000): void {
    if (nowMs - this.checkedAt < everyMs) return;
    this.checkedAt = nowMs;
    if (this.db.dataVersion() !== this.dataVersion) this.reload();
  }

  /** Re-reads every key now. */
  reload(): void {
    this.dataVersion = this.db.dataVersion();
    this.active = new ActiveKeys(this.db.activeKeys());
  }

  /** The active key matching `key` (hashed), or undefined. */
  find(key: string): ApiKey | undefined {
    return this.active.find(key);
  }

  /** The active key with this id. */
  byId(id: number): ApiKey | undefined {
    return this.active.byId(id);
  }

  /** Number of active keys. */
  activeCount(): number {
    return this.db.activeCount();
  }

  /** Creates a key; the clear key is returned once and never stored. */
  create(opts: CreateKeyOptions = {}): { key: string; record: ApiKey } {
    const { key, row } = newKey(opts);
    const id = this.db.insert(row);
    this.reload();
    return { key, record: this.byId(id)! };
  }

  /** Resolves `--id N` or `--key KEY` to a key id (active or not). */
  idOf(ref: { id?: number; key?: string }): number {
    if (ref.id !== undefined) {
      const id = this.db.findId({ id: ref.id });
      if (id === undefined) throw new XrateError('not_found', `no key with id ${ref.id}`);
      return id;
    }
    if (ref.key !== undefined) {
      const id = this.db.findId({ hash: hashKey(ref.key) });
      if (id === undefined) throw new XrateError('not_found', 'no such key');
      return id;
    }
    throw new XrateError('usage', 'give the key by --id N or --key KEY');
  }

  /** Revokes a key (it stops working within a second in a running server). */
  revoke(id: number, at = new Date().toISOString()): boolean {
    const revoked = this.db.revoke(id, at);
    this.reload();
    return revoked;
  }

  /** Registers (or with `undefined` removes) the JWT verification key of a key. */
  setJwt(id: number, material: JwtMaterial | undefined): void {
    this.db.setJwt(id, material?.kind ?? null, material?.stored ?? null);
    this.reload();
  }

  /** Every key with its usage of the last 24 h (`nowMs`). */
  list(nowMs = Date.now()): KeyListing[] {
    const since = Math.floor(nowMs / 1000) - 86_400;
    return this.db.keysWithUsage(since).map(listingOf);
  }

  /** Usage rows of the window ending at `nowMs` (oldest first). */
  loadUsage(nowMs: number): { key_id: number; second: number; cost: number }[] {
    return this.db.usageSince(Math.floor(nowMs / 1000) - 86_400);
  }

  /** Adds usage (one transaction) and drops rows older than the window. */
  saveUsage(rows: readonly { keyId: number; second: number; cost: number }[], nowMs: number): void {
    this.db.addUsage(rows, Math.floor(nowMs / 1000) - 86_400);
  }
}
