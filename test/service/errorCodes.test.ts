/**
 * The rate service answers an XrateError thrown by a route with the HTTP status of its code
 * (src/core/errors.ts), the JSON `{"message": ...}` (a no-data error's message after the interface's
 * wording) and the error's headers; a code of status 500
 * (a broken invariant, a failed run) says no more than any unexpected error: "Internal error".
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode, XrateError } from '../../src/core/errors.js';
import { NO_DATA_TEXT } from '../../src/http/errors.js';
import { KeyStore } from '../../src/http/keys.js';
import type { RateProvider } from '../../src/answers/index.js';
import { createService } from '../../src/service/server.js';
import { demoProvider } from './helpers.js';

const demo = demoProvider();
let keys: KeyStore;
let key: string;
let app: Awaited<ReturnType<typeof createService>>;
/** What the provider's rate throws. */
let toThrow: unknown;
const logged: string[] = [];

beforeAll(async () => {
  const real = demo.provider;
  // The demo database's provider, but its rate throws the error of the test.
  const provider = Object.create(real) as RateProvider;
  provider.rate = () => {
    throw toThrow;
  };
  keys = KeyStore.open(join(demo.tmp.dir, 'keys.sqlite'));
  key = keys.create({ name: 'test', concurrency: 100 }).key;
  app = await createService({ provider, keys, log: { error: (_o, msg) => void logged.push(msg) } });
}, 120_000);

afterAll(async () => {
  await app?.close();
  keys?.close();
});

const ask = (e: unknown) => {
  toThrow = e;
  return app.inject({ method: 'GET', url: '/v1/exchangerate/BTC/USD', headers: { 'X-CoinAPI-Key': key } });
};

describe('the status of each error code', () => {
  const CODES = Object.keys(ERROR_CODES) as ErrorCode[];

  it.each(CODES.filter((c) => ERROR_CODES[c].status !== 500))('%s: its status, its message as JSON', async (code) => {
    const r = await ask(new XrateError(code, `a ${code} error`));
    expect(r.statusCode).toBe(ERROR_CODES[code].status);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    const message = code === 'no_data' ? `${NO_DATA_TEXT}: a ${code} error` : `a ${code} error`;
    expect(r.body).toBe(JSON.stringify({ message }));
  });

  it.each(CODES.filter((c) => ERROR_CODES[c].status === 500))('%s: 500 "Internal error", the details logged', async (code) => {
    logged.length = 0;
    const r = await ask(new XrateError(code, `a ${code} error`));
    expect([r.statusCode, r.body]).toEqual([500, JSON.stringify({ message: 'Internal error' })]);
    expect(logged).toHaveLength(1);
  });

  it("answers the error's headers (a 429's retry-after)", async () => {
    const r = await ask(new XrateError('too_many_requests', 'slow down', { headers: { 'retry-after': '7' } }));
    expect([r.statusCode, r.headers['retry-after']]).toEqual([429, '7']);
  });

  it('answers any other error as an internal one', async () => {
    logged.length = 0;
    const r = await ask(new TypeError('x is undefined'));
    expect([r.statusCode, r.body]).toEqual([500, JSON.stringify({ message: 'Internal error' })]);
    expect(logged).toHaveLength(1);
  });
});
