/**
 * The stored form of a snapshot (src/io/snapshotBlob.ts): one gzip blob whose text is the
 * snapshot's JSON, its large plain strings compressed as gzip members of their own.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PackedBytes } from '../../../src/core/packedBytes.js';
import { FileSpill } from '../../../src/io/binSpill.js';
import { isMarkedTransferable, rowJobTransfer, type RowJob } from '../../../src/io/rowJob.js';
import { LARGE_STRING, packSnapshot, packSnapshotParts, PART_BYTES, unpackSnapshot } from '../../../src/io/snapshotBlob.js';

const GZIP = Buffer.from([0x1f, 0x8b, 0x08]);

/** The gzip headers (1f 8b 08) in a blob: one per member, or more if a deflate stream holds those bytes by chance. */
function members(blob: Buffer): number {
  let n = 0;
  for (let at = blob.indexOf(GZIP); at >= 0; at = blob.indexOf(GZIP, at + 1)) n++;
  return n;
}

/**
 * The blob of a value holding one large plain string `big` (at least LARGE_STRING characters, a
 * multiple of 4 Mi from its start or ending it), built the plainest way: the gzip members of the
 * JSON text before it (with its opening quote), of its pieces of 4 Mi characters, and of the rest.
 */
function reference(value: unknown, big: string): Buffer {
  const text = JSON.stringify(value);
  const i = text.indexOf(`"${big}"`) + 1;
  const members = [gzipSync(Buffer.from(text.slice(0, i)))];
  for (let p = 0; p < big.length; p += 1 << 22) members.push(gzipSync(Buffer.from(big.slice(p, p + (1 << 22)), 'latin1')));
  members.push(gzipSync(Buffer.from(text.slice(i + big.length))));
  return Buffer.concat(members);
}

describe('snapshot blobs', () => {
  it('gunzip to the JSON text of the value, large plain strings compressed apart', () => {
    const big = 'QUJD'.repeat((3 * LARGE_STRING) / 4 + 7); // base64-like, 3 M characters
    const value = { engine: { a: [1, 2, 3], symbols: { bins: { cold: big, sec: [5] } }, other: big.slice(0, LARGE_STRING) }, driver: null };
    const blob = packSnapshot(value);
    expect(gunzipSync(blob).toString('utf8')).toBe(JSON.stringify(value));
    expect(unpackSnapshot(blob)).toEqual(value);
    expect(members(blob)).toBeGreaterThan(3);
    // Its bytes kept in a store: read back a megabyte at a time, at each reading, never whole.
    const store = new FileSpill();
    try {
      const kept = unpackSnapshot(blob, { packed: true, store });
      const cold = (kept as { engine: { symbols: { bins: { cold: PackedBytes } } } }).engine.symbols.bins.cold;
      expect(cold).toBeInstanceOf(PackedBytes);
      expect(Array.isArray(cold.parts)).toBe(false);
      expect(cold.byteLength).toBe((big.length / 4) * 3);
      for (let reading = 0; reading < 2; reading++) {
        const sizes = [...cold.parts].map((p) => p.byteLength);
        expect(sizes.length).toBeGreaterThanOrEqual(3);
        expect(Math.max(...sizes)).toBeLessThanOrEqual(1 << 20);
        expect(cold.base64()).toBe(big);
      }
      // Those chunks, and the other large string's one.
      expect(store.stats.chunks).toBe([...cold.parts].length + 1);
      expect(texts(kept)).toEqual(value);
    } finally {
      store.close();
    }
    // Made in one buffer of its own: a writer thread's job takes it by transfer, not by copy.
    expect(isMarkedTransferable(blob)).toBe(true);
    expect(isMarkedTransferable(gzipSync(Buffer.from('{}')))).toBe(false);
    expect(isMarkedTransferable(Buffer.from(blob))).toBe(false);
    const job = {
      statement: new Uint8Array(0),
      tags: new Uint8Array(0),
      numbers: new Float64Array(0),
      refs: new Int32Array(0),
      bytes: new Uint8Array(0),
      others: [],
    };
    const transfer = rowJobTransfer({ ...job, snapshot: [1, 0, 0, 0, 0, 1, blob, 'at'] } as unknown as RowJob);
    expect(transfer).toContain(blob.buffer);
    expect(rowJobTransfer({ ...job, snapshot: [1, 0, 0, 0, 0, 1, Buffer.from(blob), 'at'] } as unknown as RowJob)).not.toContain(
      blob.buffer,
    );
  });

  it('keeps inline a large string JSON must escape, and reads a blob compressed whole', () => {
    const quoted = `"\\${'x'.repeat(LARGE_STRING)}\n`;
    const value = { s: quoted, t: '\u0000xrate-large-0' };
    expect(unpackSnapshot(packSnapshot(value))).toEqual(value);
    expect(unpackSnapshot(gzipSync(Buffer.from(JSON.stringify(value))))).toEqual(value);
  });

  it('writes packed bytes as their base64 text: the same blob, whatever their size and parts', () => {
    // Sizes about the inline limit and the pieces' (3 MiB of bytes: 4 Mi characters of base64),
    // the bytes cut into parts anywhere (not at 3-byte groups).
    const PIECE_BYTES = 3 << 20;
    const sizes = [0, 5, (LARGE_STRING / 4) * 3 - 1, (LARGE_STRING / 4) * 3, PIECE_BYTES, PIECE_BYTES + 1, 2 * PIECE_BYTES + 2];
    fc.assert(
      fc.property(
        fc.constantFrom(...sizes),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }),
        fc.integer(),
        (n, cuts, seed) => {
          const bytes = new Uint8Array(n);
          for (let i = 0, x = seed | 1; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            bytes[i] = x & 0xff;
          }
          const at = [...new Set(cuts.map((c) => Math.floor(c * n)))].sort((a, b) => a - b);
          const parts = [0, ...at, n].slice(1).map((to, k, ends) => bytes.subarray(k === 0 ? 0 : ends[k - 1], to));
          const packed = new PackedBytes(parts);
          const text = Buffer.from(bytes).toString('base64');
          expect(packed.base64()).toBe(text);
          const asText = { engine: { symbols: { bins: { cold: text, hot: 'AQI=' } } }, driver: { n } };
          const asBytes = { engine: { symbols: { bins: { cold: packed, hot: new PackedBytes([Uint8Array.of(1, 2)]) } } }, driver: { n } };
          const blob = packSnapshot(asText);
          expect(packSnapshot(asBytes).equals(blob)).toBe(true);
          if (text.length >= LARGE_STRING) expect(blob.equals(reference(asText, text))).toBe(true);
          // In parts (as the replay database stores a blob): its bytes cut every PART_BYTES, each a buffer of its own.
          for (const value of [asBytes, asText]) {
            const got: Buffer[] = [];
            packSnapshotParts(value, (part, seq) => {
              expect(seq).toBe(got.length);
              expect(part.byteOffset === 0 && part.byteLength === part.buffer.byteLength).toBe(true);
              got.push(part);
            });
            expect(got.slice(0, -1).every((p) => p.length === PART_BYTES)).toBe(true);
            expect(Buffer.concat(got).equals(blob)).toBe(true);
            // Reusing one buffer for the parts after the first (each copied during the call, as SQLite does): the same bytes.
            const copies: Buffer[] = [];
            let first: Buffer | undefined;
            packSnapshotParts(
              value,
              (part, seq) => {
                if (seq === 0) first = part;
                copies.push(Buffer.from(part));
              },
              { reuse: true },
            );
            expect(first?.equals(copies[0])).toBe(true);
            expect(Buffer.concat(copies).equals(blob)).toBe(true);
          }
        },
      ),
      { seed: 20261128, numRuns: 14 },
    );
  });

  it('round-trips any JSON value with large strings anywhere', () => {
    const large = fc
      .tuple(fc.constantFrom('A', 'b+/', '= 9'), fc.integer({ min: 0, max: 3 }))
      .map(([u, k]) => u.repeat(Math.ceil((LARGE_STRING + k * 997) / u.length)));
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ maxDepth: 1 }),
        large,
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(fc.string(), tie('v'), { maxKeys: 3 }),
      ),
    })).v;
    fc.assert(
      fc.property(value, (v) => {
        const blob = packSnapshot(v);
        expect(gunzipSync(blob).toString('utf8')).toBe(JSON.stringify(v));
        const plain: unknown = JSON.parse(JSON.stringify(v));
        expect(unpackSnapshot(blob)).toEqual(plain);
        // Packed: the large base64 strings as their bytes, the rest as it was.
        const packed = unpackSnapshot(blob, { packed: true });
        expect(texts(packed)).toEqual(plain);
        expect(count(packed, (x) => x instanceof PackedBytes)).toBe(
          count(plain, (x) => typeof x === 'string' && x.length >= LARGE_STRING && isBase64(x)),
        );
        // Their bytes in a store: the same, read twice.
        const store = new FileSpill();
        try {
          const kept = unpackSnapshot(blob, { packed: true, store });
          expect(texts(kept)).toEqual(plain);
          expect(texts(kept)).toEqual(plain);
        } finally {
          store.close();
        }
      }),
      { seed: 20261128, numRuns: 40 },
    );
  });

  it('reads large strings apart from the text, after strings with escaped quotes, and not keys', () => {
    const b64 = Buffer.alloc((LARGE_STRING / 4) * 3 + 1, 7).toString('base64'); // ends in ==
    const odd = `${'A'.repeat(LARGE_STRING - 4)}AB==`; // base64 whose padding bits are not zero
    const key = 'k'.repeat(LARGE_STRING);
    const url = 'A-_B'.repeat(LARGE_STRING / 4); // base64url, which Buffer also decodes
    const value = { a: 'say \\"hi\\" \\', b: b64, c: [odd, { [key]: 1 }], d: '\\', e: url };
    const blob = gzipSync(Buffer.from(JSON.stringify(value)));
    expect(unpackSnapshot(blob)).toEqual(value);
    const packed = unpackSnapshot(blob, { packed: true }) as { b: PackedBytes; c: [string, Record<string, number>] };
    expect(packed.b).toBeInstanceOf(PackedBytes);
    expect(packed.b.base64()).toBe(b64);
    // Not written back as it was read: left a string.
    expect(packed.c[0]).toBe(odd);
    expect((packed as unknown as { e: string }).e).toBe(url);
    expect(texts(packed)).toEqual(value);
  });
});

/** `v` with its PackedBytes as their base64 text. */
function texts(v: unknown): unknown {
  if (v instanceof PackedBytes) return v.base64();
  if (Array.isArray(v)) return v.map(texts);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, texts(x)]));
  return v;
}

/** The values in `v` (at any depth) that `f` holds for. */
function count(v: unknown, f: (x: unknown) => boolean): number {
  if (f(v)) return 1;
  if (v === null || typeof v !== 'object' || v instanceof PackedBytes) return 0;
  return Object.values(v).reduce((n: number, x) => n + count(x, f), 0);
}

/** Canonical base64: what Buffer writes for some bytes. */
function isBase64(s: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0 && Buffer.from(s, 'base64').toString('base64') === s;
}
