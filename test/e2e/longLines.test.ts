/**
 * A 50 MB line in a log is a `line_too_long` reject that costs no memory: the built `xrate
 * replay` drops it while reading (peak RSS stays far below what holding it would take), stores a
 * reject with a bounded raw text at the right line, and processes every other line exactly as
 * in the log without it. `--max-line-bytes` sets the limit.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLog } from '../../scripts/gen-log.js';
import { bin, digestTables, ensureBuilt, query } from './helpers.js';

const MiB = 1 << 20;
const LONG_AT = 6_001; // line number of the long line
const FILL = 50 * MiB;

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-long-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CLEAN = join(dir, 'clean.ndjson');
const DIRTY = join(dir, 'dirty.ndjson');
const HEAD = '{"type":"trade","time":"2024-03-01T04:00:00Z","symbol_id":"';
const TAIL = '","price":1,"size":1}';
let lines: string[];

beforeAll(() => {
  ensureBuilt();
  // 10 minutes around the 04:00 eligibility refresh, so the log has rates.
  lines = [...generateLog({ seed: 5, events: 12_000, start: '2024-03-01T03:56:00Z', rate: 20 })];
  writeFileSync(CLEAN, `${lines.join('\n')}\n`);
  // The dirty log: the same lines with a ~50 MB line inserted, written in pieces.
  const fd = openSync(DIRTY, 'w');
  try {
    writeSync(fd, `${lines.slice(0, LONG_AT - 1).join('\n')}\n${HEAD}`);
    const piece = 'X'.repeat(MiB);
    for (let n = 0; n < FILL; n += MiB) writeSync(fd, piece);
    writeSync(fd, `${TAIL}\n${lines.slice(LONG_AT - 1).join('\n')}\n`);
  } finally {
    closeSync(fd);
  }
}, 180_000);

interface Summary {
  eventsRead: number;
  rejectsByReason: Record<string, number>;
  peakRssMb: number;
}

function replayJson(args: string[]): Summary {
  const r = bin(['replay', ...args, '--json'], { timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Summary;
}

describe('a log with a 50 MB line', () => {
  it('is replayed in bounded memory, the line a line_too_long reject, every other line processed', () => {
    const cleanDb = join(dir, 'clean.sqlite');
    const clean = replayJson([CLEAN, '--db', cleanDb]);
    const bytes = Buffer.byteLength(HEAD) + FILL + Buffer.byteLength(TAIL);
    const want = {
      line: LONG_AT,
      reason: 'line_too_long',
      message: `line of ${bytes} bytes exceeds the limit of 1048576 bytes (--max-line-bytes)`,
      raw: `${(HEAD + 'X'.repeat(256)).slice(0, 256)}… [truncated: ${bytes} bytes in all]`,
    };
    for (const [name, log] of [
      ['plain', DIRTY],
      ['gzip', join(dir, 'dirty.ndjson.gz')],
    ] as const) {
      if (name === 'gzip')
        writeFileSync(
          log,
          gzipSync(
            `${lines.slice(0, LONG_AT - 1).join('\n')}\n${HEAD}${'X'.repeat(FILL)}${TAIL}\n${lines.slice(LONG_AT - 1).join('\n')}\n`,
          ),
        );
      const db = join(dir, `dirty-${name}.sqlite`);
      const s = replayJson([log, '--db', db]);
      console.log(
        `long lines e2e (${name}): peak RSS ${s.peakRssMb} MB with a ${(bytes / MiB).toFixed(0)} MiB line (clean log: ${clean.peakRssMb} MB)`,
      );
      // Holding the line would take several times its size.
      expect(s.peakRssMb).toBeLessThan(200);
      expect(s.eventsRead).toBe(clean.eventsRead + 1);
      expect(s.rejectsByReason).toEqual({ ...clean.rejectsByReason, line_too_long: 1 });
      const rejects = query<{ line: number; reason: string; message: string; raw: string }>(
        db,
        "SELECT line, reason, message, raw FROM rejects WHERE reason = 'line_too_long'",
      );
      expect(rejects).toEqual([want]);
      // Every other line: the same outputs as the log without the long line (line numbers after it shifted by one).
      const a = digestTables(db);
      const b = digestTables(cleanDb);
      expect(a.rates).toEqual(b.rates);
      expect(a.ohlc).toEqual(b.ohlc);
      const others = query<{ line: number; reason: string; raw: string }>(
        db,
        "SELECT line, reason, raw FROM rejects WHERE reason != 'line_too_long' ORDER BY line",
      );
      const cleanRejects = query<{ line: number; reason: string; raw: string }>(
        cleanDb,
        'SELECT line, reason, raw FROM rejects ORDER BY line',
      );
      expect(others).toEqual(cleanRejects.map((r) => ({ ...r, line: r.line >= LONG_AT ? r.line + 1 : r.line })));
    }
  }, 180_000);

  it('--max-line-bytes sets the limit; a bad value is a usage error', () => {
    const sizes = lines.map((l) => Buffer.byteLength(l)).sort((a, b) => a - b);
    const limit = sizes[Math.floor(sizes.length / 2)]; // the median line: about half the lines are longer
    const over = sizes.filter((n) => n > limit).length;
    expect(over).toBeGreaterThan(1000);
    const s = replayJson([CLEAN, '--out', join(dir, 'rates.ndjson'), '--max-line-bytes', String(limit)]);
    expect(s.rejectsByReason.line_too_long).toBe(over);
    for (const bad of ['0', '-5', '1.5', 'lots', String(2 ** 28 + 1)]) {
      const r = bin(['replay', CLEAN, '--out', join(dir, 'x.ndjson'), `--max-line-bytes=${bad}`]);
      expect(r.status, bad).toBe(2);
      expect(r.stderr).toMatch(/--max-line-bytes must be an integer in 1\.\.268435456/);
    }
  }, 120_000);
});
