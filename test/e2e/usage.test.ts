/**
 * Charged usage survives `kill -9` of `xrate serve`: a response is sent only once its charge is
 * committed, so every request a client got an answer for is in `api_key_usage` after a crash.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cli, DEMO, ensureBuilt, ROOT } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-usage-'));
const DB = join(dir, 'demo.sqlite');
const KEYS = join(dir, 'keys.sqlite');
let child: ChildProcess | undefined;

afterAll(() => {
  child?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

beforeAll(async () => {
  ensureBuilt();
  expect((await cli('replay', DEMO, '--db', DB, '--quiet')).code).toBe(0);
}, 120_000);

/** Starts `xrate serve` (the built command) and resolves with its URL and development key. */
function serve(): Promise<{ url: string; key: string }> {
  const c = spawn(process.execPath, [BIN, 'serve', '--db', DB, '--keys', KEYS, '--port', '0'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = c;
  return new Promise((res, rej) => {
    let out = '';
    c.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const url = /listening on (http:\/\/\S+)/.exec(out);
      const key = /shown only now:\n([0-9A-F-]{36})\n/.exec(out);
      if (url && key) res({ url: url[1], key: key[1] });
    });
    c.on('exit', (code) => rej(new Error(`xrate serve exited (${code}) before it listened:\n${out}`)));
  });
}

describe('usage and kill -9', () => {
  it('every answered request is charged in the keys database, even when the server is killed right after', async () => {
    const { url, key } = await serve();
    let answered = 0;
    for (let i = 0; i < 300; i++) {
      const r = await fetch(`${url}/v1/exchangerate/BTC/USD`, { headers: { 'X-CoinAPI-Key': key } });
      await r.arrayBuffer();
      if (r.status === 200) answered++;
    }
    const exited = new Promise((res) => child!.once('exit', res));
    child!.kill('SIGKILL');
    await exited;
    expect(answered).toBe(300);
    const db = new Database(KEYS, { readonly: true });
    try {
      const { used } = db.prepare('SELECT COALESCE(SUM(cost), 0) AS used FROM api_key_usage').get() as { used: number };
      expect(used).toBe(answered);
    } finally {
      db.close();
    }
  }, 120_000);
});
