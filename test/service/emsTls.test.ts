/**
 * The EMS gateway over HTTPS in managed mode (docs/ems.md, "Authentication"): a client certificate
 * of the trusted CA (or of its intermediate CA, sent with it) authenticates; any other (another
 * CA's, one signed by another CA of the trusted CA's name, a chain whose issuer did not sign it, an
 * expired one or one under an expired intermediate, one not yet valid) is a 401
 * `{message}` saying why, never a reset connection, and an API key sent with it still
 * authenticates. Certificates are made with openssl at test time; requests are written once the
 * server has read the whole handshake, as curl's are.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PositionSource } from '../../src/ems/positions.js';
import { createEmsApp } from '../../src/ems/server.js';
import { loadTls } from '../../src/ems/tls.js';
import { ReplayStore } from '../../src/io/store.js';
import { replay } from '../../src/replay/replay.js';
import { KeyStore } from '../../src/http/keys.js';
import { DatabaseRateProvider } from '../../src/answers/index.js';
import { type Certificates, makeCertificates, type Pem, type TlsResponse, tlsGet } from '../helpers/certificates.js';
import { tempDir } from './helpers.js';

const tmp = tempDir('xrate-ems-tls-');
const dir = tmp.dir;
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const LOG = [
  { type: 'trade', time: '2024-03-01T00:00:00.5Z', symbol_id: 'KRAKEN_SPOT_BTC_USD', price: 62000, size: 1 },
  {
    type: 'position',
    time: '2024-03-01T00:00:01.5Z',
    exchange_id: 'OKX',
    symbol_id_exchange: 'BTC-USD',
    avg_entry_price: '60000',
    quantity: '1',
    side: 'BUY',
  },
  { type: 'quote', time: '2024-03-01T00:00:02.5Z', symbol_id: 'KRAKEN_SPOT_BTC_USD', bid_price: 1, bid_size: 1, ask_price: 2, ask_size: 1 },
];

let provider: DatabaseRateProvider;
let store: ReplayStore;
let keys: KeyStore;
let key: string;
let certs: Certificates;
let app: FastifyInstance;
let url: string;

beforeAll(async () => {
  const db = join(dir, 'ems.sqlite');
  const log = file('ems.ndjson', `${LOG.map((o) => JSON.stringify(o)).join('\n')}\n`);
  await replay({ inputs: [log], db });
  provider = await DatabaseRateProvider.open(db);
  store = ReplayStore.open(db, { readonly: true });
  keys = KeyStore.open(join(dir, 'keys.sqlite'));
  key = keys.create({ name: 'desk' }).key;
  certs = makeCertificates(dir);
  const tls = loadTls({
    cert: file('srv.pem', certs.server.cert),
    key: file('srv.key.pem', certs.server.key),
    clientCa: file('clients.pem', certs.ca),
  });
  app = await createEmsApp({
    positions: new PositionSource(provider, store),
    sites: { locations: [], endpoints: [] },
    managed: { keys },
    tls,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  url = `https://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/v1/positions?exchange_id=OKX`;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await provider?.close();
  store?.close();
  keys?.close();
  tmp.remove();
});

const get = (client?: Pem, headers: Record<string, string> = {}) => tlsGet(url, certs.ca, client, headers);

/** A 200 with OKX's position. */
function positions(res: TlsResponse): void {
  expect(res.status, res.body).toBe(200);
  expect((JSON.parse(res.body) as { exchange_id: string }[]).map((a) => a.exchange_id)).toEqual(['OKX']);
}

/** A 401 `{message}`; its message. */
function refused(res: TlsResponse): string {
  expect(res.status, res.body).toBe(401);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(Object.keys(body)).toEqual(['message']);
  return body.message as string;
}

describe('managed mode over HTTPS', () => {
  it('takes a client certificate of the trusted CA (or of an intermediate CA sent with it), or an API key without a certificate; neither is a 401', async () => {
    positions(await get(certs.good));
    positions(await get(certs.viaSub));
    positions(await get(undefined, { 'X-CoinAPI-Key': key }));
    expect(refused(await get())).toMatch(/^Missing API key/);
  });

  const bad: [string, (c: Certificates) => Pem, RegExp][] = [
    [
      'a certificate of another CA',
      (c) => c.stranger,
      /^The TLS client certificate was refused \(it was issued by CN=other-ca, not by this gateway's client CA \(CN=ca\)\), and /,
    ],
    [
      "a certificate of another CA bearing the trusted CA's name",
      (c) => c.twin,
      /^The TLS client certificate was refused \(it names the client CA, CN=ca, as its issuer, but its signature does not verify with the client CA's key: another CA of that name signed it\), and /,
    ],
    [
      'a chain whose issuer certificate did not sign the client certificate',
      (c) => c.forgedChain,
      /^The TLS client certificate was refused \(the certificate CN=other-ca sent with it was issued by CN=other-ca, not by this gateway's client CA \(CN=ca\)\), and /,
    ],
    [
      'an expired certificate of the trusted CA',
      (c) => c.expired,
      /^The TLS client certificate was refused \(it expired at 2020-02-01T00:00:00.0000000Z\), and /,
    ],
    [
      'a certificate sent with the expired intermediate CA that signed it',
      (c) => c.viaExpiredSub,
      /^The TLS client certificate was refused \(the certificate CN=old-sub sent with it expired at 2020-02-01T00:00:00.0000000Z\), and /,
    ],
    [
      'a certificate of the trusted CA not valid yet',
      (c) => c.future,
      /^The TLS client certificate was refused \(it is not valid before 2040-01-01T00:00:00.0000000Z\), and /,
    ],
  ];
  for (const [what, pick, reason] of bad) {
    it(`refuses ${what} with 401 saying why, and takes a valid API key sent with it`, async () => {
      const cert = pick(certs);
      positions(await get(cert, { 'X-CoinAPI-Key': key }));
      expect(refused(await get(cert))).toMatch(new RegExp(`${reason.source}Missing API key`));
      expect(refused(await get(cert, { 'X-CoinAPI-Key': 'not-a-key' }))).toMatch(new RegExp(`${reason.source}Invalid API key`));
    });
  }
});

describe('loadTls', () => {
  it('checks TLS files at start: a key that does not match its certificate, a CA file without a certificate', () => {
    expect(() => loadTls({ cert: file('s1.pem', certs.server.cert), key: file('k1.pem', certs.good.key) })).toThrow(
      /does not match the certificate/,
    );
    expect(() =>
      loadTls({ cert: file('s2.pem', certs.server.cert), key: file('k2.pem', certs.server.key), clientCa: file('ca2.pem', 'nothing') }),
    ).toThrow(/holds no PEM certificate/);
    expect(() => loadTls({ cert: file('s3.pem', certs.server.cert) })).toThrow(/go together/);
  });
});
