/**
 * The state a partition carries in, checked (docs/parallel.md, "Carried state checked"): the
 * pre-scan takes every record before a window as accepted; a late `exchange` event, a late
 * `symbol` event and a rejected quote naming a new market make it wrong. The partition before
 * reports what a serial replay has there, the partition runs again with it, and the merged
 * replay equals the serial one. Without the check, it does not.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { formatTime } from '../../src/core/time.js';
import { compareReplays } from '../../src/io/compareReplays.js';
import { type ParallelProgress, type PartitionRunner, replayParallel, runPartitionHere } from '../../src/replay/parallel.js';
import { replay, type ReplaySummary } from '../../src/replay/replay.js';
import { expectSameOutputs } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-carried-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Short windows: a warm-up of about 2 hours (24 h for the last partition) inside a log of about 66 hours. */
const config = { maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 };
const LOG = join(dir, 'log.ndjson');

let serial: ReplaySummary;
const SERIAL = join(dir, 'serial.sqlite');

beforeAll(async () => {
  const plain = join(dir, 'plain.ndjson');
  await writeLog(plain, { seed: 8, events: 120_000, rate: 0.5 });
  const lines = readFileSync(plain, 'utf8').trimEnd().split('\n');
  // A tenth into the log (before the later windows): three lines a serial replay rejects.
  const k = Math.floor(lines.length / 10);
  const t = (JSON.parse(lines[k]) as { time: string }).time;
  const hourBefore = formatTime(Date.parse(t) * 1000 - 3_600_000_000);
  const injected = [
    // Late: Coinbase is not legitimate, and Binance's BTC/USDT market is BTC/EUR (both rejected as late).
    { type: 'exchange', time: hourBefore, exchange_id: 'COINBASE', legitimate: false, rank: 1 },
    {
      type: 'symbol',
      time: hourBefore,
      exchange_id: 'BINANCE',
      symbol_id: 'BINANCE_SPOT_BTC_USDT',
      symbol_type: 'SPOT',
      asset_id_base: 'BTC',
      asset_id_quote: 'EUR',
    },
    // A bad price: rejected, and its market never known.
    { type: 'quote', time: t, symbol_id: 'NEWEX_SPOT_BTC_USD', bid_price: -1, bid_size: 1, ask_price: 2, ask_size: 1 },
  ].map((e) => JSON.stringify(e));
  writeFileSync(LOG, `${[...lines.slice(0, k), ...injected, ...lines.slice(k)].join('\n')}\n`);
  serial = await replay({ inputs: [LOG], db: SERIAL, config });
  expect(serial.rejectsByReason.late).toBe(2);
}, 120_000);

describe('the state carried into a partition', () => {
  it('is checked by the partition before; the partition is run again with the serial state, and the merge equals the serial replay', async () => {
    const stages: ParallelProgress['stage'][] = [];
    const db = join(dir, 'checked.sqlite');
    const s = await replayParallel({
      inputs: [LOG],
      db,
      config,
      workers: 3,
      onProgress: (p) => stages.push(p.stage),
      progressEveryMs: 1e9,
    });
    expect(stages).toContain('recarry');
    expectSameOutputs(db, SERIAL);
    // The final engine too: symbol records (a market quiet through the last window keeps its last
    // quote's midpoint as price) and the provenance of every rate.
    expect(s.engine.symbols()).toEqual(serial.engine.symbols());
    for (const p of serial.engine.pairs())
      expect(s.engine.explain(p.base, p.quote), `${p.base}/${p.quote}`).toEqual(serial.engine.explain(p.base, p.quote));
    expect(s.eventsRejected).toBe(serial.eventsRejected);
  }, 120_000);

  it('unchecked, gives other outputs (the test sees the difference)', async () => {
    const unchecked: PartitionRunner = (job, progress) => {
      const { reportAt: _r, ...partition } = job.partition;
      return runPartitionHere({ ...job, partition }, progress);
    };
    const db = join(dir, 'unchecked.sqlite');
    const s = await replayParallel({ inputs: [LOG], db, config, workers: 3, run: unchecked });
    expect(compareReplays(SERIAL, db, { tables: ['rates'] })[0].difference).toBeDefined();
    expect(s.engine.explain('BTC', 'EUR')).not.toEqual(serial.engine.explain('BTC', 'EUR'));
  }, 120_000);
});
