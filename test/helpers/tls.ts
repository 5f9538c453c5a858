/**
 * Certificates for the tests of secured servers, made with `openssl` in a folder: a CA, a server
 * certificate for 127.0.0.1 and localhost, a client certificate (mutual TLS), all signed by the CA,
 * and another CA that signed nothing of these (a wrong CA).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Paths of the PEM files made by {@link makeCertificates}. */
export interface TestCertificates {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA certificate that did not sign the server's. */
  otherCa: string;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Makes the certificates in `dir` (valid for 2 days). */
export function makeCertificates(dir: string): TestCertificates {
  const req = (name: string, cn: string): void =>
    openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
  const sign = (name: string, ext?: string): void =>
    openssl(
      dir,
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      ...(ext ? ['-extfile', ext] : []),
    );
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=xrate test CA',
  );
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'other.key',
    '-out',
    'other.crt',
    '-days',
    '2',
    '-subj',
    '/CN=other CA',
  );
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  req('server', 'localhost');
  sign('server', 'server.ext');
  req('client', 'xrate test client');
  sign('client');
  return {
    ca: join(dir, 'ca.crt'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.crt'),
    clientKey: join(dir, 'client.key'),
    otherCa: join(dir, 'other.crt'),
  };
}
