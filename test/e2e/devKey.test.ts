/**
 * The development key of `xrate serve` is never lost: a start that fails (here, a real port
 * already in use) creates no key, and the next start, on a free port, creates it and prints it,
 * and it works.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../src/http/keys.js';
import { bin, type BinProcess, binStart, cli, ensureBuilt, writeSmallLogs } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-devkey-'));
const DB = join(dir, 'small.sqlite');
const KEYS = join(dir, 'keys.sqlite');
let child: BinProcess | undefined;

beforeAll(async () => {
  ensureBuilt();
  const { ndjson } = writeSmallLogs(dir);
  expect((await cli('replay', ndjson, '--db', DB, '--quiet')).code).toBe(0);
}, 120_000);

afterAll(() => {
  child?.proc.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves with stdout once it matches `re` (rejects if the process exits first). */
function stdoutMatching(p: BinProcess, re: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const look = (): void => {
      const m = re.exec(p.out());
      if (m) {
        p.proc.stdout?.off('data', look);
        resolve(m);
      }
    };
    p.proc.stdout?.on('data', look);
    void p.exited.then((code) => reject(new Error(`xrate serve exited (${code}):\n${p.out()}${p.err()}`)));
    look();
  });
}

describe('xrate serve: the development key', () => {
  it('a start on a port in use fails with exit 1 and creates no key; the next start creates the key, prints it, and it works', async () => {
    const blocker = createServer();
    await new Promise<void>((res) => blocker.listen(0, '127.0.0.1', res));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const failed = bin(['serve', '--db', DB, '--keys', KEYS, '--port', String(port), '--log-level', 'silent']);
      expect(failed.status).toBe(1);
      expect(failed.stderr).toBe(
        `xrate: cannot listen on 127.0.0.1:${port}: the port is in use (choose another with --port, or --port 0 for any free port)\n`,
      );
      expect(failed.stdout).not.toContain('development key');
    } finally {
      await new Promise((res) => blocker.close(res));
    }
    const store = KeyStore.open(KEYS);
    expect(store.activeCount()).toBe(0);
    expect(store.list()).toEqual([]);
    store.close();

    child = binStart(['serve', '--db', DB, '--keys', KEYS, '--port', '0', '--log-level', 'silent']);
    const [, url, key] = await stdoutMatching(
      child,
      /listening on (http:\/\/\S+)[\s\S]*created a local development key "dev"[^\n]*shown only now:\n([0-9A-F-]{36})\n/,
    );
    const ok = await fetch(`${url}/v1/exchangerate/BTC/USD`, { headers: { 'X-CoinAPI-Key': key } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ asset_id_base: 'BTC', asset_id_quote: 'USD' });
    child.proc.kill('SIGTERM');
    expect(await child.exited).toBe(0);
    child = undefined;
    const after = KeyStore.open(KEYS);
    expect(after.list().map((k) => k.name)).toEqual(['dev']);
    after.close();
  }, 60_000);
});
