/**
 * A rejected line changes nothing, the clock included (docs/methodology.md section 2), through the
 * whole replay path: a garbage line stamped far ahead of the log (an unknown symbol, an unknown
 * type) leaves every rate, OHLC bucket and query answer as they are without it, with and without
 * a reorder window, with `--from` and `--to`; only the rejects table holds it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLog } from '../../scripts/gen-log.js';
import { parseTime } from '../../src/core/time.js';
import { queryHistory, queryRates } from '../../src/replay/query.js';
import { replay } from '../../src/replay/replay.js';
import { dumpTables } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-rejected-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FUTURE = '2025-03-01T00:00:11Z';
const GARBAGE = [
  `{"type":"quote","time":"${FUTURE}","symbol_id":"???","bid_price":1,"bid_size":1,"ask_price":1.01,"ask_size":1}`,
  `{"type":"trade","time":"${FUTURE}","symbol_id":"NO SUCH MARKET","price":1,"size":1}`,
];
const CLEAN = join(dir, 'clean.ndjson');
const DIRTY = join(dir, 'dirty.ndjson');
let lines: string[];

beforeAll(() => {
  // 12 minutes around the 04:00 eligibility refresh, so the log has rates.
  lines = [...generateLog({ seed: 11, events: 12_000, start: '2024-03-01T03:56:00Z', rate: 20 })];
  writeFileSync(CLEAN, `${lines.join('\n')}\n`);
  const dirty = [...lines.slice(0, 3_000), GARBAGE[0], ...lines.slice(3_000, 9_000), GARBAGE[1], ...lines.slice(9_000), GARBAGE[0]];
  writeFileSync(DIRTY, `${dirty.join('\n')}\n`);
});

async function replayed(input: string, name: string, extra: { reorderWindowUs?: number; from?: number; to?: number } = {}) {
  const db = join(dir, `${name}.sqlite`);
  const summary = await replay({ inputs: [input], db, ...extra });
  return { summary, tables: dumpTables(db) };
}

describe('a rejected line never moves the clock', () => {
  // The last garbage line comes after --to, which ends the replay before it is read.
  for (const [label, extra, garbageRead] of [
    ['plain', {}, 3],
    ['reorder window 2 s', { reorderWindowUs: 2_000_000 }, 3],
    ['--from and --to', { from: parseTime('2024-03-01T04:01:00Z')!, to: parseTime('2024-03-01T04:05:30Z')! }, 2],
  ] as const) {
    it(`${label}: same rates, buckets and ticks as the log without the garbage lines`, async () => {
      const a = await replayed(CLEAN, `clean-${label}`, extra);
      const b = await replayed(DIRTY, `dirty-${label}`, extra);
      expect(b.tables.rates).toEqual(a.tables.rates);
      expect(b.tables.ohlc).toEqual(a.tables.ohlc);
      expect(b.tables.series).toEqual(a.tables.series);
      expect(b.summary.lastTick).toBe(a.summary.lastTick);
      expect(b.summary.ticks).toBe(a.summary.ticks);
      expect(b.summary.eventsAccepted).toBe(a.summary.eventsAccepted);
      expect(b.summary.eventsRejected - a.summary.eventsRejected).toBe(garbageRead);
      expect(b.tables.rejects.length - a.tables.rejects.length).toBe(garbageRead);
      expect(a.tables.rates.length).toBeGreaterThan(100);
    });
  }

  it('rate --at and history from the log stop at the first accepted event after the time, not at a rejected one', async () => {
    const at = parseTime('2024-03-01T04:06:00Z')!;
    const pairs: [string, string][] = [
      ['BTC', 'USD'],
      ['ETH', 'EUR'],
    ];
    const a = await queryRates({ inputs: [CLEAN] }, at, pairs);
    const b = await queryRates({ inputs: [DIRTY] }, at, pairs);
    expect(b).toEqual(a);
    expect(a[0].rate).not.toBeNull();
    const from = parseTime('2024-03-01T04:00:00Z')!;
    const ha = await queryHistory({ inputs: [CLEAN] }, ['BTC', 'USD'], '1MIN', from, at, 100);
    const hb = await queryHistory({ inputs: [DIRTY] }, ['BTC', 'USD'], '1MIN', from, at, 100);
    expect(hb).toEqual(ha);
    expect(ha.length).toBeGreaterThan(3);
  });
});
