/**
 * The stored form of a replay snapshot (the `state` of the `snapshots` table): its JSON text,
 * gzip-compressed, read back as one `gunzip` reads it (here a slice at a time: snapshotText.ts).
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
import { constants, createGzip, gzipSync } from 'node:zlib';
import type { ChunkSpill } from '../core/engine.js';
import { PackedBytes } from '../core/packedBytes.js';
import { markTransferable } from './rowJob.js';
import { SLICE, splitLargeStrings } from './snapshotText.js';
import { gunzipSlices, ignoreStreamError, zlibSync } from './zlibSync.js';

/** Bytes of a blob per row of the replay database at most (snapshotParts.ts). */
export const PART_BYTES = 4 << 20;
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
  return packInto(value, (bytes, members) => new BlobWriter(bytes, members)).done();
}

/**
 * {@link packSnapshot}'s blob in parts of {@link PART_BYTES} (the last shorter), each handed to
 * `onPart` as it is full (numbered from 0; each a Buffer of its own, which may be transferred):
 * the parts the replay database stores it in (snapshotParts.ts), the blob never whole. With
 * `reuse`, a part after the first is valid during the call only (its buffer is the next one's):
 * for a consumer that copies it (SQLite does).
 */
export function packSnapshotParts(value: unknown, onPart: (part: Buffer, seq: number) => void, opts: { reuse?: boolean } = {}): void {
  packInto(value, () => new PartWriter(onPart, opts.reuse === true)).done();
}

/** The members of `value`'s blob written by the writer `make` gives (for the bytes and members to come). */
function packInto<W extends { member(piece: Buffer): void }>(value: unknown, make: (bytes: number, members: number) => W): W {
  const large: (string | PackedBytes)[] = [];
  const tag = largeTag();
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof PackedBytes) {
      if (v.base64Length < LARGE_STRING) return v.base64();
    } else if (typeof v !== 'string' || v.length < LARGE_STRING || !PLAIN.test(v)) return v;
    large.push(v);
    return `${tag}${large.length - 1}`;
  });
  if (large.length === 0) {
    const w = make(3 * text.length, 1);
    w.member(Buffer.from(text));
    return w;
  }
  // The pieces to compress: the text's (at most 3 bytes a character) and the large strings'.
  let size = 3 * text.length;
  let pieces = large.length + 1;
  for (const s of large) {
    const n = typeof s === 'string' ? s.length : s.base64Length;
    size += n;
    pieces += Math.ceil(n / PIECE);
  }
  const blob = make(size, pieces);
  const quoted = JSON.stringify(tag).slice(0, -1); // `"` and the tag as JSON writes it
  let at = 0;
  for (let n = 0; n < large.length; n++) {
    const mark = `${quoted}${n}"`;
    const i = text.indexOf(mark, at);
    blob.member(Buffer.from(`${text.slice(at, i)}"`));
    const s = large[n];
    if (typeof s === 'string') {
      const out = Buffer.allocUnsafe(PIECE);
      for (let p = 0; p < s.length; p += PIECE) blob.member(latin1Piece(s, p, out));
    } else for (const piece of base64Pieces(s)) blob.member(piece);
    at = i + mark.length - 1; // the closing quote starts the next piece
  }
  blob.member(Buffer.from(text.slice(at)));
  return blob;
}

/** The prefix of a large string's placeholder: no string of a snapshot can be it (a random tag after a NUL, which JSON escapes). */
function largeTag(): string {
  return `\u0000xrate-large-${randomBytes(8).toString('hex')}-`;
}

/**
 * The gzip members of a blob, each written into one buffer as it is made: a member is garbage at
 * once, where a list of them and their concatenation held the blob twice. The buffer is sized for
 * the members' largest possible size (zlib's deflateBound, and gzip's header and trailer); the
 * pages past what they take are never written, so they take no memory.
 */
class BlobWriter {
  private readonly buf: Buffer;
  private at = 0;

  /** @param bytes bytes the members will compress, in all; @param members how many */
  constructor(bytes: number, members: number) {
    // deflateBound: n + n/4096 + n/16384 + n/2^25 + 13 - 6, plus 18 bytes of gzip: below n + n/1024 + 32.
    // Not zero-filled (calloc would write every page of it), never from Node's pool (over 1 MiB).
    this.buf = Buffer.allocUnsafeSlow(bytes + Math.ceil(bytes / 1024) + 32 * members);
    // It holds the blob alone (and pages never written after it): it can move to the writer thread.
    markTransferable(this.buf.buffer as ArrayBuffer);
  }

  member(piece: Buffer): void {
    const gz = gzipSync(piece);
    if (this.at + gz.length > this.buf.length) throw new Error("snapshot blob: a gzip member past deflate's bound");
    gz.copy(this.buf, this.at);
    this.at += gz.length;
  }

  done(): Buffer {
    return this.buf.subarray(0, this.at);
  }
}

/**
 * The gzip members of a blob cut into parts of {@link PART_BYTES}, each handed on once full (the
 * last at {@link done}). Each member is deflated straight into the parts, through one gzip
 * stream's handle reset between members: `gzipSync` would make each member a buffer of its own,
 * megabytes of garbage that only a collection frees, at the end of a replay, when its memory
 * peaks. The members are `gzipSync`'s, byte for byte (the same zlib, options and flush); where
 * the handle is not there (another runtime), they are `gzipSync`'s own.
 */
class PartWriter {
  private buf = PartWriter.part();
  private at = 0;
  private seq = 0;
  private readonly z = createGzip();
  private readonly sync = zlibSync(this.z);

  constructor(
    private readonly onPart: (part: Buffer, seq: number) => void,
    private readonly reuse: boolean,
  ) {
    this.z.on('error', ignoreStreamError); // writeSync throws it
  }

  /** A part's buffer, its memory its own (it can move to the writer thread). */
  private static part(): Buffer {
    return Buffer.allocUnsafeSlow(PART_BYTES);
  }

  private full(): void {
    if (this.at < PART_BYTES) return;
    this.onPart(this.buf, this.seq++);
    // Reused, but after the first part (which the snapshot's row takes at the end).
    if (!this.reuse || this.seq === 1) this.buf = PartWriter.part();
    this.at = 0;
  }

  member(piece: Buffer): void {
    if (this.sync === undefined) {
      const gz = gzipSync(piece);
      for (let from = 0; from < gz.length; ) {
        const n = Math.min(gz.length - from, PART_BYTES - this.at);
        gz.copy(this.buf, this.at, from, from + n);
        this.at += n;
        from += n;
        this.full();
      }
      return;
    }
    const { handle, state } = this.sync;
    let inOff = 0;
    let inLen = piece.length;
    for (;;) {
      handle.writeSync(constants.Z_FINISH, piece, inOff, inLen, this.buf, this.at, PART_BYTES - this.at);
      const availOut = state[0];
      inOff += inLen - state[1];
      inLen = state[1];
      this.at = PART_BYTES - availOut;
      // Room left: the member is finished; none: the part is full, and more may come.
      if (availOut > 0) break;
      this.full();
    }
    (this.z as unknown as { reset(): void }).reset();
  }

  done(): void {
    this.z.close();
    // The last part (or a blob of no bytes: one empty part), copied to its length, into memory of its own.
    if (this.at === 0 && this.seq > 0) return;
    if (this.reuse && this.seq > 0) {
      this.onPart(this.buf.subarray(0, this.at), this.seq++);
      return;
    }
    const last = Buffer.allocUnsafeSlow(this.at);
    this.buf.copy(last, 0, 0, this.at);
    this.onPart(last, this.seq++);
  }
}

/**
 * The base64 text of `bytes` in pieces of {@link PIECE} characters (the last one shorter), as
 * latin1 bytes: the pieces the text whole would be cut into, since a piece is the text of a whole
 * number of 3-byte groups. Each piece is encoded a slice at a time into one buffer, reused (valid
 * until the next piece): a piece's text made whole would be a string of megabytes, which only a
 * full collection frees, and then its bytes.
 */
function* base64Pieces(bytes: PackedBytes): Generator<Buffer> {
  const step = (PIECE / 4) * 3;
  const chunk = Buffer.allocUnsafe(step);
  const out = Buffer.allocUnsafe(PIECE);
  const encode = (n: number): Buffer => {
    let at = 0;
    for (let from = 0; from < n; from += SLICE) at += out.write(chunk.toString('base64', from, Math.min(n, from + SLICE)), at, 'latin1');
    return out.subarray(0, at);
  };
  let fill = 0;
  for (const part of bytes.parts) {
    for (let at = 0; at < part.length; ) {
      const n = Math.min(step - fill, part.length - at);
      chunk.set(part.subarray(at, at + n), fill);
      fill += n;
      at += n;
      if (fill === step) {
        yield encode(step);
        fill = 0;
      }
    }
  }
  if (fill > 0) yield encode(fill);
}

/** A large string's piece of {@link PIECE} characters from `p`, as latin1 bytes (a buffer reused: valid until the next piece). */
function latin1Piece(s: string, p: number, out: Buffer): Buffer {
  let at = 0;
  for (let from = p; from < Math.min(s.length, p + PIECE); from += SLICE)
    at += out.write(s.slice(from, Math.min(s.length, p + PIECE, from + SLICE)), at, 'latin1');
  return out.subarray(0, at);
}

/** How {@link unpackSnapshot} gives the large strings back. */
export interface UnpackOptions {
  /** Those of base64 as the {@link PackedBytes} of their bytes. */
  packed?: boolean;
  /** None read: each is {@link DROPPED} (a partitioned replay's earlier partitions' trade bins, which its merge drops). */
  drop?: boolean;
  /**
   * With `packed`, where the bytes of those of base64 go (a FileSpill: on disk, a megabyte at a
   * time), never whole in memory: their {@link PackedBytes} read them back a chunk at a time, as
   * long as the store keeps them (an engine restored from them holds none of them).
   */
  store?: ChunkSpill;
}

export { DROPPED } from './snapshotText.js';

/**
 * The value of a {@link packSnapshot} blob (or of a snapshot gzip-compressed whole, as before),
 * given whole or as a function reading its parts in order (snapshotParts.ts `snapshotParts`).
 * It is inflated a slice at a time and read twice (snapshotText.ts): its large strings apart from
 * the rest of the text, which alone becomes a string for JSON.parse; neither the blob nor its text
 * is ever whole. With `packed`, a large string of base64 comes back as the {@link PackedBytes} of
 * its bytes, as `Engine.snapshot({ packed: true })` holds them (restoreEngine takes either), in
 * memory of its exact size: the only copy of it; or, with `store`, kept there.
 */
export function unpackSnapshot(blob: Uint8Array | (() => Iterable<Uint8Array>), opts: UnpackOptions = {}): unknown {
  const parts = typeof blob === 'function' ? blob : () => [blob];
  const tag = largeTag();
  const { text, values } = splitLargeStrings(() => gunzipSlices(parts()), {
    packed: opts.packed === true,
    large: LARGE_STRING,
    tag,
    drop: opts.drop,
    store: opts.store,
  });
  if (values.length === 0) return JSON.parse(text);
  return JSON.parse(text, (_key, v: unknown) => (typeof v === 'string' && v.startsWith(tag) ? values[Number(v.slice(tag.length))] : v));
}
