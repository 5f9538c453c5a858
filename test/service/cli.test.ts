/**
 * `xrate serve` and `xrate keys`: the commands through the CLI's run(), and the service as a child
 * process (first start prints a development key that works; SIGTERM closes it cleanly).
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/main.js';
import { startService } from '../../src/app/serve.js';
import { KeyStore } from '../../src/http/keys.js';
import { capturedIo } from '../helpers/io.js';
import { demoDb, expectError, request, ROOT, tempDir } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
let db: string;

beforeAll(async () => {
  tmp = tempDir();
  db = await demoDb(tmp.dir);
});
afterAll(() => tmp?.remove());

const io = capturedIo;

describe('xrate keys', () => {
  it('create prints the new key alone on its last line; list, revoke, jwt-import', async () => {
    const keysDb = join(tmp.dir, 'cli-keys.sqlite');
    let o = io();
    expect(
      await run(
        ['keys', 'create', '--keys', keysDb, '--name', 'alice', '--limit', '5', '--concurrency', '2', '--rights', 'rate,history'],
        o,
      ),
    ).toBe(0);
    const lines = o.stdout().trimEnd().split('\n');
    const key = lines.at(-1)!;
    expect(key).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/);
    expect(lines[0]).toMatch(/created key id 1, name "alice", prefix .* rights rate,history, limit 5 per 24 h, concurrency 2/);

    const store = KeyStore.open(keysDb);
    const rec = store.find(key)!;
    expect(rec).toMatchObject({ name: 'alice', limit: 5, concurrency: 2, overage: false });
    // Only the hash is stored.
    store.close();
    const file = new Database(keysDb, { readonly: true });
    const raw = JSON.stringify(file.prepare('SELECT * FROM api_keys').all());
    file.close();
    expect(raw).not.toContain(key);

    o = io();
    expect(await run(['keys', 'create', '--keys', keysDb, '--overage'], o)).toBe(0);
    o = io();
    expect(await run(['keys', 'list', '--keys', keysDb], o)).toBe(0);
    expect(o.stdout()).toMatch(/^id\s+name\s+prefix\s+rights\s+limit\s+used_24h/);
    expect(o.stdout()).toContain('alice');
    expect(o.stdout()).not.toContain(key);
    o = io();
    expect(await run(['keys', 'list', '--keys', keysDb, '--json'], o)).toBe(0);
    const listed = JSON.parse(o.stdout()) as { id: number; overage: boolean; jwt: string | null }[];
    expect(listed.map((k) => k.overage)).toEqual([false, true]);

    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pemFile = join(tmp.dir, 'pub.pem');
    writeFileSync(pemFile, rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string);
    o = io();
    expect(await run(['keys', 'jwt-import', '--keys', keysDb, '--id', '1', '--public-key', pemFile], o)).toBe(0);
    expect(o.stdout()).toMatch(/RS256, PS256/);
    const secretFile = join(tmp.dir, 'secret.txt');
    writeFileSync(secretFile, `${'x'.repeat(40)}\n`);
    expect(await run(['keys', 'jwt-import', '--keys', keysDb, '--key', key, '--secret-file', secretFile], io())).toBe(0);
    o = io();
    await run(['keys', 'list', '--keys', keysDb, '--json'], o);
    expect((JSON.parse(o.stdout()) as { jwt: string | null }[])[0].jwt).toBe('HS256');
    expect(await run(['keys', 'jwt-import', '--keys', keysDb, '--id', '1', '--remove'], io())).toBe(0);

    o = io();
    expect(await run(['keys', 'revoke', '--keys', keysDb, '--key', key], o)).toBe(0);
    expect(o.stdout()).toBe('revoked key 1\n');
    o = io();
    expect(await run(['keys', 'revoke', '--keys', keysDb, '1'], o)).toBe(0);
    expect(o.stdout()).toBe('key 1 was already revoked\n');
    const s2 = KeyStore.open(keysDb);
    expect(s2.find(key)).toBeUndefined();
    s2.close();
  });

  it('bad usage exits 2, bad input 1', async () => {
    const keysDb = join(tmp.dir, 'cli-keys2.sqlite');
    const cases: [string[], number, RegExp][] = [
      [['keys'], 2, /unknown subcommand \(none\)/],
      [['keys', 'rotate', '--keys', keysDb], 2, /unknown subcommand "rotate"/],
      [['keys', 'create', '--keys', keysDb, '--limit', '0'], 2, /--limit must be an integer/],
      [['keys', 'create', '--keys', keysDb, '--rights', 'admin'], 2, /unknown right "admin"/],
      [['keys', 'create', '--keys', keysDb, '--bogus'], 2, /bogus/],
      [['keys', 'revoke', '--keys', keysDb], 2, /--id N/],
      [['keys', 'revoke', '--keys', keysDb, '--id', '99'], 1, /no key with id 99/],
      [['keys', 'jwt-import', '--keys', keysDb, '--id', '1'], 2, /exactly one of/],
      [['keys', 'list', '--keys', join(tmp.dir, 'missing.sqlite')], 1, /no keys database/],
      [
        ['serve', '--follow', '--db', db],
        2,
        /^xrate: --follow names the log it follows: give --follow LOG \(not --replay LOG --follow\)\n$/,
      ],
      [['serve', '--replay', db, '--follow'], 2, /give --follow LOG \(not --replay LOG --follow\)/],
      [['serve', '--replay', db, '--follow', db], 2, /--replay LOG and --follow LOG exclude each other/],
      [['serve', '--follow', db, '--format', 'csv'], 2, /--format: a followed log \(--follow LOG\) is read as plain NDJSON lines/],
      [['serve', '--follow', db, '--reorder-window', '2'], 2, /--reorder-window: a followed log/],
      [
        ['serve', '--nats', 'nats://127.0.0.1:1', '--max-line-bytes', '9'],
        2,
        /--max-line-bytes: a replica \(--nats URL\) reads the stream's records/,
      ],
      [['serve', '--db', join(tmp.dir, 'missing.sqlite')], 1, /no database at/],
      [['serve', '--db', db, '--port', '70000'], 2, /--port must be an integer/],
      [['serve', '--db', db, '--format', 'csv'], 2, /apply to --replay LOG/],
    ];
    await run(['keys', 'create', '--keys', keysDb], io());
    for (const [args, code, re] of cases) {
      const o = io();
      expect(await run(args, o), args.join(' ')).toBe(code);
      expect(o.stderr(), args.join(' ')).toMatch(re);
    }
    const h = io();
    expect(await run(['serve', '--help'], h)).toBe(0);
    expect(h.stdout()).toMatch(/Usage: xrate serve/);
    expect(await run(['keys', '--help'], h)).toBe(0);
    expect(h.stdout()).toMatch(/Usage: xrate keys/);
  });
});

describe('startService', () => {
  it('the first start with no key creates a development key and prints it; later starts do not', async () => {
    const keysDb = join(tmp.dir, 'svc-keys.sqlite');
    let o = io();
    let svc = await startService({ db, keys: keysDb, port: 0 }, o);
    try {
      expect(svc.devKey).toBeDefined();
      expect(o.stdout()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+ \(database: /);
      expect(o.stdout()).toContain(`\n${svc.devKey}\n`);
      const r = await request(`${svc.url}/v1/exchangerate/BTC/USD`, { headers: { 'X-CoinAPI-Key': svc.devKey! } });
      expect(r.status).toBe(200);
    } finally {
      await svc.close();
    }
    o = io();
    svc = await startService({ db, keys: keysDb, port: 0 }, o);
    try {
      expect(svc.devKey).toBeUndefined();
      expect(o.stdout()).toMatch(/keys: 1 active/);
      expectError(await request(`${svc.url}/v1/exchangerate/BTC/USD`), 401);
    } finally {
      await svc.close();
    }
  });
});

describe('startService over a live engine', () => {
  it('--replay LOG serves the engine left by the replay; --follow LOG keeps reading', async () => {
    const { DEMO_LOG } = await import('./helpers.js');
    let o = io();
    let svc = await startService(
      { replay: DEMO_LOG, db: join(tmp.dir, 'served-replay.sqlite'), keys: join(tmp.dir, 'k-replay.sqlite'), port: 0 },
      o,
    );
    try {
      expect(o.stdout()).toMatch(/listening on .*\(replay: /);
      const r = await request(`${svc.url}/v1/exchangerate/SOL/BTC`, { headers: { 'X-CoinAPI-Key': svc.devKey! } });
      expect(r.json()).toMatchObject({ asset_id_base: 'SOL', asset_id_quote: 'BTC', time: '2024-03-01T05:53:52.2753720Z' });
    } finally {
      await svc.close();
    }
    const log = join(tmp.dir, 'follow.ndjson');
    const t = new Date(Date.now() - 5000).toISOString();
    writeFileSync(
      log,
      `{"type":"trade","time":"${t}","symbol_id":"X_SPOT_BTC_USD","price":100,"size":1}\n` +
        `{"type":"quote","time":"${t}","symbol_id":"X_SPOT_BTC_USD","bid_price":99,"bid_size":1,"ask_price":101,"ask_size":1}\n`,
    );
    o = io();
    svc = await startService(
      { follow: log, db: join(tmp.dir, 'served-follow.sqlite'), keys: join(tmp.dir, 'k-follow.sqlite'), port: 0, pollMs: 50 },
      o,
    );
    try {
      expect(o.stdout()).toMatch(/listening on .*\(follow: /);
      const r = await request(`${svc.url}/v1/exchangerate/BTC/USD`, { headers: { 'X-CoinAPI-Key': svc.devKey! } });
      expect(r.json()).toMatchObject({ rate: 100 });
    } finally {
      await svc.close();
    }
  });
});

describe('xrate serve as a process', () => {
  it('serves with the printed key, keys in the --db file by default, and exits 0 on SIGTERM', async () => {
    const main = pathToFileURL(join(ROOT, 'src', 'cli', 'main.ts')).href;
    const args = ['serve', '--db', db, '--port', '0'];
    const code = `const { run } = await import(${JSON.stringify(main)}); process.exitCode = await run(${JSON.stringify(args)});`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
    const url = await new Promise<string>((res, rej) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+)[\s\S]*try: curl/.exec(out);
        if (m) res(m[1]);
      });
      void exited.then(() => rej(new Error(out)));
    });
    const key = /shown only now:\n(\S+)\n/.exec(out)![1];
    const r = await request(`${url}/v1/exchangerate/BTC/USD`, { headers: { 'X-CoinAPI-Key': key } });
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ asset_id_base: 'BTC', asset_id_quote: 'USD' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The key and its usage were written to the --db file.
    const ks = KeyStore.open(db);
    expect(ks.list()[0]).toMatchObject({ name: 'dev', used_24h: 1 });
    ks.close();
  });
});

describe('xrate serve on a busy port', () => {
  it('says so in one line and exits 1 (no stack trace)', async () => {
    const blocker = createServer();
    await new Promise<void>((res) => blocker.listen(0, '127.0.0.1', res));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const o = io();
      expect(await run(['serve', '--db', db, '--keys', join(tmp.dir, 'busy-keys.sqlite'), '--port', String(port)], o)).toBe(1);
      expect(o.stderr()).toBe(
        `xrate: cannot listen on 127.0.0.1:${port}: the port is in use (choose another with --port, or --port 0 for any free port)\n`,
      );
    } finally {
      blocker.close();
    }
  });
});
