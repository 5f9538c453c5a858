/**
 * A snapshot's text read as it is inflated (src/io/snapshotText.ts, src/io/zlibSync.ts
 * `gunzipSlices`): cut anywhere, it gives what the whole text read at once gives.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PackedBytes } from '../../src/core/packedBytes.js';
import { DROPPED, splitLargeStrings } from '../../src/io/snapshotText.js';
import { gunzipSlices } from '../../src/io/zlibSync.js';

const RUNS = { seed: 3911, numRuns: 300 };
const TAG = '\u0000tag-';

/**
 * The reference: the whole text read at once, as unpackSnapshot did before it read slices. A
 * large string is a string value of at least `large` bytes with no backslash; with `packed`, one
 * that is base64 as Buffer writes it comes back as its bytes.
 */
function reference(raw: Buffer, packed: boolean, large: number): { text: string; values: (string | Uint8Array)[] } {
  const spans: [number, number][] = [];
  for (let open = raw.indexOf(0x22); open >= 0; ) {
    let close = raw.indexOf(0x22, open + 1);
    for (;;) {
      let n = 0;
      while (raw[close - 1 - n] === 0x5c) n++;
      if (n % 2 === 0) break;
      close = raw.indexOf(0x22, close + 1);
    }
    const slash = raw.indexOf(0x5c, open + 1);
    if (close - open - 1 >= large && raw[close + 1] !== 0x3a && (slash < 0 || slash > close)) spans.push([open, close]);
    open = raw.indexOf(0x22, close + 1);
  }
  let text = '';
  let at = 0;
  const values: (string | Uint8Array)[] = [];
  for (const [open, close] of spans) {
    text += `${raw.toString('utf8', at, open)}${JSON.stringify(`${TAG}${values.length}`)}`;
    const s = raw.toString('latin1', open + 1, close);
    const b64 = /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0 && Buffer.from(s, 'base64').toString('base64') === s;
    values.push(packed && b64 ? new Uint8Array(Buffer.from(s, 'base64')) : raw.toString('utf8', open + 1, close));
    at = close + 1;
  }
  return { text: text + raw.toString('utf8', at), values };
}

/** `bytes` cut at `cuts` (fractions), as slices of one buffer reused, each valid until the next (as gunzipSlices gives them). */
function* sliced(bytes: Buffer, cuts: number[]): Generator<Buffer> {
  const at = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b);
  const reused = Buffer.alloc(bytes.length);
  let from = 0;
  for (const to of [...at, bytes.length]) {
    if (to < from) continue;
    bytes.copy(reused, 0, from, to);
    yield reused.subarray(0, to - from);
    reused.fill(0x2a, 0, to - from); // what a reader still holding it would see
    from = to;
  }
}

const LARGE = 16;
/** Strings of every kind around the threshold: base64 (canonical or not, padded), escapes, non-ASCII, keys. */
const strings = fc.oneof(
  fc.uint8Array({ minLength: 8, maxLength: 24 }).map((b) => Buffer.from(b).toString('base64')),
  fc.constantFrom('AAAAAAAAAAAAAAB=', 'AAAAAAAAAAAAAB==', 'AAAAAAAAAAAAA===', 'A-_BA-_BA-_BA-_B', 'QUJDQUJDQUJDQUJD=', 'QUJD=QUJDQUJDQUJD'),
  fc.string({ minLength: 10, maxLength: 24 }),
  fc.string({ unit: 'binary', minLength: 10, maxLength: 24 }),
  fc.constantFrom('"', '\\', 'é', '\n').chain((c) => fc.nat(20).map((k) => `${'x'.repeat(k)}${c}${'y'.repeat(20 - k)}`)),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    strings,
    fc.jsonValue({ maxDepth: 1 }),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(strings, fc.string()), tie('v'), { maxKeys: 3 }),
  ),
})).v;

function plainValues(vs: readonly (string | PackedBytes | typeof DROPPED)[]): (string | Uint8Array | typeof DROPPED)[] {
  return vs.map((v) => (typeof v === 'string' || v === DROPPED ? v : new Uint8Array(v.bytes())));
}

describe('a snapshot text read in slices', () => {
  it('splits its large strings off as the whole text read at once does, wherever it is cut', () => {
    fc.assert(
      fc.property(
        value,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
        fc.constantFrom('text', 'packed', 'drop'),
        (v, cuts, mode) => {
          const raw = Buffer.from(JSON.stringify(v));
          const packed = mode === 'packed';
          const want = reference(raw, packed, LARGE);
          const got = splitLargeStrings(() => sliced(raw, cuts), { packed, large: LARGE, tag: TAG, drop: mode === 'drop' });
          expect(got.text).toBe(want.text);
          expect(plainValues(got.values)).toEqual(mode === 'drop' ? want.values.map(() => DROPPED) : want.values);
          const parse = (t: { text: string; values: unknown[] }): unknown =>
            JSON.parse(t.text, (_k, x: unknown) =>
              typeof x === 'string' && x.startsWith(TAG) ? t.values[Number(x.slice(TAG.length))] : x,
            );
          if (mode === 'text') expect(parse(got)).toEqual(v);
        },
      ),
      RUNS,
    );
  });

  it('fails when the second reading differs from the first', () => {
    const texts = [Buffer.from(JSON.stringify({ a: 'Q'.repeat(32) })), Buffer.from(JSON.stringify({ a: 'Q'.repeat(36) }))];
    for (const [packed, drop] of [
      [true, false],
      [false, false],
      [false, true],
    ])
      for (const order of [texts, [...texts].reverse()]) {
        let reading = 0;
        expect(() => splitLargeStrings(() => [order[reading++]], { packed, large: LARGE, tag: TAG, drop })).toThrow(/differently/);
      }
  });

  it('inflates gzip members given in parts cut anywhere, a slice at a time', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 3000 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
        fc.integer({ min: 1, max: 700 }),
        (members, cuts, slice) => {
          const blob = Buffer.concat(members.map((m) => gzipSync(m)));
          const out: Buffer[] = [];
          for (const s of gunzipSlices(sliced(blob, cuts), slice)) {
            expect(s.length).toBeLessThanOrEqual(slice);
            out.push(Buffer.from(s));
          }
          expect(Buffer.concat(out).equals(gunzipSync(blob))).toBe(true);
        },
      ),
      RUNS,
    );
  });

  it('fails on gzip data cut short or broken', () => {
    const blob = gzipSync(Buffer.alloc(5000, 7));
    expect(() => [...gunzipSlices([blob.subarray(0, blob.length - 9)])]).toThrow(/unexpected end/);
    const broken = Buffer.from(blob);
    broken[20] ^= 0xff;
    expect(() => [...gunzipSlices([broken])]).toThrow();
  });
});
