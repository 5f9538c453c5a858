/**
 * Authentication: the six methods of the market-data interface.
 *
 * | method | where the key is |
 * |---|---|
 * | header | `X-CoinAPI-Key: KEY` (or the neutral `X-Service-Key: KEY`) |
 * | query | `?apikey=KEY` (name matched case-insensitively) |
 * | path | an `APIKEY-KEY` segment at the start, middle or end of the path (case-insensitive prefix), removed before routing |
 * | raw Authorization | `Authorization: KEY` |
 * | Basic | `Authorization: Basic base64("coinapi:KEY")` |
 * | JWT | `Authorization: Bearer JWT`, with the key passed by header, query or path |
 *
 * Rules: when several methods carry keys they must be the same key; a key with a registered JWT
 * key needs a valid token on every request (signature by the registered key, `alg` in the
 * allow-list of that key's kind: RS256/PS256, ES256 or HS256 — never `none`, so an HS256 token
 * "signed" with an RSA public key is refused; `nbf` and `exp` both present and
 * nbf <= now < exp); the key cannot then travel in the Authorization header (raw or Basic), which
 * the token occupies; a token sent with a key that has no JWT key is refused too.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import { unauthorized } from './errors.js';
import type { ApiKey } from './keys.js';

/** Where rewriteUrl leaves the keys found in `APIKEY-` path segments. */
export const PATH_KEYS = Symbol('xrate.pathKeys');

/** The raw request, with the keys stripped from its path. */
export type RawRequest = IncomingMessage & { [PATH_KEYS]?: string[] };

const APIKEY_SEGMENT = /^apikey-/i;

/**
 * fastify's `rewriteUrl`: removes every `APIKEY-<key>` path segment (case-insensitive prefix)
 * and remembers the keys on the request, so the route is resolved without them.
 *
 * @example
 * ```ts
 * stripPathKey({ url: '/v1/exchangerate/BTC/USD/APIKEY-73034021-THIS-IS-SAMPLE-KEY' } as RawRequest);
 * // '/v1/exchangerate/BTC/USD'
 * ```
 */
export function stripPathKey(req: RawRequest): string {
  const url = req.url ?? '/';
  const qi = url.indexOf('?');
  const path = qi < 0 ? url : url.slice(0, qi);
  if (!/apikey-/i.test(path)) return url;
  const keep: string[] = [];
  const found: string[] = [];
  for (const seg of path.split('/')) {
    if (APIKEY_SEGMENT.test(seg)) {
      let k = seg.slice(7);
      try {
        k = decodeURIComponent(k);
      } catch {
        // keep the raw text: it will not match a key
      }
      found.push(k);
    } else keep.push(seg);
  }
  req[PATH_KEYS] = found;
  let p = keep.join('/');
  if (!p.startsWith('/')) p = `/${p}`;
  return qi < 0 ? p : p + url.slice(qi);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Credentials found in a request. */
interface Credentials {
  /** Distinct keys, with the methods that carried them. */
  keys: Map<string, string[]>;
  /** True when the Authorization header carried the key (raw or Basic). */
  keyInAuthorization: boolean;
  token: string | undefined;
}

/** Every value of the apikey parameter (its name in any case, given any number of times). */
function queryKeys(query: unknown): string[] {
  if (query === null || typeof query !== 'object') return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(query as Record<string, unknown>)) {
    if (k.toLowerCase() === 'apikey') for (const x of Array.isArray(v) ? v : [v]) out.push(String(x));
  }
  return out;
}

function credentials(req: RawRequest, query: unknown): Credentials {
  const keys = new Map<string, string[]>();
  const add = (k: string | undefined, via: string): void => {
    if (k === undefined) return;
    const n = k.trim().toUpperCase();
    if (n === '') throw unauthorized(`Empty API key in ${via}`);
    const list = keys.get(n);
    if (list) list.push(via);
    else keys.set(n, [via]);
  };
  add(header(req, 'x-coinapi-key'), 'the X-CoinAPI-Key header');
  add(header(req, 'x-service-key'), 'the X-Service-Key header');
  for (const k of queryKeys(query)) add(k, 'the apikey parameter');
  for (const k of req[PATH_KEYS] ?? []) add(k, 'the APIKEY- path segment');
  let token: string | undefined;
  let keyInAuthorization = false;
  const auth = header(req, 'authorization')?.trim();
  if (auth) {
    const sp = auth.indexOf(' ');
    const scheme = sp < 0 ? '' : auth.slice(0, sp).toLowerCase();
    const rest = sp < 0 ? auth : auth.slice(sp + 1).trim();
    if (scheme === 'bearer') {
      if (!rest) throw unauthorized('Empty bearer token in the Authorization header');
      token = rest;
    } else if (scheme === 'basic') {
      const text = Buffer.from(rest, 'base64').toString('utf8');
      const colon = text.indexOf(':');
      if (colon < 0) throw unauthorized('Basic authentication needs "coinapi:<key>" (base64)');
      if (text.slice(0, colon).toLowerCase() !== 'coinapi')
        throw unauthorized('Basic authentication user must be "coinapi" (password: the API key)');
      add(text.slice(colon + 1), 'Basic authentication');
      keyInAuthorization = true;
    } else {
      add(auth, 'the Authorization header');
      keyInAuthorization = true;
    }
  }
  return { keys, keyInAuthorization, token };
}

/** Where the {@link Authenticator} finds keys: the SQLite `KeyStore` or the Redis `RedisKeyStore`, both held in memory. */
export interface KeySource {
  /** The active key matching the clear key `key`, or undefined. */
  find(key: string): ApiKey | undefined;
  /** Re-reads the keys when they changed (looked at no more than about once a second; never blocks). */
  refresh(nowMs: number): void;
}

interface CachedToken {
  keyId: number;
  version: string;
  nbf: number;
  exp: number;
}

/**
 * Finds the API key of a request (throws 401 XrateErrors, code `unauthorized`, with a specific message).
 * Synchronous unless a JWT must be verified; verified tokens are cached until they expire.
 */
export class Authenticator {
  private readonly tokens = new Map<string, CachedToken>();

  constructor(
    private readonly keys: KeySource,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key of the request, or a promise of it when a JWT has to be verified. */
  authenticate(req: RawRequest, query: unknown): ApiKey | Promise<ApiKey> {
    const nowMs = this.now();
    this.keys.refresh(nowMs);
    // Fast path: the X-CoinAPI-Key header alone.
    const h = req.headers['x-coinapi-key'];
    if (
      typeof h === 'string' &&
      req.headers.authorization === undefined &&
      req[PATH_KEYS] === undefined &&
      req.headers['x-service-key'] === undefined &&
      !/apikey/i.test(req.url ?? '')
    ) {
      const key = this.keys.find(h.trim());
      if (key && !key.jwt) return key;
    }
    const c = credentials(req, query);
    if (c.keys.size > 1) {
      throw unauthorized(`Conflicting API keys: ${[...c.keys.values()].map((v) => v.join(' and ')).join(' and ')} carry different keys`);
    }
    if (c.keys.size === 0) {
      if (c.token)
        throw unauthorized(
          'A JWT needs its API key alongside: pass the key in the X-CoinAPI-Key header, the apikey parameter or an APIKEY- path segment',
        );
      throw unauthorized(
        'Missing API key: pass it in the X-CoinAPI-Key header, the apikey parameter, an APIKEY- path segment or the Authorization header',
      );
    }
    const [clear] = c.keys.keys();
    const key = this.keys.find(clear);
    if (!key) throw unauthorized('Invalid API key');
    if (!key.jwt) {
      if (c.token) throw unauthorized('A JWT was given but this API key has no JWT key registered (xrate keys jwt-import)');
      return key;
    }
    if (c.keyInAuthorization) {
      throw unauthorized(
        'This API key requires a JWT, which travels in the Authorization header: the key itself cannot be passed there too (use the X-CoinAPI-Key header, the apikey parameter or an APIKEY- path segment)',
      );
    }
    if (!c.token) throw unauthorized('This API key requires a JWT: send Authorization: Bearer <token> signed with the key you registered');
    const nowS = nowMs / 1000;
    const hit = this.tokens.get(c.token);
    if (hit && hit.keyId === key.id && hit.version === key.jwt.version && hit.nbf <= nowS && nowS < hit.exp) return key;
    return this.verify(c.token, key, nowMs);
  }

  private async verify(token: string, key: ApiKey, nowMs: number): Promise<ApiKey> {
    const jwt = key.jwt!;
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw unauthorized('Malformed JWT: expected header.payload.signature (base64url)');
    }
    if (!alg || !jwt.algorithms.includes(alg)) {
      throw unauthorized(
        `JWT algorithm ${JSON.stringify(alg ?? null)} is not accepted for this API key (accepted: ${jwt.algorithms.join(', ')})`,
      );
    }
    try {
      const { payload } = await jwtVerify(token, jwt.key, {
        algorithms: [...jwt.algorithms],
        requiredClaims: ['nbf', 'exp'],
        currentDate: new Date(nowMs),
        clockTolerance: 0,
      });
      if (this.tokens.size >= 10_000) this.tokens.clear();
      this.tokens.set(token, { keyId: key.id, version: jwt.version, nbf: payload.nbf!, exp: payload.exp! });
      return key;
    } catch (e) {
      throw unauthorized(jwtMessage(e));
    }
  }
}

function jwtMessage(e: unknown): string {
  if (e instanceof joseErrors.JWTExpired) return 'JWT expired (exp is in the past)';
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    if (e.reason === 'missing') return `JWT lacks the required "${e.claim}" claim (nbf and exp are both required)`;
    if (e.claim === 'nbf') return 'JWT not yet valid (nbf is in the future)';
    return `JWT claim "${e.claim}" is invalid: ${e.message}`;
  }
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return 'JWT signature verification failed';
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return 'JWT algorithm is not accepted for this API key';
  if (e instanceof joseErrors.JWTInvalid || e instanceof joseErrors.JWSInvalid) return `Malformed JWT: ${(e as Error).message}`;
  return `JWT rejected: ${(e as Error).message}`;
}
