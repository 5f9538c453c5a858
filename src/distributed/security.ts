/**
 * Credentials and TLS of the connections to NATS and Redis (docs/deploy.md, "Secured servers"),
 * with the helpers every command shares that load no client library: what a connection is given,
 * URLs shown without their credentials, and the words of a failed first connection.
 *
 * @module
 */

/** Bound of a first connection (NATS's handshake, Redis's connection and ready check), ms. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** TLS material of a connection, as PEM text (not paths). */
export interface TlsMaterial {
  /** The CA certificate(s) that the server's certificate must chain to (default: the system's). */
  ca?: string;
  /** A client certificate, for servers that verify clients (mutual TLS); with {@link key}. */
  cert?: string;
  /** The client certificate's private key. */
  key?: string;
}

/**
 * How a connection to NATS authenticates and encrypts: at most one of user and password, token,
 * NKey seed or `.creds` file; TLS when `tls` is set (or the URL is `tls://`).
 */
export interface NatsSecurity {
  user?: string;
  password?: string;
  token?: string;
  /** An NKey user's seed (`SU...`). */
  nkeySeed?: string;
  /** The text of a `.creds` file (a user JWT and its NKey seed, as `nsc` writes them). */
  creds?: string;
  tls?: TlsMaterial;
}

/** How a connection to Redis authenticates (AUTH: an ACL user, default `default`) and its TLS (`rediss://` URLs). */
export interface RedisSecurity {
  user?: string;
  password?: string;
  tls?: TlsMaterial;
}

/**
 * `url` (or a comma-separated list of URLs) without user names and passwords, for messages, logs
 * and stored run options. A text with an `@` and no scheme loses what comes before its last `@`.
 *
 * @example
 * ```ts
 * redactUrl('rediss://xr:s3cret@redis:6380/1'); // 'rediss://redis:6380/1'
 * ```
 */
export function redactUrl(url: string): string {
  return url
    .split(',')
    .map((u) => (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(u) ? u.replace(/^([^:]*:\/\/).*@/, '$1') : u.replace(/^.*@/, '')))
    .join(',');
}

/** Whether `url` (or one of a comma-separated list) carries a user name, password or token before its host. */
export function urlHasCredentials(url: string): boolean {
  return url.split(',').some((u) => (/:\/\//.test(u) ? /^[^:]*:\/\/.*@/.test(u) : u.includes('@')));
}

/** What is added to a reset connection or a silent server when TLS is on: the likely reason. */
export const CLIENT_CERT_HINT = 'with TLS: a client certificate the server requires is missing or not accepted?';

/** Certificate verification errors of Node's TLS (the `code` of the error). */
const TLS_VERIFY_CODES =
  /^(UNABLE_TO_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED|CERT_|ERR_TLS_CERT_ALTNAME|HOSTNAME_MISMATCH|INVALID_CA|INVALID_PURPOSE|PATH_LENGTH_EXCEEDED)/;

/**
 * Why a first connection failed, in words: `authentication failed (...)` for a refused user,
 * password, token or key, `TLS verification failed (...)` for a server certificate that does not
 * verify, `TLS handshake failed (...)` for another TLS error, else the client's message.
 */
export function connectFailure(e: unknown): string {
  const err = e as Error & { code?: unknown };
  const msg = err?.message ?? String(e);
  const code = typeof err?.code === 'string' ? err.code : '';
  if (err?.name === 'AuthorizationError' || /^(WRONGPASS|NOAUTH)\b|Authorization Violation|authentication/i.test(msg))
    return `authentication failed (${msg})`;
  if (TLS_VERIFY_CODES.test(code)) return `TLS verification failed (${msg})`;
  if (/^ERR_(TLS|SSL)_/.test(code) || /SSL routines|tlsv1 alert/i.test(msg)) return `TLS handshake failed (${msg})`;
  return msg;
}
