/**
 * The stored form of a replay snapshot (the `state` of the `snapshots` table): its JSON text,
 * gzip-compressed, read back with one `gunzip`.
 *
 * A snapshot of a dense log holds a few large strings (the symbol records' packed trade bins:
 * tens of megabytes of base64 for a day of 279 markets trading every second). Built as one JSON
 * text, then its bytes, then their gzip, each would be another copy of them at the end of a
 * replay, when its memory peaks. So a large string that JSON writes as it is (printable ASCII, no
 * quote or backslash) is left out of the text and compressed on its own, in pieces: the blob is
 * the gzip members of the text's pieces and the large strings' pieces in order, which gunzip
 * reads as one text (a gzip file may hold several members; their contents follow each other).
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { PackedBytes } from '../core/packedBytes.js';

/** Strings at least this long (characters) are compressed apart. */
export const LARGE_STRING = 1 << 20;
/** Characters of a large string per gzip member. */
const PIECE = 1 << 22;
/** Printable ASCII but `"` and `\`: what JSON writes as it is. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * The gzip blob of `JSON.stringify(value)`, its large plain strings compressed apart (see the
 * module description). The bytes of a {@link PackedBytes} (a snapshot taken `packed`) are written
 * as their base64 text, encoded a piece at a time when it is large, so the blob is the same as for
 * the snapshot holding that text.
 *
 * @example
 * ```ts
 * unpackSnapshot(packSnapshot({ a: 'x'.repeat(3 << 20) })); // { a: 'xxx…' }
 * ```
 */
export function packSnapshot(value: unknown): Buffer {
  const large: (string | PackedBytes)[] = [];
  // A placeholder no string of the snapshot can be (a random tag after a NUL, which JSON escapes).
  const tag = `\u0000xrate-large-${randomBytes(8).toString('hex')}-`;
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof PackedBytes) {
      if (v.base64Length < LARGE_STRING) return v.base64();
    } else if (typeof v !== 'string' || v.length < LARGE_STRING || !PLAIN.test(v)) return v;
    large.push(v);
    return `${tag}${large.length - 1}`;
  });
  if (large.length === 0) return gzipSync(Buffer.from(text));
  const members: Buffer[] = [];
  const quoted = JSON.stringify(tag).slice(0, -1); // `"` and the tag as JSON writes it
  let at = 0;
  for (let n = 0; n < large.length; n++) {
    const mark = `${quoted}${n}"`;
    const i = text.indexOf(mark, at);
    members.push(gzipSync(Buffer.from(`${text.slice(at, i)}"`)));
    const s = large[n];
    if (typeof s === 'string')
      for (let p = 0; p < s.length; p += PIECE) members.push(gzipSync(Buffer.from(s.slice(p, p + PIECE), 'latin1')));
    else for (const piece of base64Pieces(s)) members.push(gzipSync(piece));
    at = i + mark.length - 1; // the closing quote starts the next piece
  }
  members.push(gzipSync(Buffer.from(text.slice(at))));
  return Buffer.concat(members);
}

/**
 * The base64 text of `bytes` in pieces of {@link PIECE} characters (the last one shorter), as
 * latin1 bytes: the pieces the text whole would be cut into, since a piece is the text of a whole
 * number of 3-byte groups.
 */
function* base64Pieces(bytes: PackedBytes): Generator<Buffer> {
  const step = (PIECE / 4) * 3;
  const chunk = Buffer.allocUnsafe(step);
  let fill = 0;
  for (const part of bytes.parts) {
    for (let at = 0; at < part.length; ) {
      const n = Math.min(step - fill, part.length - at);
      chunk.set(part.subarray(at, at + n), fill);
      fill += n;
      at += n;
      if (fill === step) {
        yield Buffer.from(chunk.toString('base64'), 'latin1');
        fill = 0;
      }
    }
  }
  if (fill > 0) yield Buffer.from(chunk.subarray(0, fill).toString('base64'), 'latin1');
}

/** The value of a {@link packSnapshot} blob (or of a snapshot gzip-compressed whole, as before). */
export function unpackSnapshot(blob: Buffer): unknown {
  return JSON.parse(gunzipSync(blob).toString('utf8'));
}
