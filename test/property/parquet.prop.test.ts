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
import { parquetLine as line } from '../helpers/parquetLines.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-parquet-prop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
            // An other row is the record without its line (recordAt adds it); recordsToBatch keeps it in.
            const refOthers = ref.others.map(({ line: _, ...o }) => o);
            expect(b.others, 'others').toEqual(refOthers);
            for (const col of ['kind', 'line', 'time', 'symbol', 'symbols', 'side', 'v', 'textCells', 'texts', 'otherIndex'] as const)
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
