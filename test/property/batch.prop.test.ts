import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batchTransferList, decText, eventAt, ROW_OTHER } from '../../src/core/batch.js';
import { recordAt, recordsToBatch } from '../../src/io/batch.js';
import { fastParseLine, TimeCache } from '../../src/io/fastNdjson.js';
import { readJsonLine } from '../../src/io/ndjson.js';
import type { SourceRecord } from '../../src/io/source.js';
import { num, sym } from '../helpers/parquetLines.js';

const time = fc.integer({ min: 0, max: 999 }).map((ms) => `"2024-03-01T00:00:01.${String(ms).padStart(3, '0')}Z"`);
const line = fc.oneof(
  fc
    .tuple(time, sym, num, num, num, num)
    .map(
      ([t, s, a, b, c, d]) =>
        `{"type":"quote","time":${t},"symbol_id":"${s}","bid_price":${a},"bid_size":${b},"ask_price":${c},"ask_size":${d}}`,
    ),
  fc
    .tuple(time, sym, num, num, fc.constantFrom('', ',"taker_side":"BUY"', ',"taker_side":"sell"', ',"taker_side":null'))
    .map(([t, s, p, z, side]) => `{"type":"trade","time":${t},"symbol_id":"${s}","price":${p},"size":${z}${side}}`),
  fc.constantFrom('{"type":"exchange","time":"2024-03-01T00:00:00Z","exchange_id":"K","legitimate":true}', 'not json', '[1]'),
);

/** The records of NDJSON lines as the record-at-a-time reader gives them. */
function records(lines: string[]): SourceRecord[] {
  const times = new TimeCache();
  return lines.map((l, i) => {
    const e = fastParseLine(l, times);
    return e !== undefined ? { line: i + 1, raw: l, event: e } : readJsonLine(l, i + 1)!;
  });
}

describe('columnar batches (src/core/batch.ts)', () => {
  it('a batch turned back row by row gives the records it was made of, exact texts included', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 60 }), (lines) => {
        const recs = records(lines);
        const b = recordsToBatch(recs);
        expect(b.length).toBe(recs.length);
        for (let i = 0; i < recs.length; i++) expect(recordAt(b, i)).toEqual(recs[i]);
        // Only texts that String(value) would not give are listed, in ascending cells.
        for (let k = 0; k < b.textCells.length; k++) {
          expect(b.texts[k]).not.toBe(String(b.v[b.textCells[k]]));
          if (k > 0) expect(b.textCells[k]).toBeGreaterThan(b.textCells[k - 1]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a batch crosses a thread boundary whole (structured clone with its buffers transferred)', () => {
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 30 }), (lines) => {
        const b = recordsToBatch(records(lines));
        const copy = structuredClone(b, { transfer: batchTransferList(b) });
        expect(b.kind.length).toBe(0); // transferred, not copied
        for (let i = 0; i < copy.length; i++) {
          if (copy.kind[i] === ROW_OTHER) continue;
          const e = eventAt(copy, i)!;
          expect(e.time).toBe(copy.time[i]);
          expect(decText(copy, 4 * i)).toBe(e.type === 'quote' ? e.bidPrice.text : e.price.text);
        }
      }),
      { numRuns: 50 },
    );
  });
});
