/**
 * The connection to NATS of `xrate publish` (publish.ts) and of replicas (replica.ts): the
 * credentials and TLS of {@link NatsSecurity}, a bounded first connection, and an error that names
 * the server and says what failed.
 *
 * @module
 */
import { connect, credsAuthenticator, nkeyAuthenticator, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { CLIENT_CERT_HINT, CONNECT_TIMEOUT_MS, connectFailure, type NatsSecurity, redactUrl } from './security.js';
import { XrateError } from '../core/errors.js';

/** The client options of `security` (its user, password, token, NKey or `.creds`; its TLS). */
export function natsAuthOptions(security: NatsSecurity | undefined): NodeConnectionOptions {
  if (!security) return {};
  const o: NodeConnectionOptions = {};
  if (security.user !== undefined) {
    o.user = security.user;
    o.pass = security.password;
  }
  if (security.token !== undefined) o.token = security.token;
  const enc = new TextEncoder();
  if (security.nkeySeed !== undefined) o.authenticator = nkeyAuthenticator(enc.encode(security.nkeySeed));
  if (security.creds !== undefined) o.authenticator = credsAuthenticator(enc.encode(security.creds));
  if (security.tls) {
    const { ca, cert, key } = security.tls;
    o.tls = { ...(ca !== undefined && { ca }), ...(cert !== undefined && { cert }), ...(key !== undefined && { key }) };
  }
  return o;
}

/**
 * Connects to NATS at `url` (one or several comma-separated servers), reconnecting by itself once
 * connected. The first connection is bounded by `timeoutMs`; its failure is an XrateError
 * naming the URL (without credentials) and why: `authentication failed`, `TLS verification
 * failed`, refused, no answer.
 */
export async function connectNats(
  url: string,
  name: string,
  security?: NatsSecurity,
  timeoutMs: number = CONNECT_TIMEOUT_MS,
): Promise<NatsConnection> {
  try {
    return await connect({
      servers: url.split(',').map((u) => u.trim()),
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      timeout: timeoutMs,
      ...natsAuthOptions(security),
    });
  } catch (e) {
    // A server that refuses a client certificate says nothing before the handshake times out.
    const tls = security?.tls !== undefined || /(^|,)\s*tls:/.test(url);
    const why =
      (e as Error).name === 'TimeoutError'
        ? `no handshake within ${timeoutMs / 1000} s${tls ? ` (${CLIENT_CERT_HINT})` : ''}`
        : connectFailure(e);
    throw new XrateError('unavailable', `cannot reach NATS at ${redactUrl(url)}: ${why}`);
  }
}
