/**
 * Reading an NDJSON log from a line on (`startLine`, where a partition or a resume starts): the
 * lines before it are counted off in the bytes without being decoded (textStream.ts), and the
 * records are exactly those of the whole file from that line on, plain or gzipped, with the
 * start anywhere around the file stream's chunk boundary (1 MiB) and lines of every form: CRLF,
 * blank, invalid UTF-8 (also just before a newline), a BOM, lines over the length limit.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openSource, type SourceRecord } from '../../src/io/source.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-startline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function readAll(path: string, startLine?: number): Promise<SourceRecord[]> {
  const src = openSource(path, { startLine, maxLineBytes: 300, batchSize: 7 });
  const out: SourceRecord[] = [];
  for await (const b of src.batches()) out.push(...b);
  src.close();
  return out;
}

const lineArb = fc.oneof(
  fc.constantFrom(
    '{"type":"quote","time":"2024-03-01T00:00:01.5Z","symbol_id":"K_SPOT_BTC_USD","bid_price":1,"bid_size":1,"ask_price":2,"ask_size":1}',
    '{"type":"trade","time":"2024-03-01T00:00:02Z","symbol_id":"K_SPOT_BTC_USD","price":"1","size":"1"}',
    '',
    '  ',
    'not json',
    '\uFEFF{"type":"trade"}',
    '{"type":"trade","note":"é ü \u2028"}',
  ),
  fc.nat({ max: 700 }).map((n) => `{"type":"trade","pad":"${'x'.repeat(n)}"}`),
);

/** Lines as bytes, each with its ending, sometimes with an invalid byte just before the newline. */
const tailArb = fc.array(fc.tuple(lineArb, fc.constantFrom('\n', '\r\n', '\n'), fc.constantFrom(undefined, [0xe2, 0x82], [0xff], [0xc3])), {
  minLength: 1,
  maxLength: 30,
});

describe('NDJSON from a start line', () => {
  it('gives the records of the whole file from that line on, plain or gzipped', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(tailArb, fc.nat({ max: 2_000 }), fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), async (tail, pad, starts) => {
        // Filler lines up to about the chunk boundary, then the generated lines across it.
        const filler = `{"type":"trade","time":"2024-03-01T00:00:00Z","fill":"${'f'.repeat(100)}"}\n`;
        const head = Buffer.from(filler.repeat(Math.floor(((1 << 20) - 1_500 + pad) / filler.length)));
        const body = tail.map(([text, end, bad]) => Buffer.concat([Buffer.from(text), Buffer.from(bad ?? []), Buffer.from(end)]));
        const bytes = Buffer.concat([head, ...body]);
        const plain = join(dir, `${run}.ndjson`);
        const gz = join(dir, `${run++}.ndjson.gz`);
        writeFileSync(plain, bytes);
        writeFileSync(gz, gzipSync(bytes));
        const all = await readAll(plain);
        const lines = bytes.toString('latin1').split('\n').length;
        const headLines = head.toString('latin1').split('\n').length - 1;
        for (const s of starts) {
          // Mostly around the boundary; sometimes the first line, or past the end.
          const startLine = s % 5 === 0 ? 1 + (s % lines) : s % 7 === 0 ? lines + 2 : headLines - 5 + (s % (tail.length + 8));
          const want = all.filter((r) => r.line >= startLine);
          expect(await readAll(plain, startLine)).toEqual(want);
          expect(await readAll(gz, startLine)).toEqual(want);
        }
      }),
      { seed: 3, numRuns: 25 },
    );
  });
});
