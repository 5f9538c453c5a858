import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeLog, type GenOptions } from '../../../scripts/gen-log.js';
import { parseEvent } from '../../../src/core/events.js';
import { DEFAULT_MAX_LINE_BYTES } from '../../../src/io/lineLimit.js';
import { openSource, type SourceRecord } from '../../../src/io/source.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-eq-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function readAll(path: string, batchSize?: number): Promise<SourceRecord[]> {
  const src = openSource(path, { batchSize });
  const out: SourceRecord[] = [];
  for await (const b of src.batches()) out.push(...b);
  src.close();
  return out;
}

/** String normalisation: every value as text, absent = null / undefined / ''. */
function norm(r: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) {
    if (v === null || v === undefined || v === '') continue;
    out[k] = String(v);
  }
  return out;
}

/** The event (or reject) a record stands for: the NDJSON fast path hands some over parsed. */
function eventOf(r: SourceRecord): unknown {
  return r.event ?? parseEvent(r.record!);
}

describe('the same log as NDJSON, CSV and SQLite', () => {
  it('yields the same records in the same order', async () => {
    // ~30k rows: the CSV is > 2 MiB, so rows cross read chunks.
    const opts: GenOptions = { seed: 42, events: 30_000, badRate: 0.01, lateRate: 0.005, stringRate: 0.3 };
    const nd = join(dir, 'log.ndjson');
    const csv = join(dir, 'log.csv.gz');
    const sq = join(dir, 'log.sqlite');
    await writeLog(nd, opts);
    await writeLog(csv, opts);
    await writeLog(sq, opts);
    const [a, b, c] = await Promise.all([readAll(nd), readAll(csv, 1000), readAll(sq, 777)]);
    expect(a.length).toBe(30_000);
    expect(b.length).toBe(30_000);
    expect(c.length).toBe(30_000);
    let broken = 0;
    let fast = 0;
    for (let i = 0; i < a.length; i++) {
      expect(a[i].line).toBe(i + 1);
      expect(b[i].line).toBe(i + 2); // CSV: the header is line 1
      expect(c[i].line).toBe(i + 1); // SQLite: rowid
      if (a[i].error !== undefined) {
        // Invalid JSON: an unreadable row in CSV, a row with the text as its type in SQLite.
        broken++;
        expect(b[i].error).toBeDefined();
        expect(c[i].record?.type).toBe(a[i].raw);
        continue;
      }
      // Same event (or the same reject) from every format.
      const want = eventOf(a[i]);
      expect(eventOf(b[i]), `row ${i + 1}`).toEqual(want);
      expect(eventOf(c[i]), `row ${i + 1}`).toEqual(want);
      // And the same fields, where the reader kept them as a record.
      if (a[i].record) {
        expect(norm(b[i].record!), `row ${i + 1}`).toEqual(norm(a[i].record!));
        expect(norm(c[i].record!), `row ${i + 1}`).toEqual(norm(a[i].record!));
      } else fast++;
    }
    expect(broken).toBeGreaterThan(5);
    expect(fast).toBeGreaterThan(20_000); // NDJSON quotes and trades take the fast path
  });
});

describe('CSV reader on large input', () => {
  it('recovers from a quote that is never closed, far from the end of the file', async () => {
    const rows = ['type,price'];
    rows.push('"quote,1'); // line 2: unclosed quote
    const n = Math.ceil((DEFAULT_MAX_LINE_BYTES * 1.5) / 12);
    for (let i = 0; i < n; i++) rows.push(`trade,${i}.5`);
    const p = join(dir, 'long.csv');
    writeFileSync(p, `${rows.join('\n')}\n`);
    const rs = await readAll(p);
    expect(rs[0].line).toBe(2);
    expect(rs[0].error).toMatch(/never closed|longer than/);
    expect(rs.length).toBe(n + 1);
    expect(rs[1]).toMatchObject({ line: 3, record: { type: 'trade', price: '0.5' } });
    expect(rs[rs.length - 1]).toMatchObject({ line: n + 2, record: { type: 'trade', price: `${n - 1}.5` } });
  });
});
