/**
 * `xrate convert` writes the bytes the first converter wrote (test/helpers/parquetReference.ts:
 * plain arrays handed to hyparquet-writer as they are), whatever the records, the row-group size,
 * the inputs (one or several, merged or not); and between row groups it keeps no string cut out of
 * the text it read (a column's bounds are kept as the footer's bytes).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { convertToParquet } from '../../src/io/parquetConvert.js';
import { EVENT_COLUMNS } from '../../src/io/parquetSchema.js';
import { ParquetFile } from '../../src/io/parquetWrite.js';
import { parquetLine } from '../helpers/parquetLines.js';
import { writeReferenceParquet } from '../helpers/parquetReference.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-parquet-bytes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Symbol ids past the 16 bytes a bound keeps, one cut inside a two-byte character. */
const longSymbolLine = fc
  .tuple(fc.constantFrom('KRAKEN_SPOT_BTC_USD', 'BINANCE_SPOT_ÉÉÉ_€', 'X_SPOT_ABCDEFÉ_USD'), fc.integer({ min: 1, max: 999 }))
  .map(([s, p]) => `{"type":"trade","time":"2024-03-01T00:00:03.000Z","symbol_id":"${s}","price":${p},"size":1}`);
const line = fc.oneof({ arbitrary: parquetLine, weight: 4 }, { arbitrary: longSymbolLine, weight: 1 });

describe('the bytes of a converted event log (src/io/parquetWrite.ts)', () => {
  it("are the first converter's: any records, row-group size, inputs, merged or not", async () => {
    let k = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(line, { minLength: 1, maxLength: 80 }), { minLength: 1, maxLength: 2 }),
        fc.integer({ min: 1, max: 90 }),
        fc.boolean(),
        async (logs, rowGroupRows, merge) => {
          const paths = logs.map((lines, i) => {
            const log = join(dir, `b${k}-${i}.ndjson`);
            writeFileSync(log, `${lines.join('\n')}\n`);
            return log;
          });
          const got = join(dir, `b${k}.parquet`);
          const want = join(dir, `b${k++}-ref.parquet`);
          await convertToParquet(paths, got, { rowGroupRows, merge });
          await writeReferenceParquet(paths, want, rowGroupRows, merge);
          expect(Buffer.compare(readFileSync(got), readFileSync(want))).toBe(0);
        },
      ),
      { seed: 20261128, numRuns: 60 },
    );
  }, 120_000);

  it('keeps the string bounds of a row group as bytes, cut as the footer holds them', () => {
    const columns = [EVENT_COLUMNS.find((c) => c.name === 'symbol_id')!];
    const path = join(dir, 'bounds.parquet');
    const f = new ParquetFile(path, columns, []);
    // Cut out of a longer text, as the reader cuts symbols out of a chunk of a file.
    const text = `${'x'.repeat(1000)}A_SPOT_BTC_USD|KRAKEN_SPOT_LONGNAME_USD`;
    f.writeGroup([[text.slice(1000, 1014), text.slice(1015), null]]);
    const st = f.rowGroups[0].columns[0].meta_data!.statistics!;
    expect(st.min_value).toEqual(new TextEncoder().encode('A_SPOT_BTC_USD'));
    // The max, 24 bytes, is kept as the footer's 16-byte upper bound.
    expect(st.max_value).toBeInstanceOf(Uint8Array);
    expect((st.max_value as Uint8Array).length).toBe(16);
    expect(st.is_max_value_exact).toBe(false);
    f.finish();
  });
});
