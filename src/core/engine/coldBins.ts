/**
 * The packed queue of trade bins older than an hour (tradeBins.ts): each bin a few bytes, in
 * chunks let go once read, read again once, when the bin leaves the day.
 *
 * @module
 */
import { PackedBytes } from '../packedBytes.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A bin as the cold queue gives it back: the mantissa a safe integer, or a BigInt when not. */
export interface ColdBin {
  market: number;
  sec: number;
  mant: number | bigint;
  exp: number;
}

/** Bytes of a {@link ColdBins} chunk (a larger one holds a bin that needs more). */
export const CHUNK = 1 << 16;

/** Written chunks a {@link ColdBins} with a spill holds in memory (besides the one read and the one appended to). */
export const HOLD = 8;

/**
 * Where a {@link ColdBins} puts the chunks it need not hold until they are read (a file:
 * src/io/binSpill.ts), each under the key `put` returns. A chunk is taken once, in the order
 * put; it may be read before that (a snapshot's bytes, a sort of every bin).
 */
export interface ChunkSpill {
  /** Keeps a copy of `bytes` (a view, valid during the call); returns its key. */
  put(bytes: Uint8Array): number;
  /** The bytes kept under `key` (in `into` when it is large enough), then lets them go. */
  take(key: number, into: Uint8Array | undefined): Uint8Array;
  /** The bytes kept under `key` (in `into` when it is large enough), still kept. */
  read(key: number, into: Uint8Array | undefined): Uint8Array;
}

/** A read position in a {@link ColdBins}: its chunk, the byte in it, the second of the last bin read and the bytes read in all. */
interface Cursor {
  chunk: number;
  at: number;
  sec: number;
  taken: number;
}

/**
 * A queue of bins packed as bytes: per bin the market (varint), the seconds since the previous
 * bin (varint; bins come in time order), the exponent (zigzag, shifted left one bit, the low bit
 * set when the mantissa is a BigInt) and the mantissa (varint, or its decimal digits after their
 * count). Bins are appended at the end and read from the front.
 *
 * The bytes are held in chunks of 64 KiB, a bin never across two: a chunk read to its end is
 * let go, so the memory held is the bins' bytes and a chunk, where one array grown by doubling
 * held up to twice them (a day of a dense log's bins is tens of megabytes) and copied them all
 * at each growth. With a {@link ChunkSpill} ({@link useSpill}), a written chunk goes to it once
 * {@link HOLD} written ones are held, and comes back when the reading reaches it: a day of bins
 * then takes a few chunks of memory, whatever the markets and their trading.
 */
export class ColdBins {
  /** @param chunkBytes bytes of a chunk (tests take small ones). */
  constructor(private readonly chunkBytes = CHUNK) {}

  /** The chunks (those before `read.chunk` already let go), and the bytes written in each. */
  private chunks: (Uint8Array | undefined)[] = [];
  private used: number[] = [];
  /** The chunk appended to (the last), and where its next bin goes. */
  private buf: Uint8Array = new Uint8Array(0);
  private tail = 0;
  /** A chunk read to its end, kept for the next one needed. */
  private spare: Uint8Array | undefined;
  /** Second of the last bin appended (the base of the next one's delta). */
  private lastSec = 0;
  private read: Cursor = { chunk: 0, at: 0, sec: 0, taken: 0 };
  private peeked: ColdBin | undefined;
  /** Bytes appended, in all. */
  private written = 0;
  /** Where written chunks go, and the key of each chunk there (-1: in memory). */
  private spill: ChunkSpill | undefined;
  private hold = HOLD;
  private keys: number[] = [];
  /** A spilled chunk read for a cursor other than the queue's own (a snapshot, a sort), and its index. */
  private peekBuf: Uint8Array | undefined;
  private peekChunk = -1;

  get empty(): boolean {
    return this.peeked === undefined && this.read.taken >= this.written;
  }

  /** Bytes held (for tests and memory figures). */
  get bytes(): number {
    return this.written - this.read.taken;
  }

  /** Bytes of the chunks held in memory, the spare included (for tests and memory figures). */
  get heldBytes(): number {
    let n = (this.spare?.length ?? 0) + (this.peekBuf?.length ?? 0);
    for (let c = this.read.chunk; c < this.chunks.length; c++) n += this.chunks[c]?.length ?? 0;
    return n;
  }

  /** Puts written chunks in `spill` from now on, but `hold` of them (those held beyond at once). */
  useSpill(spill: ChunkSpill, hold = HOLD): void {
    this.spill = spill;
    this.hold = hold;
    for (let c = this.read.chunk + 1; c < this.chunks.length - 1; c++) this.spillIfFull(c);
  }

  /** Spills written chunk c (neither the one read nor the last) when `hold` written chunks before it are in memory. */
  private spillIfFull(c: number): void {
    const spill = this.spill;
    if (spill === undefined || c <= this.read.chunk || c >= this.chunks.length - 1 || this.keys[c] >= 0) return;
    let held = 0;
    for (let x = this.read.chunk + 1; x < c && held < this.hold; x++) if (this.keys[x] < 0) held++;
    if (held < this.hold) return;
    const chunk = this.chunks[c] as Uint8Array;
    this.keys[c] = spill.put(chunk.subarray(0, this.used[c]));
    this.chunks[c] = undefined;
    if (this.spare === undefined || this.spare.length < chunk.length) this.spare = chunk;
  }

  /** Chunk c's bytes, brought back from the spill for the queue's own reading (`take`), or read for another cursor. */
  private chunkAt(c: number, own: boolean): Uint8Array {
    const held = this.chunks[c];
    if (held !== undefined) return held;
    const spill = this.spill as ChunkSpill;
    if (own) {
      const b = spill.take(this.keys[c], this.spare);
      if (b === this.spare) this.spare = undefined;
      this.chunks[c] = b;
      this.keys[c] = -1;
      if (this.peekChunk === c) this.peekChunk = -1;
      return b;
    }
    if (this.peekChunk !== c) {
      this.peekBuf = spill.read(this.keys[c], this.peekBuf);
      this.peekChunk = c;
    }
    return this.peekBuf as Uint8Array;
  }

  /** Makes room for a bin of up to `n` bytes at the end (a new chunk when the last has not). */
  private room(n: number): void {
    if (this.tail + n <= this.buf.length) return;
    let next = this.spare !== undefined && this.spare.length >= n ? this.spare : undefined;
    this.spare = undefined;
    next ??= new Uint8Array(Math.max(this.chunkBytes, n));
    this.chunks.push(next);
    this.used.push(0);
    this.keys.push(-1);
    this.buf = next;
    this.tail = 0;
    // The chunk before is written: to the spill, past the few held.
    this.spillIfFull(this.chunks.length - 2);
  }

  private varint(v: number): void {
    const b = this.buf;
    while (v >= 128) {
      b[this.tail++] = (v % 128) + 128;
      v = Math.floor(v / 128);
    }
    b[this.tail++] = v;
  }

  /** Appends a bin (its second not before the previous one's). */
  push(market: number, sec: number, mant: number | bigint, exp: number): void {
    // A BigInt mantissa that is a safe integer is packed as a number, as it is restored.
    if (typeof mant === 'bigint' && mant <= MAX_SAFE) mant = Number(mant);
    const digits = typeof mant === 'bigint' ? mant.toString() : '';
    const big = digits !== '';
    const first = this.empty;
    this.room(48 + digits.length);
    const from = this.tail;
    this.varint(market);
    // The first bin of an empty queue has its second whole (odd), the others a delta (even).
    this.varint(first ? 2 * zigzag(sec) + 1 : 2 * (sec - this.lastSec));
    this.lastSec = sec;
    this.varint(2 * zigzag(exp) + (big ? 1 : 0));
    if (typeof mant === 'number') this.varint(mant);
    else {
      this.varint(digits.length);
      for (let i = 0; i < digits.length; i++) this.buf[this.tail++] = digits.charCodeAt(i);
    }
    this.used[this.chunks.length - 1] = this.tail;
    this.written += this.tail - from;
  }

  /** The packed bytes of the bins held, oldest first (views, each valid until the next is read, and until the next append). */
  *parts(): Generator<Uint8Array> {
    const from = this.read.chunk;
    for (let c = from, at = this.read.at; c < this.chunks.length; c++, at = 0)
      if (this.used[c] > at) yield this.chunkAt(c, false).subarray(at, this.used[c]);
  }

  /**
   * The bytes of the bins held, as a queue of these bins alone holds them: the first bin's second
   * written whole (in this queue it may be a delta from a bin already taken), the rest as they
   * are (views, valid until the next append).
   */
  canonical(): PackedBytes {
    const first = this.peek();
    if (first === undefined) return new PackedBytes([]);
    const one = new ColdBins(64);
    one.push(first.market, first.sec, first.mant, first.exp);
    const head = [...one.parts()];
    const rest = () => this.parts();
    // Read as they are written out (a spilled chunk at a time, into one buffer), not now.
    return new PackedBytes(
      {
        *[Symbol.iterator]() {
          yield* head;
          yield* rest();
        },
      },
      one.bytes + this.bytes,
    );
  }

  /** Reads the bin at cursor `r` and moves it past (r at a bin: not at the end). */
  private decode(r: Cursor): ColdBin {
    if (r.at >= this.used[r.chunk]) {
      r.chunk++;
      r.at = 0;
    }
    const from = r.at;
    const bin = binAt(this.chunkAt(r.chunk, r === this.read), r);
    r.taken += r.at - from;
    return bin;
  }

  /**
   * The bins of {@link canonical}'s bytes given as `parts` (valid each until the next one), cut
   * anywhere: a bin cut at a part's end is read with the next one. Nothing is held but a part.
   * @throws when the bytes end within a bin
   */
  static *read(parts: Iterable<Uint8Array>): Generator<ColdBin> {
    const r: Cursor = { chunk: 0, at: 0, sec: 0, taken: 0 };
    // The bytes of a bin cut at a part's end (`cut` of them), then the next part after them.
    let carry = new Uint8Array(0);
    let cut = 0;
    const room = (n: number): void => {
      if (carry.length >= n) return;
      const next = new Uint8Array(2 * n);
      next.set(carry.subarray(0, cut));
      carry = next;
    };
    for (const part of parts) {
      let b = part;
      if (cut > 0) {
        room(cut + part.length);
        carry.set(part, cut);
        b = carry.subarray(0, cut + part.length);
      }
      r.at = 0;
      for (;;) {
        // Far from the part's end, only a bin's digits can run past it (binAt checks them).
        if (b.length - r.at < NEAR_END && binEnd(b, r.at) < 0) break;
        const from = r.at;
        const sec = r.sec;
        const bin = binAt(b, r);
        if (r.at > b.length) {
          r.at = from;
          r.sec = sec;
          break;
        }
        yield bin;
      }
      const rest = b.length - r.at;
      if (b.buffer === carry.buffer) carry.copyWithin(0, r.at, b.length);
      else if (rest > 0) {
        cut = 0;
        room(rest);
        carry.set(b.subarray(r.at));
      }
      cut = rest;
    }
    if (cut > 0) throw new Error('packed trade bins end within a bin');
  }

  /** The bin at the front, not taken. */
  peek(): ColdBin | undefined {
    if (this.peeked !== undefined || this.read.taken >= this.written) return this.peeked;
    const before = this.read.chunk;
    this.peeked = this.decode(this.read);
    if (this.read.chunk > before) this.release(before);
    return this.peeked;
  }

  /** Lets go of chunk c, read to its end (kept as the spare; the list compacted now and then). */
  private release(c: number): void {
    this.spare = this.chunks[c];
    this.chunks[c] = undefined;
    if (this.read.chunk >= 8 && this.read.chunk * 2 >= this.chunks.length) {
      const n = this.read.chunk;
      this.chunks.splice(0, n);
      this.used.splice(0, n);
      this.keys.splice(0, n);
      this.read.chunk = 0;
      this.peekChunk = -1;
    }
  }

  /** Takes the bin at the front. */
  shift(): ColdBin | undefined {
    const b = this.peek();
    this.peeked = undefined;
    return b;
  }

  /** Every bin, oldest first, without taking them. */
  *[Symbol.iterator](): Generator<ColdBin> {
    if (this.peeked !== undefined) yield this.peeked;
    const r = { ...this.read };
    while (r.taken < this.written) yield this.decode(r);
  }
}

/**
 * Bytes from a part's end within which a bin's fields may run past it (its varints take 24 bytes
 * at most: market, seconds, exponent, and a safe mantissa or the digits' count).
 */
const NEAR_END = 64;

/**
 * Decodes the bin at cursor `r` of `b` and moves the cursor past it: whole in `b`, or at least
 * {@link NEAR_END} bytes before its end, when the cursor is left past the end if its digits run
 * past it (the bin then not decoded).
 */
function binAt(b: Uint8Array, r: Cursor): ColdBin {
  const market = varintAt(b, r);
  const f = varintAt(b, r);
  const sec = f % 2 === 1 ? unzigzag((f - 1) / 2) : r.sec + f / 2;
  r.sec = sec;
  const e = varintAt(b, r);
  const exp = unzigzag(Math.floor(e / 2));
  let mant: number | bigint;
  if (e % 2 === 0) mant = varintAt(b, r);
  else {
    const n = varintAt(b, r);
    if (r.at + n > b.length) {
      r.at = b.length + 1;
      return { market, sec, mant: 0, exp };
    }
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(b[r.at++]);
    mant = BigInt(s);
  }
  return { market, sec, mant, exp };
}

/** Where the bin at `at` of `b` ends, or -1 when `b` ends first (or at `at`). */
function binEnd(b: Uint8Array, at: number): number {
  let big = false;
  for (let field = 0; field < 4; field++) {
    let x = 128;
    let v = 0;
    let scale = 1;
    // A varint: its value is needed only for the exponent's low bit and the digits' count.
    while (x >= 128) {
      if (at >= b.length) return -1;
      x = b[at++];
      v += (x & 127) * scale;
      scale *= 128;
    }
    if (field === 2) big = v % 2 === 1;
    if (field === 3 && big) at += v;
  }
  return at <= b.length ? at : -1;
}

/** The varint at cursor `r` of chunk `b`, the cursor moved past it. */
function varintAt(b: Uint8Array, r: Cursor): number {
  let v = 0;
  let scale = 1;
  for (;;) {
    const x = b[r.at++];
    v += (x & 127) * scale;
    if (!(x >= 128)) return v; // (past the end, x is undefined: stop)
    scale *= 128;
  }
}

/** An integer as a non-negative one: 0, -1, 1, -2, ... to 0, 1, 2, 3, ... */
function zigzag(v: number): number {
  return v >= 0 ? 2 * v : -2 * v - 1;
}

function unzigzag(z: number): number {
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}
