/**
 * The credential and TLS flags of NATS and Redis connections (src/cli/connection.ts): secrets from
 * files or the environment, one way of authenticating, URLs refused when they carry credentials,
 * and every bad flag a usage error naming it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { natsSecurityFlags, redisSecurityFlags } from '../../../src/cli/connection.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-connection-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

class Usage extends Error {}
const usage = (m: string): Error => new Usage(m);
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const SEED = `SU${'A'.repeat(56)}`;
const NATS = 'nats://127.0.0.1:4222';

/** The usage error of `f`, or a failure when it does not throw one. */
function refused(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(Usage);
    return (e as Error).message;
  }
  throw new Error('no usage error');
}

describe('natsSecurityFlags', () => {
  it('nothing given: no security (an open server)', () => {
    expect(natsSecurityFlags(NATS, {}, usage, {})).toBeUndefined();
    expect(natsSecurityFlags(undefined, {}, usage, { XRATE_NATS_TOKEN: 't' })).toBeUndefined();
  });

  it('a user with the password from its file (final line break dropped) or from XRATE_NATS_PASSWORD', () => {
    const pw = file('pw', 'p@ss word\r\n');
    expect(natsSecurityFlags(NATS, { 'nats-user': 'xr', 'nats-password-file': pw }, usage, { XRATE_NATS_PASSWORD: 'env' })).toEqual({
      user: 'xr',
      password: 'p@ss word',
    });
    expect(natsSecurityFlags(NATS, { 'nats-user': 'xr' }, usage, { XRATE_NATS_PASSWORD: 'env' })).toEqual({ user: 'xr', password: 'env' });
    // The password variable belongs to --nats-user: alone it is not used.
    expect(natsSecurityFlags(NATS, {}, usage, { XRATE_NATS_PASSWORD: 'env' })).toBeUndefined();
  });

  it('a token from its file or XRATE_NATS_TOKEN; an NKey seed; a .creds file; TLS material', () => {
    expect(natsSecurityFlags(NATS, { 'nats-token-file': file('tok', 'tok1\n') }, usage, { XRATE_NATS_TOKEN: 'env' })).toEqual({
      token: 'tok1',
    });
    expect(natsSecurityFlags(NATS, {}, usage, { XRATE_NATS_TOKEN: 'env' })).toEqual({ token: 'env' });
    expect(natsSecurityFlags(NATS, { 'nats-nkey-file': file('nk', `${SEED}\n`) }, usage, {})).toEqual({ nkeySeed: SEED });
    const creds = `-----BEGIN NATS USER JWT-----\neyJ0\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${SEED}\n------END USER NKEY SEED------\n`;
    expect(natsSecurityFlags(NATS, { 'nats-creds': file('u.creds', creds) }, usage, {})).toEqual({ creds });
    const tls = { 'nats-tls-ca': file('ca.pem', PEM), 'nats-tls-cert': file('c.pem', PEM), 'nats-tls-key': file('k.pem', PEM) };
    expect(natsSecurityFlags('tls://h:4222', tls, usage, {})).toEqual({ tls: { ca: PEM, cert: PEM, key: PEM } });
    expect(natsSecurityFlags(NATS, { 'nats-tls-ca': tls['nats-tls-ca'] }, usage, {})).toEqual({ tls: { ca: PEM } });
  });

  it('refuses, naming the flag: credentials in the URL, two ways at once, a half pair, a bad or missing file', () => {
    const pw = file('pw2', 'x\n');
    expect(refused(() => natsSecurityFlags('nats://xr:hunter2@h:4222', {}, usage, {}))).toMatch(
      /^--nats: give no credentials in the URL \(every user of the machine can read a command line, e\.g\. with ps\): give --nats-user NAME/,
    );
    expect(refused(() => natsSecurityFlags('nats://a:4222,nats://tok@b:4222', {}, usage, {}))).toMatch(/^--nats: give no credentials/);
    expect(refused(() => natsSecurityFlags(NATS, { 'nats-user': 'xr', 'nats-password-file': pw, 'nats-token-file': pw }, usage, {}))).toBe(
      '--nats-user and --nats-token-file: give one way of authenticating to NATS',
    );
    expect(refused(() => natsSecurityFlags(NATS, { 'nats-password-file': pw }, usage, {}))).toBe(
      '--nats-password-file is the password of --nats-user NAME: give both',
    );
    expect(refused(() => natsSecurityFlags(NATS, { 'nats-user': 'xr' }, usage, {}))).toBe(
      '--nats-user needs its password in --nats-password-file FILE or XRATE_NATS_PASSWORD',
    );
    expect(refused(() => natsSecurityFlags(NATS, { 'nats-token-file': join(dir, 'missing') }, usage, {}))).toMatch(
      /^--nats-token-file: cannot read ".*missing" \(ENOENT\)$/,
    );
    expect(refused(() => natsSecurityFlags(NATS, { 'nats-token-file': file('empty', '\n') }, usage, {}))).toMatch(
      /^--nats-token-file: ".*empty" is empty$/,
    );
    expect(refused(() => natsSecurityFlags(NATS, { 'nats-token-file': file('two', 'a\nb\n') }, usage, {}))).toMatch(
      /holds more than one line$/,
    );
    expect(refused(() => natsSecurityFlags(NATS, { 'nats-nkey-file': file('notseed', 'SAAB\n') }, usage, {}))).toMatch(
      /^--nats-nkey-file: ".*notseed" does not hold an NKey user seed \(SU\.\.\.\)$/,
    );
    expect(refused(() => natsSecurityFlags(NATS, { 'nats-creds': pw }, usage, {}))).toMatch(/^--nats-creds: ".*pw2" is not a \.creds file/);
    expect(refused(() => natsSecurityFlags(NATS, { 'nats-tls-cert': file('c2.pem', PEM) }, usage, {}))).toBe(
      '--nats-tls-cert and --nats-tls-key go together (a client certificate and its private key)',
    );
    expect(refused(() => natsSecurityFlags(NATS, { 'nats-tls-ca': pw }, usage, {}))).toMatch(/^--nats-tls-ca: ".*pw2" is not a PEM file/);
    expect(refused(() => natsSecurityFlags(undefined, { 'nats-user': 'xr', 'nats-tls-ca': pw }, usage, {}))).toBe(
      '--nats-user, --nats-tls-ca: for a connection to NATS (--nats URL)',
    );
  });

  it('never puts a secret in a message', () => {
    const secretText = 'S3cr3t-value';
    const messages = [
      refused(() => natsSecurityFlags(`nats://xr:${secretText}@h:4222`, {}, usage, {})),
      refused(() => natsSecurityFlags(NATS, { 'nats-nkey-file': file('bad.nk', `${secretText}\n`) }, usage, {})),
      refused(() => natsSecurityFlags(NATS, { 'nats-creds': file('bad.creds', secretText) }, usage, {})),
      refused(() => natsSecurityFlags(NATS, { 'nats-token-file': file('two2', `${secretText}\n${secretText}\n`) }, usage, {})),
    ];
    for (const m of messages) expect(m).not.toContain(secretText);
  });
});

describe('redisSecurityFlags', () => {
  it('a user with its password from a file or XRATE_REDIS_PASSWORD; a password alone is the default user', () => {
    const pw = file('rpw', 'redis-pw\n');
    expect(redisSecurityFlags('redis', 'redis://h:6379', {}, usage, {})).toBeUndefined();
    expect(redisSecurityFlags('redis', 'redis://h:6379', { 'redis-user': 'xr', 'redis-password-file': pw }, usage, {})).toEqual({
      user: 'xr',
      password: 'redis-pw',
    });
    expect(redisSecurityFlags('queue', 'redis://h:6379', {}, usage, { XRATE_REDIS_PASSWORD: 'env' })).toEqual({ password: 'env' });
    expect(
      redisSecurityFlags('queue', 'rediss://h:6380', { 'redis-tls-ca': file('rca.pem', PEM) }, usage, { XRATE_REDIS_PASSWORD: 'env' }),
    ).toEqual({ password: 'env', tls: { ca: PEM } });
  });

  it('refuses, naming the flag: credentials in the URL, a user without password, TLS without rediss://, flags without a URL', () => {
    expect(refused(() => redisSecurityFlags('queue', 'redis://:hunter2@h:6379', {}, usage, {}))).toMatch(
      /^--queue: give no credentials in the URL .*: give --redis-user NAME with the password in --redis-password-file FILE or XRATE_REDIS_PASSWORD$/,
    );
    expect(refused(() => redisSecurityFlags('redis', 'hunter2@h:6379', {}, usage, {}))).toMatch(/^--redis: give no credentials in the URL/);
    expect(refused(() => redisSecurityFlags('redis', 'redis://h:6379', { 'redis-user': 'xr' }, usage, {}))).toBe(
      '--redis-user needs its password in --redis-password-file FILE or XRATE_REDIS_PASSWORD',
    );
    expect(refused(() => redisSecurityFlags('queue', 'redis://h:6379', { 'redis-tls-ca': file('rca2.pem', PEM) }, usage, {}))).toBe(
      '--redis-tls-ca: TLS needs a rediss:// URL in --queue',
    );
    expect(refused(() => redisSecurityFlags('queue', undefined, { 'redis-password-file': 'x' }, usage, {}))).toBe(
      '--redis-password-file: for a connection to Redis (--queue URL)',
    );
  });
});
