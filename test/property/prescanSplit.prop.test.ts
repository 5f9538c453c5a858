/**
 * The pre-scan of an NDJSON input in two parts (src/replay/prescan.ts: the second half of a large
 * file is scanned in a worker thread): the first part scanned, the second scanned on its own and
 * appended (`PrescanStats.append`) give the stats of one scan of the whole, field by field, and
 * the same plans; also after earlier inputs, and with inputs read after. So do a Parquet log's
 * two slices of row groups, each scanned on its own. The built command's worker threads give the
 * same stats as one thread.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { convertToParquet } from '../../src/io/parquetConvert.js';
import { MINUTE_US, PrescanStats, planPartitions, scanNdjsonRange, scanParquet } from '../../src/replay/prescan.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-prescan-split-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.parse('2024-03-01T00:00:00Z');

/** One line: mostly quotes at times that drift (some out of order), some metadata, blank and broken lines. */
const lineArb = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 4 * 3600_000 }), fc.constantFrom('K_SPOT_BTC_USD', 'K_SPOT_ETH_USD', 'B_SPOT_ETH_BTC'))
      .map(([ms, id]) => `{"type":"quote","time":"${new Date(T0 + ms).toISOString()}","symbol_id":"${id}","bid_price":1}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 0, max: 4 * 3600_000 })
      .map((ms) => `{"type":"exchange","time":"${new Date(T0 + ms).toISOString()}","exchange_id":"K","legitimate":true,"rank":1}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 0, max: 4 * 3600_000 })
      .map(
        (ms) =>
          `{"type":"symbol","time":"${new Date(T0 + ms).toISOString()}","exchange_id":"K","symbol_id":"K_SPOT_SOL_USD","symbol_type":"SPOT","asset_id_base":"SOL","asset_id_quote":"USD"}`,
      ),
  },
  { weight: 1, arbitrary: fc.constantFrom('', '  ', 'not json', '{"type":"trade","time":"bad"}') },
);

/** Times sorted in stretches (a log's order) with the lines' own jitter. */
const logArb = fc.array(lineArb, { minLength: 1, maxLength: 150 }).map((lines) => `${lines.join('\n')}\n`);

/** Every field of a scan (maps sorted by key; symbols and metadata in their order). */
function fields(s: PrescanStats): unknown {
  const sorted = <V>(m: ReadonlyMap<number, V>) => [...m].sort((a, b) => a[0] - b[0]);
  return {
    events: s.events,
    first: s.first,
    last: s.last,
    count: sorted(s.count),
    firstAt: sorted(s.firstAt),
    clockBefore: sorted(s.clockBefore),
    metadata: s.metadata,
    symbols: [...s.symbols],
    plans: [1, 2, 3].map((n) => planPartitions(s, n, 30 * MINUTE_US)),
  };
}

let run = 0;
function file(text: string): string {
  const p = join(dir, `${run++}.ndjson`);
  writeFileSync(p, text);
  return p;
}

describe('pre-scan in two parts', () => {
  it('appends the second part to the first: the stats of one scan of the whole, also between other inputs', async () => {
    await fc.assert(
      fc.asyncProperty(logArb, logArb, logArb, fc.nat(), async (before, log, after, at) => {
        const [a, b, c] = [file(before), file(log), file(after)];
        const whole = new PrescanStats();
        await scanNdjsonRange(a, 0, whole, 1 << 20);
        await scanNdjsonRange(b, 1, whole, 1 << 20);
        await scanNdjsonRange(c, 2, whole, 1 << 20);
        // Cut b at a line start.
        const starts = [...log.matchAll(/\n/g)].map((m) => Buffer.byteLength(log.slice(0, m.index + 1)));
        const mid = starts[at % starts.length];
        const split = new PrescanStats();
        await scanNdjsonRange(a, 0, split, 1 << 20);
        const lines = await scanNdjsonRange(b, 1, split, 1 << 20, 0, mid);
        const second = new PrescanStats();
        const secondLines = await scanNdjsonRange(b, 1, second, 1 << 20, mid);
        split.append(second.part(secondLines), lines);
        await scanNdjsonRange(c, 2, split, 1 << 20);
        expect(fields(split)).toEqual(fields(whole));
      }),
      { seed: 9, numRuns: 200 },
    );
  });

  it('a Parquet log as two slices of its row groups, each scanned on its own and appended: the stats of one scan, also between other inputs', async () => {
    await fc.assert(
      fc.asyncProperty(logArb, logArb, logArb, fc.integer({ min: 1, max: 40 }), async (before, log, after, rowGroupRows) => {
        const [a, c] = [file(before), file(after)];
        const b = join(dir, `${run++}.parquet`);
        await convertToParquet([file(log)], b, { rowGroupRows });
        const whole = new PrescanStats();
        await scanNdjsonRange(a, 0, whole, 1 << 20);
        await scanParquet(b, 1, whole);
        await scanNdjsonRange(c, 2, whole, 1 << 20);
        const split = new PrescanStats();
        await scanNdjsonRange(a, 0, split, 1 << 20);
        for (const index of [0, 1]) {
          const half = new PrescanStats();
          await scanParquet(b, 1, half, { index, count: 2 });
          split.append(half.part(0), 0);
        }
        await scanNdjsonRange(c, 2, split, 1 << 20);
        expect(fields(split)).toEqual(fields(whole));
      }),
      { seed: 10, numRuns: 100 },
    );
  }, 120_000);

  it("gives with the built command's worker thread the stats of one thread", async () => {
    const built = new URL('../../dist/replay/prescan.js', import.meta.url);
    // Only once built (npm test builds first).
    if (!existsSync(built)) return;
    const { prescan } = (await import(built.href)) as typeof import('../../src/replay/prescan.js');
    const log = fc.sample(logArb, { seed: 4, numRuns: 40 }).join('');
    const p = file(log);
    const one = await prescan([p], { splitBytes: Number.POSITIVE_INFINITY });
    const two = await prescan([p], { splitBytes: 0 });
    expect(fields(two as unknown as PrescanStats)).toEqual(fields(one as unknown as PrescanStats));
    expect(two.events).toBeGreaterThan(0);
    // A Parquet log: its two halves of row groups in two worker threads.
    const pq = join(dir, 'built.parquet');
    await convertToParquet([p], pq, { rowGroupRows: 97 });
    const pqOne = await prescan([pq], { splitBytes: Number.POSITIVE_INFINITY });
    const pqTwo = await prescan([pq], { splitBytes: 0 });
    expect(fields(pqTwo as unknown as PrescanStats)).toEqual(fields(pqOne as unknown as PrescanStats));
    expect(fields(pqOne as unknown as PrescanStats)).toEqual(fields(one as unknown as PrescanStats));
  });
});
