/**
 * A Parquet event log (`xrate convert`) read back as batches gives the records of the log it was
 * converted from: every batch equals recordsToBatch of those records (the reference of every
 * columnar reader, src/io/batch.ts), and each row turned back into a record equals the record the
 * record-at-a-time reader gives, raw text included -- with exact decimal texts, odd spacing,
 * unreadable lines and other event types mixed in, whatever the row-group cut.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { eventAt, ROW_OTHER } from '../../src/core/batch.js';
import { parseEvent } from '../../src/core/events.js';
import { isReject } from '../../src/core/types.js';
import { recordAt, recordsToBatch } from '../../src/io/batch.js';
import { convertToParquet } from '../../src/io/parquetConvert.js';
import { openParquetBatches } from '../../src/io/parquetRead.js';
import { openSource, type SourceRecord } from '../../src/io/source.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-parquet-prop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const num = fc.oneof(
  fc.double({ min: 1e-9, max: 1e9, noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
  fc.constantFrom('0', '1.50', '100.0', '1e-7', '2.5E+3', '0.30000000000000004', '123456789012345678'),
  fc.integer({ min: 1, max: 1_000_000 }).map((n) => `"${(n / 1000).toFixed(4)}"`),
  fc.constantFrom('"1.5"', '" 2"', '"0.1000"', '"1e-8"', '"12345678901234567890.5"', '-1', 'null'),
);
const sym = fc.constantFrom('K_SPOT_BTC_USD', 'B_SPOT_ETH_USDT', 'C_SPOT_ÉTH_€');
const time = fc.oneof(
  // xrate's own form (7 digits, the last one 0: whole µs), a 7th digit beyond the µs, milliseconds.
  fc.integer({ min: 0, max: 999_999 }).map((us) => `"2024-03-01T00:00:01.${String(us).padStart(6, '0')}0Z"`),
  fc.integer({ min: 0, max: 9_999_999 }).map((f) => `"2024-03-01T00:00:01.${String(f).padStart(7, '0')}Z"`),
  fc.integer({ min: 0, max: 999 }).map((ms) => `"2024-03-01T00:00:01.${String(ms).padStart(3, '0')}Z"`),
);
const sp = fc.constantFrom('', ' ');
/** Lines as xrate's logs write them: the canonical renderings, decimals all numbers or all strings. */
const canonical = fc
  .tuple(
    fc.boolean(),
    fc.boolean(),
    fc.integer({ min: 0, max: 999_999 }),
    sym,
    fc.array(fc.double({ min: 1e-6, max: 1e6, noNaN: true }), { minLength: 4, maxLength: 4 }),
    fc.constantFrom('', ',"taker_side":"SELL"'),
  )
  .map(([quote, quoted, us, s, v, side]) => {
    const d = v.map((x) => (quoted ? `"${x}"` : String(x)));
    const head = `{"type":"${quote ? 'quote' : 'trade'}","time":"2024-03-01T00:00:02.${String(us).padStart(6, '0')}0Z","symbol_id":"${s}"`;
    return quote
      ? `${head},"bid_price":${d[0]},"bid_size":${d[1]},"ask_price":${d[2]},"ask_size":${d[3]}}`
      : `${head},"price":${d[0]},"size":${d[1]}${side}}`;
  });
const line = fc.oneof(
  canonical,
  fc
    .tuple(time, sym, num, num, num, num, sp)
    .map(
      ([t, s, a, b, c, d, w]) =>
        `{"type":"quote","time":${t},"symbol_id":"${s}","bid_price":${a},"bid_size":${b},"ask_price":${c},"ask_size":${d}${w}}`,
    ),
  fc
    .tuple(time, sym, num, num, fc.constantFrom('', ',"taker_side":"BUY"', ',"taker_side":"sell"', ',"taker_side":null'))
    .map(([t, s, p, z, side]) => `{"type":"trade","time":${t},"symbol_id":"${s}","price":${p},"size":${z}${side}}`),
  fc.constantFrom(
    '{"type":"exchange","time":"2024-03-01T00:00:00Z","exchange_id":"K","legitimate":true}',
    '{ "type": "trade", "time": "2024-03-01T00:00:02Z", "symbol_id": "K_SPOT_BTC_USD", "price": "1.0", "size": 2 }',
    'not json',
    '[1]',
    '',
  ),
);

/** The records the converter keeps for these: a record that parses as a quote or trade as its event, plain objects. */
function normalized(recs: readonly SourceRecord[]): SourceRecord[] {
  return recs.map((r) => {
    if (r.error !== undefined)
      return r.reason === undefined || r.reason === 'bad_json' ? { line: r.line, raw: r.raw, error: r.error } : { ...r };
    if (r.record !== undefined) {
      const e = parseEvent(r.record);
      if (!isReject(e) && (e.type === 'quote' || e.type === 'trade')) return { line: r.line, raw: r.raw, event: e };
      return { line: r.line, raw: r.raw, record: r.record };
    }
    return { line: r.line, raw: r.raw, event: r.event };
  });
}

async function all(path: string): Promise<SourceRecord[]> {
  const src = openSource(path);
  const out: SourceRecord[] = [];
  try {
    for await (const b of src.batches()) out.push(...b);
  } finally {
    src.close();
  }
  return out;
}

describe('Parquet event logs (src/io/parquetRead.ts)', () => {
  it('batches equal recordsToBatch of the source records; rows turned back equal them, raw texts included', async () => {
    let k = 0;
    let canon = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 70 }), async (lines, rowGroupRows) => {
        const log = join(dir, `p${k}.ndjson`);
        const pq = join(dir, `p${k++}.parquet`);
        writeFileSync(log, `${lines.join('\n')}\n`);
        await convertToParquet([log], pq, { rowGroupRows });
        const want = normalized(await all(log));
        const src = openParquetBatches(pq);
        const got: SourceRecord[] = [];
        try {
          for await (const b of src.batches()) {
            const first = got.length;
            for (let i = 0; i < b.length; i++) {
              const r = b.kind[i] === ROW_OTHER ? recordAt(b, i) : { line: b.line[i], raw: src.rawOf!(b, i), event: eventAt(b, i) };
              got.push(r);
            }
            for (let i = 0; i < b.length; i++) if (b.rawStart[i] < 0 && b.kind[i] !== ROW_OTHER) canon++;
            const ref = recordsToBatch(want.slice(first, first + b.length));
            for (const col of [
              'kind',
              'line',
              'time',
              'symbol',
              'symbols',
              'side',
              'v',
              'textCells',
              'texts',
              'otherIndex',
              'others',
            ] as const)
              expect(b[col], col).toEqual(ref[col]);
          }
        } finally {
          src.close();
        }
        expect(got).toEqual(want);
      }),
      { seed: 20261125, numRuns: 40 },
    );
    // The canonical renderings were exercised (rows with no stored raw text).
    expect(canon).toBeGreaterThan(20);
  }, 120_000);
});
