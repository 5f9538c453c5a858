/**
 * A snapshot's JSON text read as it is inflated, its large strings apart (snapshotBlob.ts
 * `unpackSnapshot`): neither the blob, nor its text, nor a large string's text is ever whole in
 * memory; a large string of base64 is decoded into bytes of its exact size as it comes, or into
 * a store on disk a megabyte at a time (`store`).
 *
 * A large string is a string value (not a key: no `:` right after it) of at least `large` bytes
 * with no backslash in it. The text is read twice. The first reading finds the large strings,
 * their lengths and whether each is base64 as Buffer writes it (canonical, padded); the text is
 * kept whole only when it is small and holds none. The second reading makes the text with a
 * placeholder for each large string, and each value in memory of its exact size. Inflating twice
 * costs less than holding a day of a dense log's trade bins twice, when a replay's memory peaks.
 *
 * @module
 */
import type { ChunkSpill } from '../core/engine.js';
import { PackedBytes } from '../core/packedBytes.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const EQUALS = 0x3d;

/** Base64 characters: A-Z a-z 0-9 + /. */
const BASE64 = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') BASE64[c.charCodeAt(0)] = 1;

/** The buffer of a large string dropped (`drop`): none. */
const NOTHING = Buffer.alloc(0);

/**
 * Bytes encoded (snapshotBlob.ts), characters copied or base64 characters decoded at a time: a
 * multiple of 12 (whole base64 groups either way), its text a young string.
 */
export const SLICE = 3 << 14;

/** Bytes of a large string's decoded bytes put in a store at a time (`store`). */
const STORED = 1 << 20;

/** A large string found by the first reading: its place among the text's strings, its bytes, and whether it is canonical base64. */
interface Large {
  ordinal: number;
  bytes: number;
  base64: boolean;
}

/** The text with each large string replaced by `"<tag><index>"`, and the large strings' values in order. */
export interface SplitText {
  text: string;
  values: (string | PackedBytes | typeof DROPPED)[];
}

/** Bytes appended to a buffer grown by doubling. */
class Bytes {
  buf = Buffer.allocUnsafe(1 << 12);
  length = 0;

  push(src: Uint8Array, from: number, to: number): void {
    const n = to - from;
    if (this.length + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.length + n));
      this.buf.copy(next, 0, 0, this.length);
      this.buf = next;
    }
    this.buf.set(src.subarray(from, to), this.length);
    this.length += n;
  }

  text(): string {
    return this.buf.toString('utf8', 0, this.length);
  }
}

/**
 * The JSON text `slices()` gives (each call reading it again, from the start; the slices valid
 * until the next), its large strings apart (see the module description), each replaced by the
 * JSON string of `tag` and its index. With `packed`, a large string of base64 comes back as the
 * {@link PackedBytes} of its bytes.
 * @throws when the second reading differs from the first
 */
export function splitLargeStrings(slices: () => Iterable<Buffer>, opts: SplitOptions & { large: number }): SplitText {
  const found = findLarge(slices(), opts.large, 2 * opts.large);
  if (found.text !== undefined) return { text: found.text, values: [] };
  return build(slices(), found.large, opts);
}

/** How {@link splitLargeStrings} gives the large strings back. */
interface SplitOptions {
  /** Those of canonical base64 as the {@link PackedBytes} of their bytes. */
  packed: boolean;
  /** What the placeholders begin with. */
  tag: string;
  /** None read: each is {@link DROPPED}. */
  drop?: boolean;
  /**
   * With `packed`, the bytes of each large string of base64 put here a megabyte at a time (a
   * FileSpill: on disk), never whole in memory; its {@link PackedBytes} reads them back a chunk at
   * a time at each reading of its parts, as long as the store keeps them.
   */
  store?: ChunkSpill;
}

/** What a large string read with `drop` comes back as: neither a string nor bytes, so that no use of it passes unseen. */
export const DROPPED: unique symbol = Symbol('xrate: a large string not read');

/** What {@link scanStrings} tells of a JSON text, in order. */
interface StringSink {
  /** A slice of the text begins. */
  slice(s: Buffer): void;
  /** Bytes outside strings (no quote among them). */
  outside(s: Buffer, from: number, to: number): void;
  /** A string opens (its quote passed). */
  open(): void;
  /** Bytes of the open string with no backslash among them (the byte after a backslash included). */
  inside(s: Buffer, from: number, to: number): void;
  /** A backslash in the open string (the byte after it is escaped, given to {@link inside}). */
  escape(): void;
  /** The open string closes; `after`: the index in `s` after its quote (the slice's length when the next byte is in the next slice). */
  close(s: Buffer, after: number): void;
}

/**
 * Reads a JSON text given in slices for its strings: outside them, a quote opens one; inside, a
 * backslash escapes the next byte and an unescaped quote closes it. What is carried across
 * slices is whether a string is open and whether its last byte was a backslash. The next quote
 * and backslash of a slice are looked for once each, not at every byte.
 */
function scanStrings(slices: Iterable<Buffer>, sink: StringSink): void {
  let inString = false;
  let escaped = false; // the byte before was a backslash
  for (const s of slices) {
    const n = s.length;
    if (n === 0) continue;
    sink.slice(s);
    // The next quote and backslash at or after i (-1: none in the slice; -2: not looked for).
    let q = -2;
    let b = -2;
    let i = 0;
    while (i < n) {
      if (q !== -1 && q < i) q = s.indexOf(QUOTE, i);
      if (!inString) {
        sink.outside(s, i, q < 0 ? n : q);
        if (q < 0) break;
        inString = true;
        sink.open();
        i = q + 1;
        continue;
      }
      if (escaped) {
        escaped = false;
        sink.inside(s, i, i + 1);
        i++;
        continue;
      }
      if (b !== -1 && b < i) b = s.indexOf(BACKSLASH, i);
      if (b >= 0 && (q < 0 || b < q)) {
        sink.inside(s, i, b);
        sink.escape();
        escaped = true;
        i = b + 1;
        continue;
      }
      sink.inside(s, i, q < 0 ? n : q);
      if (q < 0) break;
      inString = false;
      i = q + 1;
      sink.close(s, i);
    }
  }
}

/**
 * The first reading: the large strings, and the text when it holds none and is at most `keep`
 * bytes. A string's length and checks are carried across slices, as is the byte after a large
 * string's closing quote (a `:` makes it a key).
 */
function findLarge(slices: Iterable<Buffer>, large: number, keep: number): { large: Large[]; text?: string } {
  const out: Large[] = [];
  const kept = new Bytes();
  let keeping = true;
  let ordinal = -1;
  let bytes = 0;
  let slash = false;
  // Base64 so far: no other byte, and `=` (at most 2) only at the end; its last 4 bytes.
  let b64 = true;
  let pad = 0;
  const last4 = Buffer.alloc(4);
  /** A string long enough, closed: whether it is a key waits for the next byte. */
  let pending: Large | undefined;
  const settle = (next: number | undefined): void => {
    if (pending !== undefined && next !== COLON) out.push(pending);
    pending = undefined;
  };
  scanStrings(slices, {
    slice(s) {
      if (keeping) {
        if (kept.length + s.length <= keep) kept.push(s, 0, s.length);
        else keeping = false;
      }
      if (pending !== undefined) settle(s[0]);
    },
    outside() {},
    open() {
      ordinal++;
      bytes = 0;
      slash = false;
      b64 = true;
      pad = 0;
    },
    inside(s, from, to) {
      bytes += to - from;
      if (slash) return;
      const n = to - from;
      if (n >= 4) last4.set(s.subarray(to - 4, to));
      else if (n > 0) {
        last4.copyWithin(0, n);
        last4.set(s.subarray(from, to), 4 - n);
      }
      if (!b64) return;
      for (let i = from; i < to; i++) {
        const c = s[i];
        if (BASE64[c] === 1 ? pad > 0 : c !== EQUALS || ++pad > 2) {
          b64 = false;
          return;
        }
      }
    },
    escape() {
      // The string is not large, whatever follows.
      bytes++;
      slash = true;
    },
    close(s, after) {
      if (bytes < large || slash) return;
      let base64 = b64 && bytes % 4 === 0;
      // Padded: written back as it was read (the padding bits zero).
      if (base64 && pad > 0) base64 = Buffer.from(last4.toString('latin1'), 'base64').toString('base64') === last4.toString('latin1');
      pending = { ordinal, bytes, base64 };
      if (after < s.length) settle(s[after]);
    },
  });
  settle(undefined);
  return { large: out, text: keeping && out.length === 0 ? kept.text() : undefined };
}

/** A quote and a backslash, as bytes of the text. */
const QUOTE_BYTE = Buffer.from('"');
const BACKSLASH_BYTE = Buffer.from('\\');

/** The second reading: the text with placeholders, and the values of the large strings `large` lists. */
function build(slices: Iterable<Buffer>, large: readonly Large[], opts: SplitOptions): SplitText {
  const { packed, tag, drop, store } = opts;
  const text = new Bytes();
  const values: SplitText['values'] = [];
  let next = 0;
  let ordinal = -1;
  // The large string being read: its bytes (as they are, or decoded), how many are filled, the
  // base64 characters not decoded yet (fewer than 4), and its bytes read so far.
  let into: Buffer | undefined;
  let decode = false;
  let at = 0;
  let rest = '';
  let seen = 0;
  // A large string's bytes going to the store: `into` is then the buffer of its next chunk
  // (`stored`, reused), and `chunks` its chunks there.
  let stored: Buffer | undefined;
  let chunks: { keys: number[]; lens: number[] } | undefined;
  const flush = (): void => {
    if (chunks === undefined || at === 0) return;
    chunks.keys.push((store as ChunkSpill).put((into as Buffer).subarray(0, at)));
    chunks.lens.push(at);
    at = 0;
  };
  const changed = (): Error => new Error('the snapshot read differently the second time');
  scanStrings(slices, {
    slice() {},
    outside(s, from, to) {
      text.push(s, from, to);
    },
    open() {
      ordinal++;
      if (next < large.length && large[next].ordinal === ordinal) {
        const l = large[next];
        decode = packed && l.base64;
        chunks = !drop && decode && store !== undefined ? { keys: [], lens: [] } : undefined;
        if (chunks !== undefined) into = stored ??= Buffer.allocUnsafeSlow(STORED);
        else into = drop ? NOTHING : Buffer.allocUnsafeSlow(decode ? (l.bytes / 4) * 3 : l.bytes);
        at = 0;
        seen = 0;
        rest = '';
      } else text.push(QUOTE_BYTE, 0, 1);
    },
    inside(s, from, to) {
      if (into === undefined) {
        text.push(s, from, to);
        return;
      }
      seen += to - from;
      if (seen > large[next].bytes) throw changed();
      if (drop) return;
      if (!decode) {
        s.copy(into, at, from, to);
        at += to - from;
        return;
      }
      for (let p = from; p < to; p += SLICE) {
        const chars = rest + s.toString('latin1', p, Math.min(to, p + SLICE));
        const whole = chars.length - (chars.length % 4);
        rest = chars.slice(whole);
        if (chunks !== undefined && at + (whole / 4) * 3 > into.length) flush();
        at += into.write(chars.slice(0, whole), at, 'base64');
      }
    },
    escape() {
      // A large string has none.
      if (into !== undefined) throw changed();
      text.push(BACKSLASH_BYTE, 0, 1);
    },
    close() {
      if (into === undefined) {
        text.push(QUOTE_BYTE, 0, 1);
        return;
      }
      const buf = into;
      if (seen !== large[next].bytes || rest !== '') throw changed();
      if (chunks !== undefined) {
        flush();
        values.push(storedBytes(store as ChunkSpill, chunks.keys, chunks.lens));
      } else values.push(drop ? DROPPED : decode ? new PackedBytes([buf.subarray(0, at)]) : buf.toString('utf8'));
      into = undefined;
      chunks = undefined;
      const p = Buffer.from(JSON.stringify(`${tag}${next}`));
      text.push(p, 0, p.length);
      next++;
    },
  });
  if (into !== undefined || next !== large.length) throw changed();
  return { text: text.text(), values };
}

/** The bytes put in `store` under `keys`, `lens` of them each, read back a chunk at a time into one buffer (each part valid until the next). */
function storedBytes(store: ChunkSpill, keys: readonly number[], lens: readonly number[]): PackedBytes {
  return new PackedBytes(
    {
      *[Symbol.iterator]() {
        let buf: Uint8Array | undefined;
        for (let i = 0; i < keys.length; i++) {
          buf = store.read(keys[i], buf);
          yield buf.subarray(0, lens[i]);
        }
      },
    },
    lens.reduce((a, n) => a + n, 0),
  );
}
