/**
 * Authentication over HTTP: the six methods of the interface and the attempts to get around them.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stripPathKey, type RawRequest } from '../../src/http/auth.js';
import { KeyStore, parseJwtKey } from '../../src/http/keys.js';
import { demoDb, expectError, startServer, tempDir, type TestServer } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
let srv: TestServer;
let key: string;
let clock = Date.now();
const RATE = '/v1/exchangerate/BTC/USD';

beforeAll(async () => {
  tmp = tempDir();
  const db = await demoDb(tmp.dir);
  srv = await startServer({ db, keysPath: join(tmp.dir, 'keys.sqlite'), now: () => clock });
  key = srv.key({ name: 'plain' });
});

afterAll(async () => {
  await srv?.close();
  tmp?.remove();
});

async function ok(path: string, headers: Record<string, string> = {}): Promise<void> {
  const r = await srv.get(path, headers);
  expect(r.status, `${path} ${JSON.stringify(headers)}: ${r.text}`).toBe(200);
  expect(r.headers['x-ratelimit-limit']).toBeDefined();
}

describe('the six methods', () => {
  it('X-CoinAPI-Key header (and X-Service-Key)', async () => {
    await ok(RATE, { 'X-CoinAPI-Key': key });
    await ok(RATE, { 'x-coinapi-key': key.toLowerCase() });
    await ok(RATE, { 'X-Service-Key': key });
  });

  it('apikey query parameter (name case-insensitive)', async () => {
    await ok(`${RATE}?apikey=${key}`);
    await ok(`${RATE}?ApiKey=${key}&time=2024-03-01T05:00:00Z`);
    await ok(`/v1/exchangerate/BTC?invert=true&apikey=${key}&output_format=csv`);
  });

  it('APIKEY- path segment at the start, middle or end, any case, ignored when routing', async () => {
    await ok(`/APIKEY-${key}${RATE}`);
    await ok(`/v1/APIKEY-${key}/exchangerate/BTC/USD`);
    await ok(`${RATE}/APIKEY-${key}`);
    await ok(`${RATE}/apikey-${key}?time=2024-03-01T05:00:00Z`);
    await ok(`/v1/exchangerate/BTC/USD/history/ApiKey-${key}?period_id=1MIN&time_start=2024-03-01T05:00:00Z&time_end=2024-03-01T06:00:00Z`);
    await ok(`/v1/exchangerate/history/periods/APIKEY-${key}`);
    expectError(await srv.get(`/v1/APIKEY-${key}`), 404);
    expect((await srv.get(`/APIKEY-${key}`)).headers['content-type']).toBe('text/html; charset=utf-8'); // `/`: the chart page
    expect(stripPathKey({ url: `/v1/exchangerate/APIKEY-abc/BTC?x=1` } as RawRequest)).toBe('/v1/exchangerate/BTC?x=1');
    expect(stripPathKey({ url: `/APIKEY-abc` } as RawRequest)).toBe('/');
  });

  it('raw Authorization header and Basic (coinapi:KEY)', async () => {
    await ok(RATE, { Authorization: key });
    await ok(RATE, { Authorization: `Basic ${Buffer.from(`coinapi:${key}`).toString('base64')}` });
    await ok(RATE, { Authorization: `basic ${Buffer.from(`COINAPI:${key}`).toString('base64')}` });
    expect(expectError(await srv.get(RATE, { Authorization: `Basic ${Buffer.from(`admin:${key}`).toString('base64')}` }), 401)).toMatch(
      /user must be "coinapi"/,
    );
    expect(expectError(await srv.get(RATE, { Authorization: `Basic ${Buffer.from(key).toString('base64')}` }), 401)).toMatch(
      /coinapi:<key>/,
    );
  });

  it('the same key by several methods is fine; different keys are refused', async () => {
    await ok(`${RATE}?apikey=${key}`, { 'X-CoinAPI-Key': key, Authorization: key });
    const other = srv.key({ name: 'other' });
    expect(expectError(await srv.get(`${RATE}?apikey=${other}`, { 'X-CoinAPI-Key': key }), 401)).toMatch(/Conflicting API keys/);
    expect(expectError(await srv.get(`${RATE}/APIKEY-${other}`, { Authorization: key }), 401)).toMatch(/Conflicting/);
  });

  it('two different keys in apikey parameters are a 401 charged to nobody; the same key twice is fine', async () => {
    const a = srv.key({ name: 'twice-a' });
    const b = srv.key({ name: 'twice-b' });
    const used = async (k: string): Promise<number> => Number((await srv.get(RATE, { 'X-CoinAPI-Key': k })).headers['x-ratelimit-used']);
    expect(await used(a)).toBe(1);
    expect(expectError(await srv.get(`${RATE}?apikey=${a}&apikey=${b}`), 401)).toMatch(
      /Conflicting API keys: the apikey parameter and the apikey parameter/,
    );
    expect(expectError(await srv.get(`${RATE}?apikey=${a}&APIKEY=${b}`), 401)).toMatch(/Conflicting API keys/);
    expect(await used(a)).toBe(2);
    expect(await used(b)).toBe(1);
    await ok(`${RATE}?apikey=${a}&apikey=${a}`);
  });

  it('a 404 does not echo a key given as a path segment, percent-encoded or not', async () => {
    for (const seg of [`APIKEY-${key}`, `%41PIKEY-${key}`, `apikey-${key.toLowerCase()}`]) {
      const msg = expectError(await srv.get(`/v1/nothing/${seg}/x`), 404);
      expect(msg).not.toContain(key.slice(0, 8));
      expect(msg).not.toContain(key.slice(0, 8).toLowerCase());
    }
    // The literal segment is taken out before routing; an encoded one reaches the 404, redacted.
    expect(expectError(await srv.get(`/v1/nothing/%41PIKEY-${key}/x`), 404)).toContain('/v1/nothing/APIKEY-***/x');
  });
});

describe('refusals', () => {
  it('401 without a key, with a wrong or revoked key; the body is JSON and no limit headers leak', async () => {
    let r = await srv.get(RATE);
    expect(expectError(r, 401)).toMatch(/Missing API key/);
    expect(r.headers['x-ratelimit-request-cost']).toBe('0');
    expect(r.headers['x-ratelimit-limit']).toBeUndefined();
    expect(expectError(await srv.get(RATE, { 'X-CoinAPI-Key': 'WRONG-KEY' }), 401)).toBe('Invalid API key');
    expect(expectError(await srv.get(`${RATE}?apikey=`), 401)).toMatch(/Empty API key/);
    expect(expectError(await srv.get(`${RATE}/APIKEY-${key}X`), 401)).toBe('Invalid API key');
    const doomed = srv.key({ name: 'doomed' });
    await ok(RATE, { 'X-CoinAPI-Key': doomed });
    // Revoked from another connection (as `xrate keys revoke` does): effective within a second.
    const other = KeyStore.open(srv.keys.path);
    other.revoke(other.idOf({ key: doomed }));
    other.close();
    clock += 1500;
    r = await srv.get(RATE, { 'X-CoinAPI-Key': doomed });
    expect(expectError(r, 401)).toBe('Invalid API key');
  });

  it('403 for a key without the right to the resource, with the limit headers', async () => {
    const limited = srv.key({ name: 'rates only', rights: ['rate', 'rates'] });
    await ok(RATE, { 'X-CoinAPI-Key': limited });
    await ok('/v1/exchangerate/BTC', { 'X-CoinAPI-Key': limited });
    for (const [path, re] of [
      ['/v1/exchangerate/BTC/USD/history?period_id=1MIN&time_start=2024-03-01&time_end=2100-01-01T00:00:00Z', /timeseries data/],
      ['/v1/exchangerate/history/periods', /timeseries periods/],
      ['/v1/exchangerate/BTC/USD/explain', /provenance/],
    ] as const) {
      const r = await srv.get(path, { 'X-CoinAPI-Key': limited });
      expect(expectError(r, 403)).toMatch(re);
      expect(r.headers['x-ratelimit-request-cost']).toBe('0');
      expect(r.headers['x-ratelimit-limit']).toBe('1000000');
    }
  });
});

describe('JWT', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rsa2 = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const secret = Buffer.alloc(32, 'k');
  const pem = (k: KeyObject): string => k.export({ type: 'spki', format: 'pem' }) as string;
  const keys: Record<string, string> = {};

  beforeAll(() => {
    const mk = (name: string, material: ReturnType<typeof parseJwtKey>): string => {
      const k = srv.key({ name });
      srv.keys.setJwt(srv.keys.idOf({ key: k }), material);
      return k;
    };
    keys.rsa = mk('rsa', parseJwtKey({ publicKey: pem(rsa.publicKey) }));
    keys.ec = mk('ec', parseJwtKey({ publicKey: pem(ec.publicKey) }));
    keys.hmac = mk('hmac', parseJwtKey({ secret }));
  });

  const now = (): number => Math.floor(clock / 1000);
  const sign = (alg: string, k: KeyObject | Uint8Array, claims: { nbf?: number | null; exp?: number | null } = {}): Promise<string> => {
    const j = new SignJWT({ sub: 'client' }).setProtectedHeader({ alg });
    if (claims.nbf !== null) j.setNotBefore(claims.nbf ?? now() - 10);
    if (claims.exp !== null) j.setExpirationTime(claims.exp ?? now() + 60);
    return j.sign(k);
  };
  const bearer = (t: string): Record<string, string> => ({ Authorization: `Bearer ${t}` });

  it('valid RS256, PS256, ES256 and HS256 tokens, with the key by header, query or path', async () => {
    await ok(RATE, { 'X-CoinAPI-Key': keys.rsa, ...bearer(await sign('RS256', rsa.privateKey)) });
    await ok(`${RATE}?apikey=${keys.rsa}`, bearer(await sign('PS256', rsa.privateKey)));
    await ok(`${RATE}/APIKEY-${keys.ec}`, bearer(await sign('ES256', ec.privateKey)));
    await ok(RATE, { 'X-CoinAPI-Key': keys.hmac, ...bearer(await sign('HS256', secret)) });
  });

  it('refuses expired, not-yet-valid, and tokens without nbf or exp', async () => {
    const h = { 'X-CoinAPI-Key': keys.rsa };
    expect(
      expectError(await srv.get(RATE, { ...h, ...bearer(await sign('RS256', rsa.privateKey, { nbf: now() - 100, exp: now() - 1 })) }), 401),
    ).toMatch(/expired/);
    expect(
      expectError(
        await srv.get(RATE, { ...h, ...bearer(await sign('RS256', rsa.privateKey, { nbf: now() + 60, exp: now() + 120 })) }),
        401,
      ),
    ).toMatch(/not yet valid/);
    expect(expectError(await srv.get(RATE, { ...h, ...bearer(await sign('RS256', rsa.privateKey, { nbf: null })) }), 401)).toMatch(/"nbf"/);
    expect(expectError(await srv.get(RATE, { ...h, ...bearer(await sign('RS256', rsa.privateKey, { exp: null })) }), 401)).toMatch(/"exp"/);
  });

  it('a cached valid token is refused once it expires', async () => {
    const t = await sign('ES256', ec.privateKey, { nbf: now() - 5, exp: now() + 30 });
    await ok(RATE, { 'X-CoinAPI-Key': keys.ec, ...bearer(t) });
    await ok(RATE, { 'X-CoinAPI-Key': keys.ec, ...bearer(t) });
    clock += 31_000;
    expect(expectError(await srv.get(RATE, { 'X-CoinAPI-Key': keys.ec, ...bearer(t) }), 401)).toMatch(/expired/);
  });

  it('refuses a wrong signature, a tampered payload, another key pair, alg none and algorithm confusion', async () => {
    const h = { 'X-CoinAPI-Key': keys.rsa };
    const good = await sign('RS256', rsa.privateKey);
    const [hd, pl, sg] = good.split('.');
    // One bit of the signature's first byte flipped (editing its last characters could leave the
    // bytes as they were: the final character of base64url carries padding bits).
    const bytes = Buffer.from(sg, 'base64url');
    bytes[0] ^= 1;
    const flipped = bytes.toString('base64url');
    expect(expectError(await srv.get(RATE, { ...h, ...bearer(`${hd}.${pl}.${flipped}`) }), 401)).toMatch(/signature/);
    const forged = Buffer.from(JSON.stringify({ sub: 'admin', nbf: now() - 10, exp: now() + 9999 })).toString('base64url');
    expect(expectError(await srv.get(RATE, { ...h, ...bearer(`${hd}.${forged}.${sg}`) }), 401)).toMatch(/signature/);
    expect(expectError(await srv.get(RATE, { ...h, ...bearer(await sign('RS256', rsa2.privateKey)) }), 401)).toMatch(/signature/);
    const none = new UnsecuredJWT({ sub: 'x' })
      .setNotBefore(now() - 10)
      .setExpirationTime(now() + 60)
      .encode();
    expect(expectError(await srv.get(RATE, { ...h, ...bearer(none) }), 401)).toMatch(/"none" is not accepted/);
    // HS256 "signed" with the RSA public key as the HMAC secret.
    const confused = await sign('HS256', new TextEncoder().encode(pem(rsa.publicKey)));
    expect(expectError(await srv.get(RATE, { ...h, ...bearer(confused) }), 401)).toMatch(/"HS256" is not accepted .*RS256, PS256/);
    // An ES256 token for an RSA key, an RS256 token for the HMAC key.
    expect(expectError(await srv.get(RATE, { ...h, ...bearer(await sign('ES256', ec.privateKey)) }), 401)).toMatch(
      /"ES256" is not accepted/,
    );
    expect(expectError(await srv.get(RATE, { 'X-CoinAPI-Key': keys.hmac, ...bearer(await sign('RS256', rsa.privateKey)) }), 401)).toMatch(
      /"RS256" is not accepted/,
    );
    expect(expectError(await srv.get(RATE, { ...h, ...bearer('not.a.jwt') }), 401)).toMatch(/Malformed JWT/);
    expect(expectError(await srv.get(RATE, { ...h, Authorization: 'Bearer ' }), 401)).toBeTruthy();
  });

  it('a JWT-enabled key needs a token, and cannot travel in the Authorization header', async () => {
    expect(expectError(await srv.get(RATE, { 'X-CoinAPI-Key': keys.rsa }), 401)).toMatch(/requires a JWT/);
    expect(expectError(await srv.get(`${RATE}?apikey=${keys.rsa}`), 401)).toMatch(/requires a JWT/);
    expect(expectError(await srv.get(RATE, { Authorization: keys.rsa }), 401)).toMatch(/cannot be passed there too/);
    expect(
      expectError(await srv.get(RATE, { Authorization: `Basic ${Buffer.from(`coinapi:${keys.rsa}`).toString('base64')}` }), 401),
    ).toMatch(/cannot be passed there too/);
  });

  it('a token with a key that has no JWT key, or without any key, is refused', async () => {
    expect(expectError(await srv.get(RATE, { 'X-CoinAPI-Key': key, ...bearer(await sign('RS256', rsa.privateKey)) }), 401)).toMatch(
      /no JWT key registered/,
    );
    expect(expectError(await srv.get(RATE, bearer(await sign('RS256', rsa.privateKey))), 401)).toMatch(/needs its API key alongside/);
  });

  it('removing the JWT key makes the plain key work again', async () => {
    const k = srv.key({ name: 'tmp-jwt' });
    const id = srv.keys.idOf({ key: k });
    srv.keys.setJwt(id, parseJwtKey({ secret }));
    expectError(await srv.get(RATE, { 'X-CoinAPI-Key': k }), 401);
    srv.keys.setJwt(id, undefined);
    await ok(RATE, { 'X-CoinAPI-Key': k });
  });

  it('parseJwtKey refuses private keys, short secrets, other curves and small RSA keys', () => {
    expect(() => parseJwtKey({ publicKey: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string })).toThrow(/private key/);
    expect(() => parseJwtKey({ secret: Buffer.alloc(16) })).toThrow(/at least 32 bytes/);
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    expect(() => parseJwtKey({ publicKey: pem(p384.publicKey) })).toThrow(/P-256/);
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
    expect(() => parseJwtKey({ publicKey: pem(small.publicKey) })).toThrow(/2048/);
    expect(() => parseJwtKey({ publicKey: 'hello' })).toThrow(/not a PEM or JWK/);
    expect(parseJwtKey({ publicKey: JSON.stringify(ec.publicKey.export({ format: 'jwk' })) }).kind).toBe('ec');
  });
});

describe('malformed requests', () => {
  it('an HTTP/1.1 request without a Host header gets a JSON 400, charged to nobody', async () => {
    const u = new URL(srv.url);
    const raw = await new Promise<string>((res, rej) => {
      const s = connect(Number(u.port), u.hostname, () =>
        s.write(`GET ${RATE} HTTP/1.1\r\nX-CoinAPI-Key: ${key}\r\nConnection: close\r\n\r\n`),
      );
      let d = '';
      s.on('data', (x: Buffer) => {
        d += x.toString();
      });
      s.on('end', () => res(d));
      s.on('error', rej);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head.toLowerCase()).toContain('content-type: application/json');
    expect(head.toLowerCase()).toContain('x-ratelimit-request-cost: 0');
    expect(JSON.parse(body)).toEqual({ message: 'Bad request: an HTTP/1.1 request needs a Host header' });
  });
});
