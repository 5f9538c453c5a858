/**
 * What secured connections share (src/distributed/security.ts, natsConnect.ts, redisConnect.ts):
 * URLs shown without their credentials (a property over generated URLs), the words of a failed
 * first connection, and a first connection to a server that never answers ending at its bound.
 */
import { createServer, type Server, type Socket } from 'node:net';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../../src/distributed/natsConnect.js';
import { connectRedis } from '../../../src/distributed/redisConnect.js';
import { connectFailure, redactUrl, urlHasCredentials } from '../../../src/distributed/security.js';

describe('redactUrl', () => {
  it('keeps a URL without credentials as it is', () => {
    for (const u of ['redis://127.0.0.1:6379', 'rediss://redis:6380/2', 'nats://a:4222,tls://b:4222', 'localhost:6379'])
      expect(redactUrl(u)).toBe(u);
  });

  it('drops user names, passwords and tokens, whatever they hold (property)', () => {
    const secretArb = fc.string({ minLength: 1, maxLength: 30 }).filter((s) => !s.includes(',') && s.trim() === s && s.length > 0);
    const hostArb = fc.constantFrom('127.0.0.1:6379', 'redis.internal:6380/3', 'nats:4222');
    fc.assert(
      fc.property(
        fc.constantFrom('redis', 'rediss', 'nats', 'tls'),
        fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
        secretArb,
        hostArb,
        (scheme, user, secret, host) => {
          fc.pre(!host.includes(secret) && !scheme.includes(secret) && !`${user ?? ''}`.includes(','));
          const url = `${scheme}://${user === undefined ? '' : `${user}:`}${secret}@${host}`;
          expect(urlHasCredentials(url)).toBe(true);
          const shown = redactUrl(url);
          expect(shown).toBe(`${scheme}://${host}`);
          expect(urlHasCredentials(shown)).toBe(false);
        },
      ),
      { seed: 20261124, numRuns: 300 },
    );
  });

  it('handles lists and text without a scheme', () => {
    expect(redactUrl('nats://u:p@a:4222,nats://t@b:4222')).toBe('nats://a:4222,nats://b:4222');
    expect(redactUrl('user:pw@host:6379')).toBe('host:6379');
    expect(urlHasCredentials('nats://a:4222,nats://t@b:4222')).toBe(true);
    expect(urlHasCredentials('redis://127.0.0.1:6379/0')).toBe(false);
  });
});

describe('connectFailure', () => {
  const err = (message: string, props: Record<string, unknown> = {}): Error => Object.assign(new Error(message), props);
  it('names an authentication failure, a certificate that does not verify, another TLS failure; else the message', () => {
    expect(connectFailure(err('WRONGPASS invalid username-password pair or user is disabled.'))).toBe(
      'authentication failed (WRONGPASS invalid username-password pair or user is disabled.)',
    );
    expect(connectFailure(err('NOAUTH Authentication required.'))).toBe('authentication failed (NOAUTH Authentication required.)');
    expect(connectFailure(err('Authorization Violation', { name: 'AuthorizationError' }))).toBe(
      'authentication failed (Authorization Violation)',
    );
    expect(connectFailure(err('self-signed certificate in certificate chain', { code: 'SELF_SIGNED_CERT_IN_CHAIN' }))).toBe(
      'TLS verification failed (self-signed certificate in certificate chain)',
    );
    expect(connectFailure(err('unable to verify the first certificate', { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }))).toBe(
      'TLS verification failed (unable to verify the first certificate)',
    );
    expect(connectFailure(err("Hostname/IP does not match certificate's altnames", { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }))).toMatch(
      /^TLS verification failed/,
    );
    expect(connectFailure(err('tlsv1 alert unknown ca', { code: 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA' }))).toBe(
      'TLS handshake failed (tlsv1 alert unknown ca)',
    );
    expect(connectFailure(err('connect ECONNREFUSED 127.0.0.1:1', { code: 'ECONNREFUSED' }))).toBe('connect ECONNREFUSED 127.0.0.1:1');
  });
});

describe('a first connection to a server that never answers', () => {
  let server: Server;
  let port = 0;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    // Accepts connections and says nothing: neither Redis nor NATS ever gets its greeting.
    server = createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });

  it('Redis: fails at its bound, saying so, and the client stops', async () => {
    const conn = new Redis(`redis://127.0.0.1:${port}`, { lazyConnect: true, maxRetriesPerRequest: null });
    await expect(connectRedis(conn, `the queue at redis://127.0.0.1:${port}`, 300)).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(new RegExp(`^cannot reach the queue at redis://127\\.0\\.0\\.1:${port}: no answer within 0\\.3 s$`)),
    });
    // Stopped: it ends, and tries no other connection.
    const tried = sockets.length;
    if (conn.status !== 'end') await new Promise((r) => conn.once('end', r));
    await new Promise((r) => setTimeout(r, 500));
    expect(sockets.length).toBe(tried);
  });

  it('NATS: fails at its bound, saying so', async () => {
    await expect(connectNats(`nats://127.0.0.1:${port}`, 'test', undefined, 300)).rejects.toThrow(
      new RegExp(`^cannot reach NATS at nats://127\\.0\\.0\\.1:${port}: no handshake within 0\\.3 s$`),
    );
  });
});
