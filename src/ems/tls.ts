/**
 * TLS of the EMS gateway (docs/ems.md): the server's certificate and key (`--tls-cert`,
 * `--tls-key`: HTTPS), the CA whose client certificates authenticate a request in managed mode
 * (`--tls-client-ca`), and the client certificate PEM the management operation
 * `/v1/certificate/pem` hands out (`--client-pem`). Every file is read and checked at start, so a
 * wrong one stops the command with an `xrate:` message rather than failing the first handshake.
 *
 * @module
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TLSSocket } from 'node:tls';

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
    throw new Error(`xrate: cannot read ${what} "${path}": ${(e as Error).message}`);
  }
}

/** The certificates of a PEM text (at least one), or an `xrate:` error naming the file. */
function certificates(pem: string, path: string, what: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error(`xrate: ${what} "${path}" holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return blocks.map((b) => {
    try {
      return new X509Certificate(b);
    } catch (e) {
      throw new Error(`xrate: ${what} "${path}" holds a certificate that cannot be read: ${(e as Error).message}`);
    }
  });
}

/**
 * Reads and checks the TLS files: the certificate must match the key, the client CA must hold
 * certificates. Undefined when no certificate is given (plain HTTP).
 *
 * @throws `xrate:` error for an unreadable file, a file that is not PEM, or a key that does not
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
    throw new Error('xrate: --tls-cert and --tls-key go together (HTTPS needs both)');
  const cert = read(files.cert, 'the TLS certificate');
  const key = read(files.key, 'the TLS key');
  const [leaf] = certificates(cert, files.cert, 'the TLS certificate');
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    throw new Error(`xrate: the TLS key "${files.key}" is not a readable private key: ${(e as Error).message}`);
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw new Error(`xrate: the TLS key "${files.key}" does not match the certificate "${files.cert}"`);
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

/**
 * What a connection's client certificate says: none presented, trusted (signed by the client
 * CA, valid now), or refused with the TLS layer's reason.
 *
 * @example
 * ```ts
 * clientCertificate(req.raw.socket); // { presented: true, authorized: false, reason: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }
 * ```
 */
export function clientCertificate(socket: unknown): { presented: boolean; authorized: boolean; reason?: string } {
  const s = socket as Partial<TLSSocket>;
  if (typeof s.getPeerCertificate !== 'function') return { presented: false, authorized: false };
  const peer = s.getPeerCertificate();
  const presented = peer !== null && typeof peer === 'object' && Object.keys(peer).length > 0;
  if (!presented) return { presented: false, authorized: false };
  if (s.authorized === true) return { presented: true, authorized: true };
  const err = s.authorizationError;
  return { presented: true, authorized: false, reason: err === undefined || err === null ? 'not verified' : String(err) };
}
