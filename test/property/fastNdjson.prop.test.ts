import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseEvent } from '../../src/core/events.js';
import { parseTime } from '../../src/core/time.js';
import { fastParseLine, TimeCache } from '../../src/io/fastNdjson.js';
import { readJsonLine, readNdjson } from '../../src/io/ndjson.js';
import type { SourceRecord } from '../../src/io/source.js';
import { generateLog } from '../../scripts/gen-log.js';
import { quoteLine, time, tradeLine } from './ndjsonLines.js';

/** What the general path gives for a line: JSON.parse + parseEvent, or a failure marker. */
function general(line: string): unknown {
  try {
    const v: unknown = JSON.parse(line);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not an object';
    return parseEvent(v as Record<string, unknown>);
  } catch {
    return 'bad json';
  }
}

describe('NDJSON fast path', () => {
  it('gives exactly the event JSON.parse + parseEvent gives, or declines', () => {
    let taken = 0;
    fc.assert(
      fc.property(fc.array(fc.oneof(quoteLine, tradeLine), { minLength: 1, maxLength: 20 }), (lines) => {
        const times = new TimeCache(); // shared across lines, as in the reader
        for (const line of lines) {
          const fast = fastParseLine(line, times);
          if (fast === undefined) continue;
          taken++;
          expect(fast, line).toEqual(general(line));
        }
      }),
      { seed: 42, numRuns: 2000 },
    );
    expect(taken).toBeGreaterThan(20); // most random lines are invalid; the generated-log test covers the rate
  });

  it('takes the fast path for the lines of a generated log, with identical events', () => {
    const times = new TimeCache();
    let fast = 0;
    let total = 0;
    for (const line of generateLog({ seed: 3, events: 20_000, badRate: 0.01, lateRate: 0.005 })) {
      total++;
      const ev = fastParseLine(line, times);
      if (ev === undefined) continue;
      fast++;
      expect(ev).toEqual(general(line));
    }
    expect(fast / total).toBeGreaterThan(0.9);
  });

  it('the time cache agrees with parseTime on every input', () => {
    fc.assert(
      fc.property(
        fc.array(
          time.map((t) => (t.startsWith('"') ? t.slice(1, -1) : t)),
          { minLength: 1, maxLength: 30 },
        ),
        (ts) => {
          const c = new TimeCache();
          for (const t of ts) expect(c.parse(t), t).toBe(parseTime(t));
          const line = ts.map((t) => `"${t}"`).join(',');
          const c2 = new TimeCache();
          let at = 0;
          for (const t of ts) {
            expect(c2.parseAt(line, at + 1, at + 1 + t.length), t).toBe(parseTime(t));
            at += t.length + 3;
          }
        },
      ),
      { seed: 42, numRuns: 1000 },
    );
  });
});

/** Every record of readNdjson over `text` given in the chunks cut at `cuts`. */
async function readAll(text: string, cuts: number[]): Promise<SourceRecord[]> {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  async function* chunks(): AsyncGenerator<string> {
    let from = 0;
    for (const c of [...at, text.length]) {
      if (c > from) yield text.slice(from, c);
      from = Math.max(from, c);
    }
  }
  const out: SourceRecord[] = [];
  const ro = { batchSize: 7, startLine: 1, gzip: false, totalBytes: 0, maxLineBytes: 1 << 20 };
  for await (const b of readNdjson(chunks(), ro, () => false)) out.push(...b);
  return out;
}

describe('NDJSON reader, lines read in place', () => {
  // Lines cut short (a string never closed, a line ending inside a value), with a backslash, or
  // starting with what would end the line before: none may be read together with its neighbours.
  const fragment = fc.constantFrom(
    '{"type":"quote","time":"2024-03-01T00:00:01',
    '","symbol_id":"K_SPOT_BTC_USD"}',
    '{"a":"x\\"}',
    '{"type":"trade","time":"2024-03-01T00:00:01Z","symbol_id":"K\\u005fSPOT_BTC_USD","price":1,"size":1}',
    '"',
    '{',
    '}',
    'true',
    '',
  );
  const logLine = fc.constantFrom(...generateLog({ seed: 5, events: 300, badRate: 0.02 }));
  const lineArb = fc.oneof(quoteLine, tradeLine, fragment, logLine, logLine);

  it('gives the records of reading each line alone, wherever the chunks are cut (LF and CRLF)', async () => {
    let events = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineArb, { minLength: 1, maxLength: 25 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (lines, crlf, cuts) => {
          const text = lines.join(crlf ? '\r\n' : '\n') + (crlf ? '\r\n' : '\n');
          const times = new TimeCache();
          const want: SourceRecord[] = [];
          lines.forEach((raw, i) => {
            if (raw.length === 0) return;
            const event = fastParseLine(raw, times);
            const r = event !== undefined ? { line: i + 1, raw, event } : readJsonLine(raw, i + 1);
            if (r !== undefined) want.push(r);
          });
          const got = await readAll(text, cuts);
          expect(got).toEqual(want);
          events += got.filter((r) => r.event !== undefined).length;
        },
      ),
      { seed: 20261123, numRuns: 500 },
    );
    expect(events).toBeGreaterThan(50);
  });
});
