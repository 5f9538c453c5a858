/**
 * The pre-scan's byte scan of NDJSON (src/replay/prescanNdjson.ts) against the string scan it
 * replaces: the file decoded as the readers decode it, split into lines (on `\n`, a trailing `\r`
 * dropped, blank lines skipped but counted) and each line read by `lineRecord`. The scanner must
 * pass the same records, line for line, whatever the chunks it is given: lines of every form the
 * in-place reading must tell apart (metadata, spaced and escaped keys, times in and out of the
 * plain form, non-ASCII and invalid bytes, white space that `\s` and `trim` take, lines near and
 * over the length limit).
 */
import { StringDecoder } from 'node:string_decoder';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimeCache } from '../../src/io/fastNdjson.js';
import { lineRecord, NdjsonScanner, type ScanSink } from '../../src/replay/prescanNdjson.js';

type Added = [number, number, number | undefined, string | undefined, string | undefined];

/** Every record a scan passes on, with the metadata event's type. */
function recorder(): ScanSink & { out: Added[] } {
  const out: Added[] = [];
  return { out, add: (input, line, time, metadata, symbolId) => void out.push([input, line, time, metadata?.type, symbolId]) };
}

/**
 * The string scan: the text decoded in the given chunks with a StringDecoder (as the readers'
 * text stream), then line by line. The sink keeps a symbol id at its first record only, so an id
 * is passed on once (as the scanner passes it).
 */
function stringScan(bytes: Buffer, cuts: number[], maxLineBytes: number): Added[] {
  const decoder = new StringDecoder('utf8');
  let text = '';
  let from = 0;
  for (const c of [...cuts, bytes.length]) {
    text += decoder.write(bytes.subarray(from, c));
    from = c;
  }
  text += decoder.end();
  const times = new TimeCache();
  const out: Added[] = [];
  const seen = new Set<string>();
  const parts = text.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  parts.forEach((part, i) => {
    const raw = part.endsWith('\r') ? part.slice(0, -1) : part;
    if (raw.trim().length === 0) return;
    const r = lineRecord(raw, times, maxLineBytes);
    out.push([0, i + 1, r.time, r.metadata?.type, r.symbolId]);
  });
  // Ids as the sink sees them: the first record of each with a time.
  return out.map(([input, line, time, type, id]) => {
    if (id === undefined || time === undefined || seen.has(id)) return [input, line, time, type, undefined];
    seen.add(id);
    return [input, line, time, type, id];
  });
}

/**
 * The byte scan, given the bytes in chunks cut at `cuts`, each in the same buffer (as a file is
 * read: a chunk is gone once the next is read), that buffer's end past the chunk written over.
 */
function byteScan(bytes: Buffer, cuts: number[], maxLineBytes: number, window?: number): Added[] {
  const sink = recorder();
  const scan = new NdjsonScanner(0, sink, maxLineBytes, window);
  const reused = Buffer.alloc(bytes.length + 1);
  let from = 0;
  for (const c of [...cuts, bytes.length]) {
    bytes.copy(reused, 0, from, c);
    reused.fill(0x0a, Math.max(0, c - from));
    scan.push(reused.subarray(0, Math.max(0, c - from)));
    from = Math.max(from, c);
  }
  scan.end();
  // Ids as the sink sees them (the scanner passes a known one again only after a slow line).
  const seen = new Set<string>();
  return sink.out.map(([input, line, time, type, id]) => {
    if (id === undefined || time === undefined || seen.has(id)) return [input, line, time, type, undefined];
    seen.add(id);
    return [input, line, time, type, id];
  });
}

const time = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 300_000_000 }).map((ms) => new Date(1_709_251_200_000 + ms).toISOString()) },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 30_000 }), fc.integer({ min: 0, max: 9_999_999 }), fc.integer({ min: 0, max: 8 }))
      .map(([s, f, digits]) => {
        const base = new Date(1_709_251_200_000 + s * 1000).toISOString().slice(0, 19);
        return digits === 0 ? `${base}Z` : `${base}.${String(f).padStart(7, '0').slice(0, digits).padEnd(digits, '0')}Z`;
      }),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '2024-03-01T00:00:00Z',
      '2024-03-01T00:00:59.9999999Z',
      '2024-03-01T00:00:60Z',
      '2024-03-01T00:00:61.5Z',
      '2024-03-01T00:01:00.Z',
      '2024-03-01t00:00:00.1z',
      '2024-03-01 00:00:00.5Z',
      '2024-03-01T00:00:00.12345678Z',
      '2024-02-30T00:00:00Z',
      '2024-03-01T24:00:00Z',
      '2024-03-01T00:00:00.5+01:00',
      '2024-03-01T00:00Z',
      '2024-03-01',
      ' 2024-03-01T00:00:00Z',
      '2024-03-01T00:00:0a.5Z',
      '2024-03-01T00:00:00.5é',
      '2024-03-01T00:00:00.5\\u005a',
      '1684-01-01T00:00:00Z',
      '2255-06-05T23:47:34.7409919Z',
      '2255-06-05T23:47:34.7409929Z',
      'not a time',
      '',
    ),
  },
);

const id = fc.constantFrom('K_SPOT_BTC_USD', 'B_SPOT_ETH_BTC', 'K_SPOT_Ü_USD', '', 'a\\"b', 'x\\u0041', 'type', 'time');

const space = fc.constantFrom('', '', '', ' ', '  ', '\t', '\u00a0', '\u2028', '\ufeff', '\r');

/** A JSON-ish key and value with chosen spacing (`s1` before the colon, `s2` after). */
const field = (key: string, value: string, s1: string, s2: string): string => `"${key}"${s1}:${s2}${value}`;

/** One line, as text: mostly the forms of a log, with the variants the in-place reading must tell apart. */
const lineText = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(fc.constantFrom('quote', 'trade', 'quotes'), time, id, fc.nat({ max: 3 }))
      .map(([type, t, sym, order]) =>
        order === 0
          ? `{"symbol_id":"${sym}","time":"${t}","type":"${type}","price":1}`
          : order === 1
            ? `{"type":"${type}","time":"${t}","price":1,"symbol_id":"${sym}"}`
            : `{"type":"${type}","time":"${t}","symbol_id":"${sym}","price":1}`,
      ),
  },
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom('quote', 'trade', 'exchange', 'symbol', 'time', 'exchange2'), time, id, space, space, space, space)
      .map(
        ([type, t, sym, a, b, c, d]) =>
          `{${field('type', `"${type}"`, a, b)},${field('time', `"${t}"`, c, d)},${field('symbol_id', `"${sym}"`, b, c)}}`,
      ),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom('exchange', 'symbol'), time, fc.boolean())
      .map(([type, t, whole]) =>
        whole && type === 'exchange'
          ? `{"type":"exchange","time":"${t}","exchange_id":"K","legitimate":true,"rank":1}`
          : whole
            ? `{"type":"symbol","time":"${t}","exchange_id":"K","symbol_id":"K_SPOT_ETH_USD","symbol_type":"SPOT","asset_id_base":"ETH","asset_id_quote":"USD"}`
            : `{"type":"${type}","time":"${t}"}`,
      ),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      '   ',
      '\t \u00a0',
      '\ufeff',
      '\u2028',
      'not json at all',
      '{"type":"trade","symbol_id":"K_SPOT_BTC_USD","price":"1"}',
      '{"type":"trade","time":2024}',
      '{"type":"trade","time":"2024-03-01T00:00:00Z',
      '{"note":"type","time":"2024-03-01T00:00:01Z","symbol_id":"K_SPOT_BTC_USD"}',
      '{"recv_time":"x","time":"2024-03-01T00:00:02Z"}',
      '{"time":"2024-03-01T00:00:03Z","time":"2024-03-01T00:00:04Z"}',
      '{"type":"quote"\n}',
      '{"type"\u00a0:"symbol","time":"2024-03-01T00:00:05Z","exchange_id":"K","symbol_id":"S","symbol_type":"SPOT","asset_id_base":"A","asset_id_quote":"B"}',
      '{"type":\u2028"exchange","time":"2024-03-01T00:00:06Z","exchange_id":"K","legitimate":true,"rank":1}',
      '{"type":"quote","time":"2024-03-01T00:00:07Z","symbol_id":"K"}{"type":"symbol"}',
      '{"type":"exchange"type":"symbol","time":"2024-03-01T00:00:08Z"}',
      '[1,2]',
      'null',
      '{"k":"type"\n:"exchange"type":"symbol","time":"2024-03-01T00:00:09Z"}',
      '\u00a0'.repeat(40),
      '\u2028'.repeat(30),
      ' '.repeat(70),
    ),
  },
);

/**
 * A line's bytes: its text in UTF-8, sometimes with invalid bytes put in (a few, or up to 500 at
 * its end, which decode to 3 bytes each: near the length limit), or a BOM before it.
 */
const lineBytes = fc
  .tuple(lineText, fc.nat({ max: 9 }), fc.nat(), fc.constantFrom([0xff], [0xc3], [0xe2, 0x80], [0x80, 0x80], [0xc0, 0x22]))
  .map(([text, mode, at, bad]) => {
    const b = Buffer.from(text, 'utf8');
    if (mode === 0 && b.length > 0) {
      const k = at % (b.length + 1);
      return Buffer.concat([b.subarray(0, k), Buffer.from(bad), b.subarray(k)]);
    }
    if (mode === 1) return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]);
    if (mode === 2) return Buffer.concat([b, Buffer.alloc(at % 501, 0xff)]);
    return b;
  });

const fileArb = fc
  .tuple(
    fc.array(fc.tuple(lineBytes, fc.constantFrom('\n', '\n', '\r\n', '\r\r\n')), { minLength: 1, maxLength: 40 }),
    fc.boolean(),
    fc.array(fc.nat(), { maxLength: 8 }),
    fc.constantFrom(1 << 20, 1000, 400, 150, 100, 60),
  )
  .map(([lines, endNewline, cutSeeds, maxLineBytes]) => {
    const parts = lines.flatMap(([b, nl], i) => (i < lines.length - 1 || endNewline ? [b, Buffer.from(nl)] : [b]));
    const bytes = Buffer.concat(parts);
    const cuts = [...new Set(cutSeeds.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
    return { bytes, cuts, maxLineBytes };
  });

describe('NDJSON byte scan', () => {
  it('passes the records of the string scan, line for line, however the bytes are chunked', () => {
    fc.assert(
      fc.property(fileArb, ({ bytes, cuts, maxLineBytes }) => {
        expect(byteScan(bytes, cuts, maxLineBytes)).toEqual(stringScan(bytes, cuts, maxLineBytes));
        // Chunks read in windows (of 64 KiB in a replay), a window of any size.
        expect(byteScan(bytes, cuts, maxLineBytes, 1 + (bytes.length % 97))).toEqual(stringScan(bytes, cuts, maxLineBytes));
        // One chunk, and one byte at a time.
        expect(byteScan(bytes, [], maxLineBytes)).toEqual(stringScan(bytes, [], maxLineBytes));
        const each = Array.from({ length: bytes.length }, (_, i) => i + 1);
        expect(byteScan(bytes, each, maxLineBytes)).toEqual(stringScan(bytes, [], maxLineBytes));
      }),
      { seed: 12, numRuns: 600 },
    );
  });

  it('reads a log of plain lines in place with the times of parseTime, across minutes and chunks', () => {
    fc.assert(
      fc.property(fc.array(time, { minLength: 1, maxLength: 200 }), fc.nat({ max: 4000 }), (times, cut) => {
        const text = times.map((t) => `{"type":"quote","time":"${t}","symbol_id":"K_SPOT_BTC_USD"}\n`).join('');
        const bytes = Buffer.from(text, 'utf8');
        const cuts = cut < bytes.length ? [cut] : [];
        expect(byteScan(bytes, cuts, 1 << 20)).toEqual(stringScan(bytes, cuts, 1 << 20));
      }),
      { seed: 7, numRuns: 300 },
    );
  });
});
