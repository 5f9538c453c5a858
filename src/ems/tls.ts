/**
 * TLS of the EMS gateway (docs/ems.md): the server's certificate and key (`--tls-cert`,
 * `--tls-key`: HTTPS), the CA whose client certificates authenticate a request in managed mode
 * (`--tls-client-ca`), and the client certificate PEM the management operation
 * `/v1/certificate/pem` hands out (`--client-pem`). Every file is read and checked at start, so a
 * wrong one stops the command with an XrateError rather than failing the first handshake.
 *
 * @module
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TLSSocket } from 'node:tls';
import { formatTime } from '../core/time.js';
import { XrateError } from '../core/errors.js';

/** What the gateway's HTTPS server is given. */
export interface TlsMaterial {
  cert: string;
  key: string;
  /** Client certificates signed by this CA (or these CAs) are trusted. */
  ca?: string;
}

function read(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new XrateError('input', `cannot read ${what} "${path}": ${(e as Error).message}`);
  }
}

/** The certificates of a PEM text (at least one), or an XrateError naming the file. */
function certificates(pem: string, path: string, what: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new XrateError('input', `${what} "${path}" holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return blocks.map((b) => {
    try {
      return new X509Certificate(b);
    } catch (e) {
      throw new XrateError('input', `${what} "${path}" holds a certificate that cannot be read: ${(e as Error).message}`);
    }
  });
}

/**
 * Reads and checks the TLS files: the certificate must match the key, the client CA must hold
 * certificates. Undefined when no certificate is given (plain HTTP).
 *
 * @throws XrateError for an unreadable file, a file that is not PEM, or a key that does not
 *   match the certificate
 *
 * @example
 * ```ts
 * loadTls({ cert: 'server.crt', key: 'server.key', clientCa: 'clients-ca.crt' });
 * ```
 */
export function loadTls(files: { cert?: string; key?: string; clientCa?: string }): TlsMaterial | undefined {
  if (files.cert === undefined && files.key === undefined) return undefined;
  if (files.cert === undefined || files.key === undefined)
    throw new XrateError('input', '--tls-cert and --tls-key go together (HTTPS needs both)', { field: '--tls-key' });
  const cert = read(files.cert, 'the TLS certificate');
  const key = read(files.key, 'the TLS key');
  const [leaf] = certificates(cert, files.cert, 'the TLS certificate');
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    throw new XrateError('input', `the TLS key "${files.key}" is not a readable private key: ${(e as Error).message}`);
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw new XrateError('input', `the TLS key "${files.key}" does not match the certificate "${files.cert}"`);
  }
  const out: TlsMaterial = { cert, key };
  if (files.clientCa !== undefined) {
    out.ca = read(files.clientCa, 'the client CA');
    certificates(out.ca, files.clientCa, 'the client CA');
  }
  return out;
}

/**
 * Reads the client certificate PEM served by `/v1/certificate/pem`: it must hold a certificate
 * (and usually the private key that goes with it, for the client to present).
 *
 * @example
 * ```ts
 * const pem = loadClientPem('client.pem');
 * ```
 */
export function loadClientPem(path: string): string {
  const pem = read(path, 'the client certificate PEM');
  certificates(pem, path, 'the client certificate PEM');
  return pem;
}

/** What a connection's client certificate says: none presented, trusted, or refused and why. */
export interface ClientCertificate {
  presented: boolean;
  authorized: boolean;
  /** Why a presented certificate was refused, in words (the issuer, a signature, a date). */
  reason?: string;
}

const NONE: ClientCertificate = { presented: false, authorized: false };

/** The verdict of each TLS connection on its client certificate, made when its handshake ends. */
const verdicts = new WeakMap<object, ClientCertificate>();

/** A certificate's name as one line (`CN=desk-ca, O=Desk`). */
function nameOf(name: string): string {
  return name.split('\n').join(', ');
}

/** A certificate date (`Feb  1 00:00:00 2020 GMT`) in the service's time format. */
function dateOf(text: string): string {
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? formatTime(ms * 1000) : text;
}

/** The certificate at `i` of a chain sent by a client, in a sentence. */
function who(chain: readonly X509Certificate[], i: number): string {
  return i === 0 ? 'it' : `the certificate ${nameOf(chain[i].subject)} sent with it`;
}

/**
 * Why a client certificate is refused, given the chain the client sent (its certificate first,
 * then each one's issuer as sent), the CA certificates trusted, OpenSSL's verification code, and
 * now (ms). Who issued the chain is judged first (a certificate no trusted CA signed is refused
 * for that, whatever its dates), then each signature of the chain, then the validity periods; what
 * is left (a purpose, a constraint) keeps OpenSSL's code.
 *
 * @example
 * ```ts
 * refusal([peer], [ca], 'CERT_HAS_EXPIRED', Date.now()); // 'it expired at 2020-02-01T00:00:00.0000000Z'
 * ```
 */
export function refusal(chain: readonly X509Certificate[], cas: readonly X509Certificate[], code: string, nowMs: number): string {
  const trusted = cas.map((c) => nameOf(c.subject)).join('; ');
  const anchor = chain.findIndex((c) => cas.some((ca) => c.verify(ca.publicKey)));
  if (anchor < 0) {
    const top = chain.length - 1;
    const issuer = nameOf(chain[top].issuer);
    if (cas.some((ca) => ca.subject === chain[top].issuer)) {
      return `${who(chain, top)} names the client CA, ${issuer}, as its issuer, but its signature does not verify with the client CA's key: another CA of that name signed it`;
    }
    return `${who(chain, top)} was issued by ${issuer}, not by this gateway's client CA (${trusted})`;
  }
  for (let i = 0; i < anchor; i++) {
    if (!chain[i].verify(chain[i + 1].publicKey)) {
      return `${who(chain, i)} is not signed by the key of the certificate sent as its issuer, ${nameOf(chain[i + 1].subject)}`;
    }
  }
  for (let i = 0; i <= anchor; i++) {
    const c = chain[i];
    if (nowMs < Date.parse(c.validFrom)) return `${who(chain, i)} is not valid before ${dateOf(c.validFrom)}`;
    if (nowMs > Date.parse(c.validTo)) return `${who(chain, i)} expired at ${dateOf(c.validTo)}`;
  }
  return `it does not verify against this gateway's client CA (${trusted}): ${code || 'not verified'}`;
}

/**
 * Judges the client certificate of every TLS connection of `server` as its handshake ends, against
 * the CA certificates of `caPem` (the TLS layer's own verification decides; this says why it
 * refused); {@link clientCertificate} reads the verdict.
 *
 * The handshake asks for a certificate without requiring one or rejecting a bad one, so that a
 * refused certificate is a 401 saying why, and an API key still authenticates. When OpenSSL checks
 * a signature that does not verify (a certificate naming the trusted CA as its issuer, made with
 * another key), it leaves that error on the thread's error queue; Node's next read of the
 * connection would take it for its own and reset the connection. Checking the certificate here
 * with `X509Certificate.verify`, which clears the queue, before that read keeps the connection.
 *
 * @example
 * ```ts
 * judgeClientCertificates(app.server, tls.ca);
 * ```
 */
export function judgeClientCertificates(
  server: { on(event: 'secureConnection', listener: (socket: TLSSocket) => void): unknown },
  caPem: string,
): void {
  const cas = certificates(caPem, 'client CA', 'the client CA');
  const fingerprints = new Set(cas.map((ca) => ca.fingerprint256));
  server.on('secureConnection', (socket) => {
    const peer = socket.getPeerX509Certificate();
    if (peer === undefined) {
      verdicts.set(socket, NONE);
      return;
    }
    // The chain as sent, up to a trusted CA's own certificate (which Node appends when it has it).
    const chain: X509Certificate[] = [];
    for (let c: X509Certificate | undefined = peer; c !== undefined && chain.length < 16; c = c.issuerCertificate) {
      if (fingerprints.has(c.fingerprint256) || chain.some((x) => x.fingerprint256 === c!.fingerprint256)) break;
      chain.push(c);
    }
    // Always run (at least one verify of the client's certificate), also for a trusted one: it is
    // what clears OpenSSL's error queue (above).
    const reason = refusal(chain.length > 0 ? chain : [peer], cas, String(socket.authorizationError ?? ''), Date.now());
    verdicts.set(socket, socket.authorized ? { presented: true, authorized: true } : { presented: true, authorized: false, reason });
  });
}

/**
 * The verdict of {@link judgeClientCertificates} on a request's connection (none presented when
 * the connection is not TLS, or its server judges no certificate).
 *
 * @example
 * ```ts
 * clientCertificate(req.raw.socket); // { presented: true, authorized: false, reason: 'CERT_HAS_EXPIRED: it expired at ...' }
 * ```
 */
export function clientCertificate(socket: object): ClientCertificate {
  return verdicts.get(socket) ?? NONE;
}
