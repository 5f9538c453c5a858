/**
 * The maximum line length (lineLimit.ts) against a naive reading: split the whole text on LF,
 * drop a final CR, and reject a line of more than the limit's bytes of UTF-8. The readers drop
 * a long line while reading it, in chunks cut anywhere (but inside a surrogate pair, which the
 * text streams never do); they must give exactly the naive records, whatever the chunks.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CsvSplitter, type CsvRow } from '../../src/io/csv.js';
import { readNdjson } from '../../src/io/ndjson.js';
import { openSource, type SourceRecord } from '../../src/io/source.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-linelimit-prop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEEP = 256;
const msg = (bytes: number, max: number): string => `line of ${bytes} bytes exceeds the limit of ${max} bytes (--max-line-bytes)`;

/** The raw text of a line over the limit: whole up to 256 characters, else cut and marked. */
function clip(s: string): string {
  if (s.length <= KEEP) return s;
  const end = s.charCodeAt(KEEP - 1) >= 0xd800 && s.charCodeAt(KEEP - 1) <= 0xdbff ? KEEP - 1 : KEEP;
  return `${s.slice(0, end)}… [truncated: ${Buffer.byteLength(s)} bytes in all]`;
}

/** The lines of `text` as numbered, their line ending (LF, CR LF, a final CR) dropped. */
function naiveLines(text: string): { line: number; content: string }[] {
  const parts = text.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts.map((p, i) => ({ line: i + 1, content: p.endsWith('\r') ? p.slice(0, -1) : p }));
}

/**
 * `text` cut at `cuts` (taken modulo its length), and after every CR when `afterCr` (a CR that
 * ends a chunk may be a line ending or not), never inside a surrogate pair; no empty chunk.
 */
function chunksOf(text: string, cuts: number[], afterCr = false): string[] {
  const all = [...cuts];
  if (afterCr) for (let i = text.indexOf('\r'); i !== -1; i = text.indexOf('\r', i + 1)) all.push(i + 1);
  const at = [
    ...new Set(
      all.map((c) => {
        const p = text.length === 0 ? 0 : c % (text.length + 1);
        const h = text.charCodeAt(p - 1);
        return h >= 0xd800 && h <= 0xdbff ? p - 1 : p;
      }),
    ),
  ].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of [...at, text.length]) {
    if (p > from) out.push(text.slice(from, p));
    from = Math.max(from, p);
  }
  return out;
}

async function* gen(chunks: string[]): AsyncGenerator<string> {
  for (const c of chunks) yield c;
}

const char = fc.constantFrom('a', 'b', ' ', '{', '}', '"', ':', ',', '1', 'é', '€', '😀', '\r');
const short = fc.array(char, { maxLength: 30 }).map((a) => a.join(''));
/** Lines of up to a few thousand characters: past the 256 characters kept, over many chunks. */
const long = fc
  .tuple(
    fc.array(char, { minLength: 1, maxLength: 6 }).map((a) => a.join('')),
    fc.integer({ min: 20, max: 400 }),
  )
  .map(([u, k]) => u.repeat(k));
const lines = fc.array(fc.oneof({ arbitrary: short, weight: 3 }, { arbitrary: long, weight: 1 }), { maxLength: 25 });
const limit = fc.oneof(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 60, max: 3000 }));
/** Or a limit at a line's size, one byte less or one more (`pick` chooses the line). */
const pick = fc.option(fc.nat(), { freq: 2 });
function limitOf(text: string, max: number, p: number | null): number {
  const ls = naiveLines(text);
  if (p === null || ls.length === 0) return max;
  return Math.max(1, Buffer.byteLength(ls[p % ls.length].content) + ((p >> 4) % 3) - 1);
}
const cuts = fc.array(fc.nat(), { maxLength: 12 });

/** What the NDJSON reader gives for a line, reduced to what the limit decides. */
interface Simple {
  line: number;
  raw: string;
  tooLong?: string;
}
const simple = (r: SourceRecord): Simple =>
  r.reason === 'line_too_long' ? { line: r.line, raw: r.raw, tooLong: r.error } : { line: r.line, raw: r.raw };

function naiveNdjson(text: string, max: number): Simple[] {
  const out: Simple[] = [];
  for (const { line, content } of naiveLines(text)) {
    const bytes = Buffer.byteLength(content);
    if (bytes > max) out.push({ line, raw: clip(content), tooLong: msg(bytes, max) });
    else if (content.trim() !== '') out.push({ line, raw: content });
  }
  return out;
}

describe('maximum line length: the readers give the naive split and length filter', () => {
  it('NDJSON, in chunks cut anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(
        lines,
        fc.boolean(),
        limit,
        pick,
        cuts,
        fc.boolean(),
        fc.integer({ min: 1, max: 4 }),
        async (ls, eol, m, p, cs, cr, batchSize) => {
          const text = ls.join('\n') + (eol ? '\n' : '');
          const max = limitOf(text, m, p);
          const ro = { batchSize, startLine: 1, gzip: false, totalBytes: 0, maxLineBytes: max };
          const got: SourceRecord[] = [];
          for await (const b of readNdjson(gen(chunksOf(text, cs, cr)), ro, () => false)) {
            expect(b.length).toBeLessThanOrEqual(batchSize);
            got.push(...b);
          }
          expect(got.map(simple)).toEqual(naiveNdjson(text, max));
        },
      ),
      { seed: 20240917, numRuns: 1000 },
    );
  });

  it('CSV without quotes, in chunks cut anywhere', () => {
    const csvChar = fc.constantFrom('a', ' ', ',', '1', 'é', '€', '😀', '\r');
    const csvLines = fc.array(
      fc.oneof(
        fc.array(csvChar, { maxLength: 30 }).map((a) => a.join('')),
        fc
          .tuple(fc.array(csvChar, { minLength: 1, maxLength: 5 }), fc.integer({ min: 20, max: 300 }))
          .map(([u, k]) => u.join('').repeat(k)),
      ),
      { maxLength: 20 },
    );
    fc.assert(
      fc.property(csvLines, fc.boolean(), limit, pick, cuts, fc.boolean(), (ls, eol, m, p, cs, cr) => {
        const text = ls.join('\n') + (eol ? '\n' : '');
        const max = limitOf(text, m, p);
        const want: CsvRow[] = [];
        for (const { line, content } of naiveLines(text)) {
          const bytes = Buffer.byteLength(content);
          if (bytes > max) want.push({ line, error: msg(bytes, max), text: clip(content), reason: 'line_too_long' });
          else {
            const fields = content.split(',');
            if (fields.some((f) => f.trim() !== '')) want.push({ line, fields });
          }
        }
        const sp = new CsvSplitter(false, max);
        const got = [...chunksOf(text, cs, cr).flatMap((c) => sp.push(c)), ...sp.end()];
        expect(got).toEqual(want);
      }),
      { seed: 7, numRuns: 1000 },
    );
  });

  it('CSV with quoted fields: the same rows wherever the chunks are cut', () => {
    const qChar = fc.constantFrom('a', ',', '"', '\n', '\r', 'é', '😀', ' ');
    const qText = fc.oneof(
      fc.array(qChar, { maxLength: 200 }).map((a) => a.join('')),
      fc.tuple(fc.array(qChar, { minLength: 1, maxLength: 8 }), fc.integer({ min: 5, max: 200 })).map(([u, k]) => u.join('').repeat(k)),
    );
    fc.assert(
      fc.property(qText, limit, cuts, fc.boolean(), (text, max, cs, cr) => {
        const whole = new CsvSplitter(true, max);
        const want = [...whole.push(text), ...whole.end()];
        const sp = new CsvSplitter(true, max);
        const got = [...chunksOf(text, cs, cr).flatMap((c) => sp.push(c)), ...sp.end()];
        expect(got).toEqual(want);
        // Every row keeps to the limit, or is a line_too_long reject.
        for (const r of got) {
          if (r.fields) expect(Buffer.byteLength(r.fields.join(','))).toBeLessThanOrEqual(max);
        }
      }),
      { seed: 99, numRuns: 1000 },
    );
  });

  it('NDJSON files, plain and gzipped, through openSource', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(lines, fc.boolean(), limit, fc.boolean(), async (ls, eol, max, gz) => {
        const text = ls.join('\n') + (eol ? '\n' : '');
        const p = join(dir, `${n++}.ndjson${gz ? '.gz' : ''}`);
        writeFileSync(p, gz ? gzipSync(text) : text);
        const src = openSource(p, { maxLineBytes: max, batchSize: 7 });
        const got: SourceRecord[] = [];
        for await (const b of src.batches()) got.push(...b);
        src.close();
        expect(got.map(simple)).toEqual(naiveNdjson(text, max));
      }),
      { seed: 5, numRuns: 60 },
    );
  });
});
