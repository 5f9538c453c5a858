/**
 * `xrate serve --db FILE` while `xrate replay LOG --db FILE` writes into the same file: the
 * service answers the complete run it has; once the replay has replaced the outputs (its first
 * batch), data requests (rates, metrics, symbols) are 550 naming the replay's run and status ("running", or "killed" once
 * its process is gone); once a replay completes, the service answers from the new run, without a
 * restart. The replay runs in a child process that stops itself (SIGSTOP) after its first batch,
 * so the test sees it mid-way for sure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replay } from '../../src/replay/replay.js';
import { DatabaseRateProvider } from '../../src/answers/index.js';
import { writeLog } from '../../scripts/gen-log.js';
import { demoDb, expectError, ROOT, startServer, tempDir, type TestServer } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
/** Another log than the demo's: other prices, 03:50 to about 04:15. */
let otherLog: string;

beforeAll(async () => {
  tmp = tempDir();
  otherLog = join(tmp.dir, 'other.ndjson');
  await writeLog(otherLog, { seed: 11, events: 30_000, exchanges: 4, assets: 6, start: '2024-03-01T03:50:00Z' });
});

afterAll(() => tmp?.remove());

/**
 * A replay of `log` into `db` in a child process that stops itself once its first batch is
 * committed (then prints `paused`): the replay's database writer thread is at most three batches
 * behind, and commits at most eight together (src/io/writerWorker.ts `GROUP_MAX`), so by the
 * twelfth batch the first is in the database (by the fifth, under load, it was not always: the
 * first eight could still be in one open transaction).
 */
function pausingReplay(log: string, db: string): { child: ChildProcess; paused: Promise<void>; exited: Promise<number | null> } {
  const mod = pathToFileURL(join(ROOT, 'src', 'replay', 'replay.ts')).href;
  const code = `
    const { replay } = await import(${JSON.stringify(mod)});
    let batches = 0;
    await replay({
      inputs: [${JSON.stringify(log)}], db: ${JSON.stringify(db)}, batchSize: 2000, progressEveryMs: 0,
      onProgress: () => {
        if (++batches !== 12) return;
        process.stdout.write('paused\\n');
        process.kill(process.pid, 'SIGSTOP');
      },
    });`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
  const paused = new Promise<void>((res, rej) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('paused\n')) res();
    });
    void exited.then((c) => rej(new Error(`the replay exited (${c}) before its first batch\n${out}`)));
  });
  return { child, paused, exited };
}

const RATE = '/v1/exchangerate/BTC/USD';

async function serve(db: string): Promise<{ srv: TestServer; H: Record<string, string> }> {
  // As `xrate serve --db FILE`: the keys in the same file.
  const srv = await startServer({ db, keysPath: db });
  return { srv, H: { 'X-CoinAPI-Key': srv.key() } };
}

/** What a server started now over `db` answers for BTC/USD. */
async function freshRate(db: string): Promise<unknown> {
  const p = await DatabaseRateProvider.open(db);
  try {
    return p.rate('BTC', 'USD').value;
  } finally {
    await p.close();
  }
}

describe('a replay into the database being served', () => {
  it('while it runs: 550 naming its run; once it completes: the new run, without a restart', async () => {
    const db = await demoDb(tmp.dir);
    const { srv, H } = await serve(db);
    const r = pausingReplay(otherLog, db);
    try {
      const before = (await srv.get(RATE, H)).json() as { rate: number };
      expect(before.rate).toBeGreaterThan(0);

      await r.paused;
      let m = expectError(await srv.get(RATE, H), 550);
      expect(m).toBe(
        `You requested specific single item that we don't have at this moment: the database "${db}" holds the partial outputs of replay run 2, ` +
          'which has not completed (status "running"): answers resume once a replay into it completes',
      );
      for (const path of [
        '/v1/exchangerate/BTC?filter_asset_id=USD',
        '/v1/exchangerate/BTC/USD/history?period_id=1MIN&time_start=2024-03-01T04:00:00Z&time_end=2100-01-01T00:00:00Z',
        '/v1/exchangerate/BTC/USD/explain',
        '/v1/metrics/listing',
        '/v1/metrics/exchange/current?exchange_id=KRAKEN',
        '/v1/symbols/KRAKEN',
      ]) {
        m = expectError(await srv.get(path, H), 550);
        expect(m).toMatch(/replay run 2, which has not completed \(status "running"\)/);
      }
      expect((await srv.get('/v1/exchangerate/history/periods', H)).status).toBe(200);
      expect((await srv.get('/v1/metrics/listing', H)).status).not.toBe(200);
      // Not ready while the replay runs, alive all the same.
      const ready = await srv.get('/readyz', {});
      expect(ready.status).toBe(503);
      expect((ready.json() as { message: string }).message).toMatch(/^Not ready: .*replay run 2, which has not completed/);
      expect((await srv.get('/healthz', {})).status).toBe(200);

      r.child.kill('SIGCONT');
      expect(await r.exited).toBe(0);
      const after = await srv.get(RATE, H);
      expect(after.status, after.text).toBe(200);
      expect((await srv.get('/readyz', {})).json()).toEqual({ status: 'ready' });
      expect(after.json()).toEqual(await freshRate(db));
      expect(after.json()).not.toEqual(before);
      expect((await srv.get('/v1/metrics/listing', H)).status).toBe(200);
      expect((await srv.get('/v1/symbols/KRAKEN', H)).status).toBe(200);
      // The new run's coverage, config and final engine: its explain and its history.
      const ex = (await srv.get(`${RATE}/explain`, H)).json() as { tick: string };
      expect(ex.tick < '2024-03-01T04:20:00Z').toBe(true);
      const h = (
        await srv.get(`${RATE}/history?period_id=1MIN&time_start=2024-03-01T04:00:00Z&time_end=2100-01-01T00:00:00Z&limit=1000`, H)
      ).json() as unknown[];
      expect(h.length).toBeGreaterThan(5);
      expect(h.length).toBeLessThan(20);
      expect(srv.provider.info().lastTick).toBeLessThan(Date.UTC(2024, 2, 1, 4, 20) * 1000);
    } finally {
      r.child.kill('SIGKILL');
      await srv.close();
    }
  });

  it('a replay killed mid-way (kill -9): 550 naming its run as killed, until a replay completes', async () => {
    const dir = join(tmp.dir, 'killed');
    mkdirSync(dir);
    const db = await demoDb(dir);
    const { srv, H } = await serve(db);
    const r = pausingReplay(otherLog, db);
    try {
      expect((await srv.get(RATE, H)).status).toBe(200);
      await r.paused;
      expect(expectError(await srv.get(RATE, H), 550)).toMatch(/replay run 2, which has not completed \(status "running"\)/);
      r.child.kill('SIGKILL');
      await r.exited;
      expect(expectError(await srv.get(RATE, H), 550)).toMatch(
        new RegExp(`replay run 2, which has not completed \\(status "killed \\(its process ${r.child.pid} is gone\\)"\\)`),
      );
      // A replay that completes (here in this process) brings the answers back.
      await replay({ inputs: [otherLog], db });
      const after = await srv.get(RATE, H);
      expect(after.status, after.text).toBe(200);
      expect((await srv.get('/readyz', {})).json()).toEqual({ status: 'ready' });
      expect(after.json()).toEqual(await freshRate(db));
    } finally {
      r.child.kill('SIGKILL');
      await srv.close();
    }
  });
});
