/**
 * Secured servers, as operators run them (docs/deploy.md, "Secured servers"), through the built
 * command: a real `nats-server` with mutual TLS and users (a password, an NKey) and one with a
 * token; a real `redis-server` speaking TLS only (client certificates required) with an ACL user.
 * A publish and a replica over them answer as a replay of the log; `xrate keys --redis` and
 * `xrate serve --redis` use the secured Redis; a `replay --queue` run with an `xrate worker` on it
 * equals a serial replay. A wrong password, token, key or CA ends the command at once, exit 1,
 * with a message naming the server and what failed. No secret is ever in an output, in `/metrics`,
 * `/readyz`, a database, or the command line of any process on the machine.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { type RunningService, startService } from '../../src/app/serve.js';
import { type NatsServer, startNats } from '../helpers/nats.js';
import { type RedisServer, startRedis } from '../helpers/redis.js';
import { type CertificateFiles, certificateFiles } from '../helpers/certificates.js';
import { type BinProcess, bin, binStart, cli, ensureBuilt, expectSameOutputs } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-secured-'));
const LOG = join(dir, 'log.ndjson');
const SERIAL = join(dir, 'serial.sqlite');
const CONFIG = join(dir, 'config.json');
/** The output tables a replica writes as a replay does (its open OHLC buckets are served from its engine). */
const REPLICA_TABLES = ['rates', 'series', 'rejects', 'metric_points', 'metric_definitions'];

const secret = (what: string): string => `${what}-${randomBytes(12).toString('hex')}`;
const NATS_PASSWORD = secret('natspw');
const NATS_TOKEN = secret('natstoken');
const REDIS_PASSWORD = secret('redispw');
const NKEY = nkeys.createUser();
const NKEY_SEED = new TextDecoder().decode(NKEY.getSeed());
/** Wrong ones: refused, and never shown either. */
const WRONG_PASSWORD = secret('wrongpw');
const OTHER_SEED = new TextDecoder().decode(nkeys.createUser().getSeed());
/** Put in URLs on purpose: refused, and not echoed. */
const IN_URL = secret('inurl');
const SECRETS = [NATS_PASSWORD, NATS_TOKEN, REDIS_PASSWORD, NKEY_SEED, WRONG_PASSWORD, OTHER_SEED, IN_URL];

/** A file holding `text` (a secret file, as operators keep them). */
function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text, { mode: 0o600 });
  return p;
}
const F = {
  natsPassword: file('nats.password', `${NATS_PASSWORD}\n`),
  natsToken: file('nats.token', `${NATS_TOKEN}\n`),
  nkey: file('user.nk', `${NKEY_SEED}\n`),
  otherNkey: file('other.nk', `${OTHER_SEED}\n`),
  redisPassword: file('redis.password', `${REDIS_PASSWORD}\n`),
  wrongPassword: file('wrong.password', `${WRONG_PASSWORD}\n`),
};

let certs: CertificateFiles;
/** NATS with mutual TLS, a user with a password and an NKey user. */
let natsTls: NatsServer;
/** NATS with a token. */
let natsToken: NatsServer;
/** Redis speaking TLS only (client certificates required), the default user off, the ACL user `xrate`. */
let redis: RedisServer;
let reference: RunningService;
let want: string[];
const started: BinProcess[] = [];
/** Everything the commands printed, and what the routes answered, searched for secrets at the end. */
const shown: string[] = [];
/** How many processes' command lines were read while they ran. */
let argvsRead = 0;

const natsTlsFlags = (): string[] => ['--nats-tls-ca', certs.ca, '--nats-tls-cert', certs.clientCert, '--nats-tls-key', certs.clientKey];
const redisTlsFlags = (ca = certs.ca): string[] => [
  '--redis-tls-ca',
  ca,
  '--redis-tls-cert',
  certs.clientCert,
  '--redis-tls-key',
  certs.clientKey,
];
const redisAuth = (): string[] => ['--redis-user', 'xrate', '--redis-password-file', F.redisPassword];

function start(argv: string[], env?: Record<string, string>): BinProcess {
  const p = binStart(argv, env);
  started.push(p);
  return p;
}

/** `xrate ...argv` to its end; its output is kept for the final search. */
function run(argv: string[], env?: Record<string, string>): { code: number | null; out: string; err: string; killed: boolean } {
  const r = bin(argv, { env, timeout: 60_000 });
  shown.push(r.stdout, r.stderr);
  return { code: r.status, out: r.stdout, err: r.stderr, killed: r.signal !== null };
}

/** Reads the command line of every process on the machine: none holds a secret. */
function expectNoSecretInAnyArgv(): void {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let argv: string;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (started.some((p) => String(p.proc.pid) === pid)) argvsRead++;
    for (const s of SECRETS) expect(argv.includes(s), `process ${pid}: ${argv.replaceAll('\0', ' ')}`).toBe(false);
  }
}

async function http(url: string, key?: string): Promise<{ status: number; body: string }> {
  const r = await fetch(url, { headers: key ? { 'X-CoinAPI-Key': key } : {} });
  const body = await r.text();
  shown.push(body);
  return { status: r.status, body };
}

/** Requests a replica must answer byte for byte as `xrate serve` over the serial replay. */
const QUERIES = [
  '/v1/exchangerate/BTC/USD',
  '/v1/exchangerate/ETH/BTC?time=2024-03-01T12:00:00Z',
  '/v1/exchangerate/BTC?time=2024-03-01T20:00:00Z',
  '/v1/exchangerate/BTC/USD/history?period_id=1HRS&time_start=2024-03-01T00:00:00Z&time_end=2100-01-01T00:00:00Z&limit=100',
];

async function answers(base: string, key: string): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUERIES) {
    const r = await http(`${base}${q}`, key);
    out.push(`${r.status} ${r.body}`);
  }
  return out;
}

/** A started `xrate serve`: its URL once it listens. */
async function listening(p: BinProcess): Promise<string> {
  const end = Date.now() + 60_000;
  for (;;) {
    const url = /listening on (http:\/\/\S+)/.exec(p.out())?.[1];
    if (url && /\n(keys: \d+ active|try: curl)/.test(p.out())) return url;
    if (p.proc.exitCode !== null || Date.now() > end) throw new Error(`xrate serve did not start:\n${p.out()}${p.err()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until the replica's /readyz is 200 at stream sequence `seq`. */
async function caughtUp(url: string, seq: number): Promise<void> {
  const end = Date.now() + 90_000;
  let last = '';
  while (Date.now() < end) {
    const r = await http(`${url}/readyz`);
    last = r.body;
    if (r.status === 200 && (JSON.parse(r.body) as { applied_seq?: number }).applied_seq === seq) return;
    await new Promise((f) => setTimeout(f, 100));
  }
  throw new Error(`the replica did not reach sequence ${seq}: ${last}`);
}

beforeAll(async () => {
  ensureBuilt();
  certs = certificateFiles(dir);
  natsTls = await startNats(
    `tls { cert_file: "${certs.serverCert}", key_file: "${certs.serverKey}", ca_file: "${certs.ca}", verify: true, timeout: 2 }\n` +
      `authorization { users = [ { user: "xrate", password: "${NATS_PASSWORD}" }, { nkey: "${NKEY.getPublicKey()}" } ] }\n`,
  );
  natsToken = await startNats(`authorization { token: "${NATS_TOKEN}" }\n`);
  redis = await startRedis({
    tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.ca },
    args: ['--user', 'default', 'off', '--user', 'xrate', 'on', `>${REDIS_PASSWORD}`, '~*', '&*', '+@all'],
  });
  writeFileSync(CONFIG, JSON.stringify({ maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 }));
  // 33 hours: a queue run has partitions, and the replicas have a day of history.
  await writeLog(LOG, { seed: 8, events: 48_000, rate: 0.4, badRate: 0.01, lateRate: 0.01 });
  const r = await cli('replay', LOG, '--db', SERIAL, '--config', CONFIG);
  expect(r.code, r.err).toBe(0);
  reference = await startService({ db: SERIAL, keys: join(dir, 'ref.keys'), port: 0 }, { out: () => {}, err: () => {} });
  want = await answers(reference.url, reference.devKey!);
  expect(want.every((a) => a.startsWith('200 '))).toBe(true);
}, 180_000);

afterAll(async () => {
  for (const p of started) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
  await Promise.all(started.map((p) => p.exited));
  await reference?.close();
  await natsTls?.dispose();
  await natsToken?.dispose();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('NATS and Redis secured', () => {
  it('a publish over mutual TLS with a password, a replica reading it with an NKey and its keys in Redis over TLS with an ACL user', async () => {
    const created = run(['keys', 'create', '--redis', redis.url, ...redisAuth(), ...redisTlsFlags(), '--name', 'desk']);
    expect(created.code, created.err).toBe(0);
    expect(created.out).toMatch(/^created key id 1, name "desk", .* in rediss:\/\/127\.0\.0\.1:\d+\n/);
    const key = created.out.trimEnd().split('\n').at(-1)!;
    const db = join(dir, 'replica.sqlite');
    const replica = start(
      [
        'serve',
        '--nats',
        natsTls.url,
        '--nats-nkey-file',
        F.nkey,
        ...natsTlsFlags(),
        '--stream',
        'SEC',
        '--db',
        db,
        '--config',
        CONFIG,
        '--port',
        '0',
        '--redis',
        redis.url,
        '--redis-user',
        'xrate',
        ...redisTlsFlags(),
      ],
      { XRATE_REDIS_PASSWORD: REDIS_PASSWORD },
    );
    const url = await listening(replica);
    const publish = start([
      'publish',
      LOG,
      '--nats',
      natsTls.url,
      '--nats-user',
      'xrate',
      '--nats-password-file',
      F.natsPassword,
      ...natsTlsFlags(),
      '--stream',
      'SEC',
    ]);
    await publish.waitErr(/records published/);
    expectNoSecretInAnyArgv();
    expect(await publish.exited, publish.err()).toBe(0);
    const seq = Number(/last sequence (\d+)/.exec(publish.out())?.[1]);
    expect(seq).toBe(48_001);
    await caughtUp(url, seq);
    expect(await answers(url, key)).toEqual(want);
    expectSameOutputs(db, SERIAL, REPLICA_TABLES);
    // Its keys are those of Redis: a request without one is refused, /readyz and /metrics answer.
    expect((await http(`${url}${QUERIES[0]}`)).status).toBe(401);
    expect(JSON.parse((await http(`${url}/readyz`)).body)).toEqual({
      status: 'ready',
      stream: 'SEC',
      applied_seq: seq,
      stream_seq: seq,
      lag: 0,
    });
    expect((await http(`${url}/metrics`)).body).toMatch(/^xrate_stream_lag_messages 0$/m);
    const list = run(['keys', 'list', '--redis', redis.url, ...redisAuth(), ...redisTlsFlags(), '--json']);
    expect(list.code, list.err).toBe(0);
    const listed = JSON.parse(list.out) as { id: number; name: string; used_24h: number }[];
    expect(listed.map((k) => [k.id, k.name])).toEqual([[1, 'desk']]);
    expect(listed[0].used_24h).toBeGreaterThanOrEqual(QUERIES.length);
    expectNoSecretInAnyArgv();
    replica.proc.kill('SIGTERM');
    expect(await replica.exited).toBe(0);
    shown.push(replica.out(), replica.err(), publish.out(), publish.err(), readFileSync(db, 'latin1'));
  }, 180_000);

  it('a publish with a token from the environment, a replica with the token in a file', async () => {
    const db = join(dir, 'token.sqlite');
    const publish = start(['publish', LOG, '--nats', natsToken.url, '--quiet'], { XRATE_NATS_TOKEN: NATS_TOKEN });
    expect(await publish.exited, publish.err()).toBe(0);
    const replica = start([
      'serve',
      '--nats',
      natsToken.url,
      '--nats-token-file',
      F.natsToken,
      '--db',
      db,
      '--keys',
      join(dir, 'token.keys'),
      '--config',
      CONFIG,
      '--port',
      '0',
    ]);
    const url = await listening(replica);
    const key = /^([0-9A-F]{8}-[0-9A-F-]{27})$/m.exec(replica.out())![1];
    await caughtUp(url, 48_001);
    expectNoSecretInAnyArgv();
    expect(await answers(url, key)).toEqual(want);
    replica.proc.kill('SIGTERM');
    expect(await replica.exited).toBe(0);
    shown.push(replica.out(), replica.err(), publish.out(), publish.err(), readFileSync(db, 'latin1'));
  }, 120_000);

  it('replay --queue with an xrate worker on the secured Redis equals the serial replay', async () => {
    const worker = start(['worker', '--queue', redis.url, '--redis-user', 'xrate', ...redisTlsFlags()], {
      XRATE_REDIS_PASSWORD: REDIS_PASSWORD,
    });
    await worker.waitErr(/waiting for partitions on rediss:\/\/127\.0\.0\.1:\d+\n/);
    const db = join(dir, 'queue.sqlite');
    const replay = start([
      'replay',
      LOG,
      '--db',
      db,
      '--config',
      CONFIG,
      '--queue',
      redis.url,
      ...redisAuth(),
      ...redisTlsFlags(),
      '--workers',
      '2',
      '--json',
    ]);
    await worker.waitErr(/: started/);
    expectNoSecretInAnyArgv();
    expect(await replay.exited, replay.err()).toBe(0);
    expectSameOutputs(db, SERIAL);
    expect((worker.err().match(/: done,/g) ?? []).length).toBe(2);
    worker.proc.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    shown.push(worker.out(), worker.err(), replay.out(), replay.err());
  }, 120_000);

  it('a wrong password, token, key or CA ends the command at once, exit 1, naming the server and what failed', () => {
    const nats = natsTls.url.replace(/[./]/g, '\\$&');
    const rediss = redis.url.replace(/[./]/g, '\\$&');
    const cases: [string[], RegExp, Record<string, string>?][] = [
      [
        ['publish', LOG, '--nats', natsTls.url, '--nats-user', 'xrate', '--nats-password-file', F.wrongPassword, ...natsTlsFlags()],
        new RegExp(`^xrate: cannot reach NATS at ${nats}: authentication failed \\(Authorization Violation\\)\\n$`),
      ],
      [
        ['publish', LOG, '--nats', natsTls.url, '--nats-nkey-file', F.otherNkey, ...natsTlsFlags()],
        new RegExp(`^xrate: cannot reach NATS at ${nats}: authentication failed \\(Authorization Violation\\)\\n$`),
      ],
      [
        [
          'publish',
          LOG,
          '--nats',
          natsTls.url,
          '--nats-user',
          'xrate',
          '--nats-password-file',
          F.natsPassword,
          '--nats-tls-ca',
          certs.otherCa,
          '--nats-tls-cert',
          certs.clientCert,
          '--nats-tls-key',
          certs.clientKey,
        ],
        new RegExp(`^xrate: cannot reach NATS at ${nats}: TLS verification failed \\(.*certificate.*\\)\\n$`),
      ],
      [
        ['publish', LOG, '--nats', natsToken.url],
        /^xrate: cannot reach NATS at nats:\/\/127\.0\.0\.1:\d+: authentication failed \(Authorization Violation\)\n$/,
        { XRATE_NATS_TOKEN: WRONG_PASSWORD },
      ],
      [
        [
          'serve',
          '--nats',
          natsTls.url,
          '--nats-user',
          'xrate',
          '--nats-password-file',
          F.wrongPassword,
          ...natsTlsFlags(),
          '--db',
          join(dir, 'never.sqlite'),
          '--port',
          '0',
        ],
        new RegExp(`xrate: cannot reach NATS at ${nats}: authentication failed \\(Authorization Violation\\)\\n$`),
      ],
      [
        ['keys', 'list', '--redis', redis.url, '--redis-user', 'xrate', '--redis-password-file', F.wrongPassword, ...redisTlsFlags()],
        new RegExp(`^xrate: cannot reach Redis at ${rediss}: authentication failed \\(WRONGPASS .*\\)\\n$`),
      ],
      [
        ['keys', 'list', '--redis', redis.url, ...redisAuth(), ...redisTlsFlags(certs.otherCa)],
        new RegExp(`^xrate: cannot reach Redis at ${rediss}: TLS verification failed \\(.*certificate.*\\)\\n$`),
      ],
      [
        ['serve', '--db', SERIAL, '--redis', redis.url, '--redis-user', 'xrate', ...redisTlsFlags(), '--port', '0'],
        new RegExp(`^xrate: cannot reach Redis at ${rediss}: authentication failed \\(WRONGPASS .*\\)\\n$`),
        { XRATE_REDIS_PASSWORD: WRONG_PASSWORD },
      ],
      [
        ['worker', '--queue', redis.url, '--redis-user', 'xrate', '--redis-password-file', F.wrongPassword, ...redisTlsFlags()],
        new RegExp(`^xrate: cannot reach the queue at ${rediss}: authentication failed \\(WRONGPASS .*\\)\\n$`),
      ],
      [
        ['replay', LOG, '--db', join(dir, 'never.sqlite'), '--queue', redis.url, ...redisAuth(), ...redisTlsFlags(certs.otherCa)],
        new RegExp(`^xrate: cannot reach the queue at ${rediss}: TLS verification failed \\(.*certificate.*\\)\\n$`),
      ],
    ];
    for (const [argv, re, env] of cases) {
      const r = run(argv, env);
      expect(r.killed, `${argv.join(' ')}: still running after 60 s`).toBe(false);
      expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(1);
      expect(r.err).toMatch(re);
    }
    expect(readdirSync(dir).filter((f) => f.startsWith('never.sqlite'))).toEqual([]);
  }, 120_000);

  it('a URL with credentials is refused (exit 2) with where to put them, and not echoed', () => {
    const cases: [string[], RegExp][] = [
      [
        ['publish', LOG, '--nats', `nats://xrate:${IN_URL}@127.0.0.1:4222`],
        /^xrate: --nats: give no credentials in the URL .* --nats-password-file FILE or XRATE_NATS_PASSWORD/,
      ],
      [['serve', '--nats', `nats://${IN_URL}@127.0.0.1:4222`], /^xrate: --nats: give no credentials in the URL/],
      [
        ['keys', 'list', '--redis', `rediss://xrate:${IN_URL}@127.0.0.1:6380`],
        /^xrate: --redis: give no credentials in the URL .* --redis-password-file FILE or XRATE_REDIS_PASSWORD/,
      ],
      [['worker', '--queue', `redis://:${IN_URL}@127.0.0.1:6379`], /^xrate: --queue: give no credentials in the URL/],
      [['replay', LOG, '--queue', `${IN_URL}@127.0.0.1:6379`], /^xrate: --queue: give no credentials in the URL/],
    ];
    for (const [argv, re] of cases) {
      const r = run(argv);
      expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(2);
      expect(r.err).toMatch(re);
    }
  });

  it('never shows a secret: outputs, /readyz, /metrics, the databases, any command line', () => {
    expect(argvsRead).toBeGreaterThanOrEqual(6);
    const text = shown.join('\n');
    expect(text.length).toBeGreaterThan(100_000);
    // The refused URLs' secrets are in no message; every secret is absent.
    for (const s of SECRETS) expect(text.includes(s), s).toBe(false);
  });
});
