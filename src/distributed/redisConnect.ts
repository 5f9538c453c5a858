/**
 * The first connection of a Redis client, shared by the queue (src/distributed/queue.ts) and the
 * service's keys and limits (src/http/redisKeys.ts): the credentials and TLS of
 * {@link RedisSecurity}, a bounded first connection, and an error that says what failed.
 *
 * @module
 */
import type { Redis, RedisOptions } from 'ioredis';
import { CLIENT_CERT_HINT, CONNECT_TIMEOUT_MS, connectFailure, type RedisSecurity } from './security.js';
import { XrateError } from '../core/errors.js';

/**
 * The client options of `security` for `url`: the ACL user and password (AUTH), and with a
 * `rediss://` URL the TLS material (CA, client certificate and key). Credentials in the URL itself
 * stay as ioredis reads them (a program's choice; the command line refuses them).
 */
export function redisAuthOptions(url: string, security: RedisSecurity | undefined): RedisOptions {
  const o: RedisOptions = {};
  if (security?.user !== undefined) o.username = security.user;
  if (security?.password !== undefined) o.password = security.password;
  if (/^rediss:/i.test(url)) {
    const { ca, cert, key } = security?.tls ?? {};
    o.tls = { ...(ca !== undefined && { ca }), ...(cert !== undefined && { cert }), ...(key !== undefined && { key }) };
  }
  return o;
}

/** Errors of ioredis's own command queue, which follow the one that says why a connection failed. */
const CLIENT_ECHOES = /max retries per request|enableOfflineQueue|Connection is closed/;

/**
 * Connects `conn` (made with `lazyConnect: true`); once connected it reconnects by itself as its
 * options say. The first connection failing, or not ready within `timeoutMs`, is an XrateError
 * saying why (`authentication failed`, `TLS verification failed`, refused, no answer), and the
 * client is stopped: it does not retry in the background.
 *
 * @param what - what is reached, for the message (e.g. "the queue at redis://10.0.0.5:6379"), without credentials
 */
export async function connectRedis(conn: Redis, what: string, timeoutMs: number = CONNECT_TIMEOUT_MS): Promise<Redis> {
  // The first error that says why (a refused AUTH, a certificate, the socket), not what the
  // client's own queue reports of it afterwards.
  let lastError: Error | undefined;
  conn.on('error', (e: Error) => {
    if (lastError === undefined || CLIENT_ECHOES.test(lastError.message)) lastError = e;
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Error(`no answer within ${timeoutMs / 1000} s`);
  try {
    await Promise.race([
      conn.connect(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(late), timeoutMs);
      }),
    ]);
  } catch (e) {
    conn.disconnect();
    const cause = lastError ?? (e as Error);
    let why = e === late ? `${late.message}${lastError ? ` (${connectFailure(lastError)})` : ''}` : connectFailure(cause);
    // A server that refuses a client certificate closes the connection without a word.
    if (conn.options.tls && (e === late || (cause as NodeJS.ErrnoException).code === 'ECONNRESET')) why += ` (${CLIENT_CERT_HINT})`;
    throw new XrateError('unavailable', `cannot reach ${what}: ${why}`);
  } finally {
    clearTimeout(timer);
  }
  return conn;
}
