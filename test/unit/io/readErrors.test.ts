/** A read error (here, gzip data cut short) names the input and the last line read whole, in NDJSON and CSV alike. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openSource } from '../../../src/io/source.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-read-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const N = 20_000;
const T = (i: number) => `2024-03-01T00:00:${String(i % 60).padStart(2, '0')}Z`;
const texts = {
  ndjson: Array.from(
    { length: N },
    (_, i) => `{"type":"trade","time":"${T(i)}","symbol_id":"X_SPOT_A_B","price":"${i}","size":"1"}\n`,
  ).join(''),
  csv: `type,time,symbol_id,price,size\n${Array.from({ length: N }, (_, i) => `trade,${T(i)},X_SPOT_A_B,${i},1\n`).join('')}`,
};

describe.each(['ndjson', 'csv'] as const)('a %s input cut short', (format) => {
  it('fails naming the input and the last line read whole, after handing over the lines before it', async () => {
    const gz = gzipSync(texts[format]);
    const path = join(dir, `log.${format}.gz`);
    writeFileSync(path, gz.subarray(0, Math.floor(gz.length / 2)));
    const src = openSource(path, { batchSize: 512 });
    let last = 0;
    const err = await (async () => {
      try {
        for await (const batch of src.batches()) for (const r of batch) last = r.line;
      } catch (e) {
        return e as Error;
      } finally {
        src.close();
      }
    })();
    expect(err?.message).toMatch(
      new RegExp(`^cannot read ".*log\\.${format}\\.gz" \\(gzip data broken .*; the last line read whole was line (\\d+)$`),
    );
    const named = Number(/line (\d+)$/.exec(err!.message)![1]);
    expect(last).toBeGreaterThan(100);
    expect(named).toBeGreaterThanOrEqual(last);
    expect(named).toBeLessThan(N + 1);
  });
});
