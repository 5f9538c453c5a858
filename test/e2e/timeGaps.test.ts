/**
 * Work follows events, not time spans (docs/methodology.md section 2, "Quiet ticks"): a log whose
 * first event is dated 1970, then a year of silence between two busy stretches, replays in an
 * instant and answers exactly as a log of the last stretch alone does once the gap's state has
 * expired; a query far past the end of the data answers at once, from a log or a database.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLog } from '../../scripts/gen-log.js';
import { parseTime } from '../../src/core/time.js';
import { queryExplain, queryHistory, queryRates } from '../../src/replay/query.js';
import { replay, type ReplaySummary } from '../../src/replay/replay.js';
import { cliJson } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-time-gaps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GAP = join(dir, 'gap.ndjson');
const LAST = join(dir, 'last.ndjson');
const GAP_DB = join(dir, 'gap.sqlite');
const LAST_DB = join(dir, 'last.sqlite');
const PAIRS: [string, string][] = [
  ['BTC', 'USD'],
  ['ETH', 'EUR'],
  ['ETH', 'BTC'],
];
const S = 1_000_000;
let gap: ReplaySummary;
let last: ReplaySummary;

beforeAll(async () => {
  // Two 10-minute stretches a year apart, each around a 04:00 eligibility refresh, and one quote
  // dated 1970 first (so the clock starts 54 years before the data).
  const first = [...generateLog({ seed: 11, events: 12_000, start: '2024-03-01T03:56:00Z', rate: 20 })];
  const second = [...generateLog({ seed: 12, events: 12_000, start: '2025-03-01T03:56:00Z', rate: 20 })];
  const quote = first.find((l) => l.includes('"type":"quote"'));
  if (quote === undefined) throw new Error('the generated log has no quote');
  const ancient = quote.replace(/"time":"[^"]*"/, '"time":"1970-01-01T00:00:05Z"');
  writeFileSync(GAP, `${[ancient, ...first, ...second].join('\n')}\n`);
  writeFileSync(LAST, `${second.join('\n')}\n`);
  gap = await replay({ inputs: [GAP], db: GAP_DB });
  last = await replay({ inputs: [LAST], db: LAST_DB });
}, 120_000);

describe('a log with a first event dated 1970 and a year-long gap', () => {
  it('ticks every second from 1970 (counted) and accepts every event', () => {
    expect(gap.eventsRejected).toBe(0);
    expect(gap.firstTick).toBe(5 * S);
    expect(gap.lastTick).toBe(last.lastTick);
    // Every second from T0 through the last tick is a tick, as before: the quiet ones are taken
    // in runs, not skipped from the count.
    expect(gap.ticks).toBe((gap.lastTick! - gap.firstTick!) / S + 1);
    expect(gap.rateChanges).toBeGreaterThan(last.rateChanges);
  });

  it('answers like the last stretch alone once the first one has expired', async () => {
    for (const t of ['2025-03-01T04:00:30Z', '2025-03-01T04:03:00Z', '2025-03-01T04:05:59Z']) {
      const at = parseTime(t)!;
      const a = await queryRates({ inputs: [GAP_DB] }, at, PAIRS);
      const b = await queryRates({ inputs: [LAST_DB] }, at, PAIRS);
      expect(a).toEqual(b);
      expect(a[0].rate).not.toBeNull();
    }
    const from = parseTime('2025-03-01T04:01:00Z')!;
    const to = parseTime('2025-03-01T04:06:00Z')!;
    for (const period of ['1SEC', '1MIN', '5SEC']) {
      const a = await queryHistory({ inputs: [GAP_DB] }, ['BTC', 'USD'], period, from, to, 1000);
      const b = await queryHistory({ inputs: [LAST_DB] }, ['BTC', 'USD'], period, from, to, 1000);
      expect(a).toEqual(b);
      expect(a.length).toBeGreaterThan(3);
    }
  });

  it('answers rates in 2024 and in the gap from the log as from the database', async () => {
    for (const t of ['2024-03-01T04:04:00Z', '2024-07-01T00:00:00Z']) {
      const at = parseTime(t)!;
      expect(await queryRates({ inputs: [GAP] }, at, PAIRS)).toEqual(await queryRates({ inputs: [GAP_DB] }, at, PAIRS));
    }
    const mid = await queryRates({ inputs: [GAP] }, parseTime('2024-07-01T00:00:00Z')!, PAIRS);
    expect(mid.map((r) => r.rate)).toEqual([null, null, null]);
  });
});

describe('a query far past the end of the data', () => {
  const AT = '2200-01-01T00:00:00Z';
  it('rate --at 2200 answers at once from the log and from the database, with no rate', async () => {
    for (const src of [GAP, GAP_DB]) {
      const r = await cliJson<{ rate: number | null }[]>('rate', src, '--at', AT, '--pair', 'BTC/USD');
      expect(r).toEqual([{ asset_id_base: 'BTC', asset_id_quote: 'USD', rate: null, time: null }]);
    }
  });

  it('explain --at 2200 says there is no rate', async () => {
    const e = await queryExplain({ inputs: [GAP_DB] }, ['BTC', 'USD'], parseTime(AT)!);
    expect(e.rate).toBeNull();
    expect(e.tick).toBe('2200-01-01T00:00:00.0000000Z');
  });
});
