/**
 * TLS material made with the openssl command at test time (P-256 keys): a CA, a server
 * certificate for 127.0.0.1 and localhost signed by it, and client certificates that do and do not verify
 * against it; and an HTTPS request that presents one of them as a client such as curl does.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';

/** A certificate and its private key, PEM. */
export interface Pem {
  cert: string;
  key: string;
}

/** What {@link makeCertificates} makes. */
export interface Certificates {
  /** The CA trusted for clients (and the server's issuer), CN=ca. */
  ca: string;
  server: Pem;
  /** Client certificates: signed by the CA, valid now. */
  good: Pem;
  /** Signed by a CA of another name (CN=other-ca). */
  stranger: Pem;
  /** Signed by another CA of the same name as the trusted one (CN=ca, another key). */
  twin: Pem;
  /**
   * The stranger's certificate followed by a certificate of its issuer's name whose key did not
   * sign it (a chain whose signature OpenSSL checks and finds wrong).
   */
  forgedChain: Pem;
  /** Signed by an intermediate CA (CN=sub) of the CA, sent with the intermediate's certificate. */
  viaSub: Pem;
  /** The same through an intermediate CA (CN=old-sub) that expired on 2020-02-01. */
  viaExpiredSub: Pem;
  /** Signed by the CA, valid from 2020-01-01 to 2020-02-01. */
  expired: Pem;
  /** Signed by the CA, valid from 2040-01-01 to 2040-02-01. */
  future: Pem;
}

/** Makes the certificates of {@link Certificates} in `dir` (about a second). */
export function makeCertificates(dir: string): Certificates {
  const p = (n: string) => join(dir, n);
  const ossl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe', cwd: dir });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  const read = (name: string): Pem => ({ cert: readFileSync(p(`${name}.crt`), 'utf8'), key: readFileSync(p(`${name}.key`), 'utf8') });
  for (const [file, cn] of [
    ['ca', 'ca'],
    ['other-ca', 'other-ca'],
    ['twin-ca', 'ca'],
    ['other-twin-ca', 'other-ca'],
  ])
    ossl('req', '-x509', ...ec, '-keyout', p(`${file}.key`), '-out', p(`${file}.crt`), '-subj', `/CN=${cn}`, '-days', '2');
  writeFileSync(p('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  const request = (name: string) => ossl('req', ...ec, '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`), '-subj', `/CN=${name}`);
  const signed = (name: string, ca: string, ext?: string): Pem => {
    request(name);
    ossl(
      'x509',
      '-req',
      '-in',
      p(`${name}.csr`),
      '-CA',
      p(`${ca}.crt`),
      '-CAkey',
      p(`${ca}.key`),
      '-CAcreateserial',
      '-out',
      p(`${name}.crt`),
      '-days',
      '2',
      ...(ext ? ['-extfile', ext] : []),
    );
    return read(name);
  };
  // Chosen validity periods need `openssl ca` (x509 -not_before comes with OpenSSL 3.4).
  writeFileSync(p('index.txt'), '');
  writeFileSync(p('serial'), '1000\n');
  writeFileSync(
    p('ca.cnf'),
    '[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial\ndefault_md = sha256\npolicy = p\nunique_subject = no\n[p]\ncommonName = supplied\n[sub]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign\n',
  );
  const period = (name: string, start: string, end: string, ...extra: string[]): Pem => {
    request(name);
    ossl(
      'ca',
      '-batch',
      '-notext',
      '-config',
      p('ca.cnf'),
      '-cert',
      p('ca.crt'),
      '-keyfile',
      p('ca.key'),
      '-in',
      p(`${name}.csr`),
      '-out',
      p(`${name}.crt`),
      '-startdate',
      start,
      '-enddate',
      end,
      ...extra,
    );
    return read(name);
  };
  const stranger = signed('stranger', 'other-ca');
  const now = Date.now();
  const stamp = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace(/[-:T]/g, '')}Z`;
  const sub = period('sub', stamp(now - 86_400_000), stamp(now + 2 * 86_400_000), '-extensions', 'sub');
  const oldSub = period('old-sub', '20200101000000Z', '20200201000000Z', '-extensions', 'sub');
  const viaSub = signed('via-sub', 'sub');
  const viaOldSub = signed('via-old-sub', 'old-sub');
  return {
    ca: readFileSync(p('ca.crt'), 'utf8'),
    server: signed('server', 'ca', p('san.ext')),
    good: signed('client', 'ca'),
    stranger,
    forgedChain: { cert: stranger.cert + readFileSync(p('other-twin-ca.crt'), 'utf8'), key: stranger.key },
    twin: signed('twin', 'twin-ca'),
    viaSub: { cert: viaSub.cert + sub.cert, key: viaSub.key },
    viaExpiredSub: { cert: viaOldSub.cert + oldSub.cert, key: viaOldSub.key },
    expired: period('expired', '20200101000000Z', '20200201000000Z'),
    future: period('future', '20400101000000Z', '20400201000000Z'),
  };
}

/** The files of a server's and a client's certificates, as the servers and the CLI's flags take them. */
export interface CertificateFiles {
  /** The CA that signed the server's and the client's certificates. */
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA that signed neither (a wrong CA). */
  otherCa: string;
}

/**
 * Makes the certificates of {@link makeCertificates} in `dir` and names their files: the server's
 * (127.0.0.1 and localhost), a client's (`good`), both signed by the CA, and another CA.
 */
export function certificateFiles(dir: string): CertificateFiles {
  makeCertificates(dir);
  const p = (n: string) => join(dir, n);
  return {
    ca: p('ca.crt'),
    serverCert: p('server.crt'),
    serverKey: p('server.key'),
    clientCert: p('client.crt'),
    clientKey: p('client.key'),
    otherCa: p('other-ca.crt'),
  };
}

/** A response read in full. */
export interface TlsResponse {
  status: number;
  body: string;
}

/**
 * GET `url` (https, 127.0.0.1) trusting `ca`, presenting `client` if given, with `headers`. The
 * request is written once the server has sent its session ticket, that is once it has read the
 * whole handshake, so the request comes in a read of its own (as curl's does) rather than with the
 * handshake's last message. Rejects when the connection ends without a response.
 */
export function tlsGet(url: string, ca: string, client?: Pem, headers: Record<string, string> = {}): Promise<TlsResponse> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: u.hostname, port: Number(u.port), ca, ...client });
    const chunks: Buffer[] = [];
    socket.once('session', () =>
      setImmediate(() => {
        const lines = [`GET ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`, 'Connection: close'];
        for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
        socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      }),
    );
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', (e) => reject(new Error(`the connection failed: ${e.message}`)));
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const m = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      if (!m) {
        reject(new Error(`the connection ended without a response${text ? `: ${text.slice(0, 200)}` : ''}`));
        return;
      }
      const at = text.indexOf('\r\n\r\n');
      // fastify sends a JSON or text answer with its length: the body is the rest.
      const body = text.slice(at + 4);
      resolve({ status: Number(m[1]), body });
    });
  });
}
