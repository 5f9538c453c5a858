/**
 * The credential and TLS flags of the commands that connect to NATS (`publish`, `serve --nats`)
 * or Redis (`serve --redis`, `keys --redis`, `worker --queue`, `replay --queue`), read by one parser
 * (docs/deploy.md, "Secured servers"). A secret comes from a file or the environment, never from a
 * flag's value or a URL: a command line is readable by every user of the machine (`ps`).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { type NatsSecurity, type RedisSecurity, type TlsMaterial, urlHasCredentials } from '../distributed/security.js';

/** The flags of a connection to NATS (spread into a command's option table). */
export const NATS_FLAGS = {
  'nats-user': { type: 'string' },
  'nats-password-file': { type: 'string' },
  'nats-token-file': { type: 'string' },
  'nats-nkey-file': { type: 'string' },
  'nats-creds': { type: 'string' },
  'nats-tls-ca': { type: 'string' },
  'nats-tls-cert': { type: 'string' },
  'nats-tls-key': { type: 'string' },
} as const;

/** The flags of a connection to Redis (spread into a command's option table). */
export const REDIS_FLAGS = {
  'redis-user': { type: 'string' },
  'redis-password-file': { type: 'string' },
  'redis-tls-ca': { type: 'string' },
  'redis-tls-cert': { type: 'string' },
  'redis-tls-key': { type: 'string' },
} as const;

/** The environment variables of the secrets (used when no file flag gives the secret). */
export const SECRET_ENV = {
  natsPassword: 'XRATE_NATS_PASSWORD',
  natsToken: 'XRATE_NATS_TOKEN',
  redisPassword: 'XRATE_REDIS_PASSWORD',
} as const;

/** Values of {@link NATS_FLAGS} as parsed. */
export type NatsFlagValues = { [K in keyof typeof NATS_FLAGS]?: string };

/** Values of {@link REDIS_FLAGS} as parsed. */
export type RedisFlagValues = { [K in keyof typeof REDIS_FLAGS]?: string };

type Usage = (message: string) => Error;
type Env = Readonly<Record<string, string | undefined>>;

const NATS_WAYS =
  `--nats-user NAME with the password in --nats-password-file FILE or ${SECRET_ENV.natsPassword}, ` +
  `a token in --nats-token-file FILE or ${SECRET_ENV.natsToken}, --nats-nkey-file FILE or --nats-creds FILE`;

/**
 * Refuses a URL that carries a user name, password or token (`nats://user:pass@host`): it would be
 * on the command line. The message says where credentials go instead.
 */
export function refuseUrlCredentials(flag: string, url: string, server: 'nats' | 'redis', usage: Usage): void {
  if (!urlHasCredentials(url)) return;
  const ways =
    server === 'nats' ? NATS_WAYS : `--redis-user NAME with the password in --redis-password-file FILE or ${SECRET_ENV.redisPassword}`;
  throw usage(`--${flag}: give no credentials in the URL (every user of the machine can read a command line, e.g. with ps): give ${ways}`);
}

/** Reads the file of flag `--flag`; an unreadable one is a usage error naming the flag. */
function readFlagFile(flag: string, path: string, usage: Usage): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw usage(`--${flag}: cannot read "${path}"${code ? ` (${code})` : ''}`);
  }
}

/** A secret of one line from the file of `--flag` (its final line break dropped), else from `env[name]`, else undefined. */
function secret(flag: string, path: string | undefined, env: Env, name: string | undefined, usage: Usage): string | undefined {
  if (path === undefined) {
    const v = name === undefined ? undefined : env[name];
    return v === undefined || v === '' ? undefined : v;
  }
  const text = readFlagFile(flag, path, usage).replace(/\r?\n$/, '');
  if (text === '') throw usage(`--${flag}: "${path}" is empty`);
  if (/[\r\n]/.test(text)) throw usage(`--${flag}: "${path}" holds more than one line`);
  return text;
}

/** PEM text from the file of `--flag`. */
function pem(flag: string, path: string, usage: Usage): string {
  const text = readFlagFile(flag, path, usage);
  if (!text.includes('-----BEGIN ')) throw usage(`--${flag}: "${path}" is not a PEM file (-----BEGIN ...)`);
  return text;
}

/** The TLS material of the flags `--{prefix}-tls-ca`, `-cert`, `-key`, or undefined when none is given. */
function tlsFlags(prefix: 'nats' | 'redis', values: Record<string, string | undefined>, usage: Usage): TlsMaterial | undefined {
  const ca = values[`${prefix}-tls-ca`];
  const cert = values[`${prefix}-tls-cert`];
  const key = values[`${prefix}-tls-key`];
  if (ca === undefined && cert === undefined && key === undefined) return undefined;
  if ((cert === undefined) !== (key === undefined))
    throw usage(`--${prefix}-tls-cert and --${prefix}-tls-key go together (a client certificate and its private key)`);
  return {
    ...(ca !== undefined && { ca: pem(`${prefix}-tls-ca`, ca, usage) }),
    ...(cert !== undefined && { cert: pem(`${prefix}-tls-cert`, cert, usage) }),
    ...(key !== undefined && { key: pem(`${prefix}-tls-key`, key, usage) }),
  };
}

/** The flags of `table` given in `values`, as `--name`. */
function given(table: object, values: Record<string, unknown>): string[] {
  return Object.keys(table)
    .filter((k) => values[k] !== undefined)
    .map((k) => `--${k}`);
}

/**
 * The credentials and TLS of the connection to NATS at `url` (undefined: no NATS connection, and
 * then none of {@link NATS_FLAGS} may be given). At most one way of authenticating: user and
 * password, token, NKey seed or `.creds` file; the password and the token come from their file
 * flag, else from `XRATE_NATS_PASSWORD` (with `--nats-user`) or `XRATE_NATS_TOKEN`.
 *
 * @returns undefined when nothing is given (an open server)
 */
export function natsSecurityFlags(
  url: string | undefined,
  values: NatsFlagValues,
  usage: Usage,
  env: Env = process.env,
): NatsSecurity | undefined {
  const v = values as Record<string, string | undefined>;
  if (url === undefined) {
    const flags = given(NATS_FLAGS, v);
    if (flags.length > 0) throw usage(`${flags.join(', ')}: for a connection to NATS (--nats URL)`);
    return undefined;
  }
  refuseUrlCredentials('nats', url, 'nats', usage);
  const explicit = [
    values['nats-user'] !== undefined || values['nats-password-file'] !== undefined ? '--nats-user' : undefined,
    values['nats-token-file'] !== undefined ? '--nats-token-file' : undefined,
    values['nats-nkey-file'] !== undefined ? '--nats-nkey-file' : undefined,
    values['nats-creds'] !== undefined ? '--nats-creds' : undefined,
  ].filter((x) => x !== undefined);
  if (explicit.length > 1) throw usage(`${explicit.join(' and ')}: give one way of authenticating to NATS`);
  const s: NatsSecurity = {};
  if (values['nats-password-file'] !== undefined && values['nats-user'] === undefined)
    throw usage('--nats-password-file is the password of --nats-user NAME: give both');
  if (values['nats-user'] !== undefined) {
    const password = secret('nats-password-file', values['nats-password-file'], env, SECRET_ENV.natsPassword, usage);
    if (password === undefined) throw usage(`--nats-user needs its password in --nats-password-file FILE or ${SECRET_ENV.natsPassword}`);
    s.user = values['nats-user'];
    s.password = password;
  } else if (values['nats-nkey-file'] !== undefined) {
    const seed = readFlagFile('nats-nkey-file', values['nats-nkey-file'], usage).trim();
    if (!/^SU[A-Z2-7]{56}$/.test(seed))
      throw usage(`--nats-nkey-file: "${values['nats-nkey-file']}" does not hold an NKey user seed (SU...)`);
    s.nkeySeed = seed;
  } else if (values['nats-creds'] !== undefined) {
    const creds = readFlagFile('nats-creds', values['nats-creds'], usage);
    if (!/-----BEGIN NATS USER JWT-----/.test(creds) || !/-----BEGIN USER NKEY SEED-----/.test(creds))
      throw usage(`--nats-creds: "${values['nats-creds']}" is not a .creds file (a user JWT and its NKey seed)`);
    s.creds = creds;
  } else {
    const token = secret('nats-token-file', values['nats-token-file'], env, SECRET_ENV.natsToken, usage);
    if (token !== undefined) s.token = token;
  }
  const tls = tlsFlags('nats', v, usage);
  if (tls) s.tls = tls;
  return Object.keys(s).length > 0 ? s : undefined;
}

/**
 * The credentials and TLS of the connection to Redis at `url`, given by `--flag` (`redis` or
 * `queue`; undefined: no Redis connection, and then none of {@link REDIS_FLAGS} may be given). The
 * password comes from `--redis-password-file`, else from `XRATE_REDIS_PASSWORD`; the TLS flags need
 * a `rediss://` URL.
 *
 * @returns undefined when nothing is given (an open server)
 */
export function redisSecurityFlags(
  flag: 'redis' | 'queue',
  url: string | undefined,
  values: RedisFlagValues,
  usage: Usage,
  env: Env = process.env,
): RedisSecurity | undefined {
  const v = values as Record<string, string | undefined>;
  if (url === undefined) {
    const flags = given(REDIS_FLAGS, v);
    if (flags.length > 0) throw usage(`${flags.join(', ')}: for a connection to Redis (--${flag} URL)`);
    return undefined;
  }
  refuseUrlCredentials(flag, url, 'redis', usage);
  const s: RedisSecurity = {};
  const password = secret('redis-password-file', values['redis-password-file'], env, SECRET_ENV.redisPassword, usage);
  if (values['redis-user'] !== undefined && password === undefined)
    throw usage(`--redis-user needs its password in --redis-password-file FILE or ${SECRET_ENV.redisPassword}`);
  if (values['redis-user'] !== undefined) s.user = values['redis-user'];
  if (password !== undefined) s.password = password;
  const tls = tlsFlags('redis', v, usage);
  if (tls) {
    if (!/^rediss:/i.test(url))
      throw usage(
        `${given(REDIS_FLAGS, v)
          .filter((f) => f.includes('-tls-'))
          .join(', ')}: TLS needs a rediss:// URL in --${flag}`,
      );
    s.tls = tls;
  }
  return Object.keys(s).length > 0 ? s : undefined;
}
