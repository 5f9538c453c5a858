/**
 * The flat columns of a Parquet file decoded straight into typed arrays: the reading path of an
 * event log's row groups (parquetRead.ts), which has no nested column, so needs none of the
 * general record assembly.
 *
 * A column chunk (its bytes as stored) gives one value per row: numbers (INT32, INT64, DOUBLE)
 * as a `Float64Array`, null as 0; strings (BYTE_ARRAY) as a code per row (-1 for null) into the
 * chunk's list of distinct texts. What it reads: data pages v1 and v2, dictionary pages, PLAIN,
 * dictionary (RLE_DICTIONARY, PLAIN_DICTIONARY) and DELTA_BINARY_PACKED values, definition levels of optional
 * columns, SNAPPY or no compression: what `xrate convert` writes (hyparquet-writer). Anything
 * else throws {@link UnsupportedParquet}, for the reader to fall back on the general decoder.
 *
 * @module
 */
import { snappyUncompress } from 'hyparquet';
import { Compact } from './thriftCompact.js';

/** A page, encoding or codec this decoder does not read (the general decoder does). */
export class UnsupportedParquet extends Error {}

/** One column chunk's values, one per row. */
export interface FlatColumn {
  /** INT32, INT64 and DOUBLE columns: the values (null as 0). */
  num?: Float64Array;
  /** BYTE_ARRAY columns: per row, an index into {@link texts}, -1 for null. */
  codes?: Int32Array;
  /** BYTE_ARRAY columns: the texts `codes` point at. */
  texts?: string[];
}

/** How to read one column chunk. */
export interface ChunkSpec {
  /** Physical type. */
  type: string;
  /** The column may be null (definition levels present). */
  optional: boolean;
  /** 'SNAPPY' or 'UNCOMPRESSED'. */
  codec: string;
  /** Values (rows) in the chunk. */
  rows: number;
}

// Page types, encodings (parquet.thrift).
const DATA_PAGE = 0;
const DICTIONARY_PAGE = 2;
const DATA_PAGE_V2 = 3;
const PLAIN = 0;
const PLAIN_DICTIONARY = 2;
const RLE = 3;
const RLE_DICTIONARY = 8;
const DELTA_BINARY_PACKED = 5;

/** A page header's fields this decoder uses. */
interface PageHeader {
  type: number;
  uncompressed: number;
  compressed: number;
  values: number;
  encoding: number;
  /** v2 only (-1 in v1: unknown). */
  nulls: number;
  defBytes: number;
  repBytes: number;
  isCompressed: boolean;
}

function pageHeader(r: Compact): PageHeader {
  const h: PageHeader = {
    type: -1,
    uncompressed: 0,
    compressed: 0,
    values: 0,
    encoding: PLAIN,
    nulls: -1,
    defBytes: 0,
    repBytes: 0,
    isCompressed: true,
  };
  r.struct((id, t) => {
    if (id === 1) h.type = r.zigzag();
    else if (id === 2) h.uncompressed = r.zigzag();
    else if (id === 3) h.compressed = r.zigzag();
    else if ((id === 5 || id === 7) && t === 12) {
      // DataPageHeader, DictionaryPageHeader: num_values, encoding first.
      r.struct((f) => {
        if (f === 1) h.values = r.zigzag();
        else if (f === 2) h.encoding = r.zigzag();
        else return false;
        return true;
      });
    } else if (id === 8 && t === 12) {
      r.struct((f, ft) => {
        if (f === 1) h.values = r.zigzag();
        else if (f === 2) h.nulls = r.zigzag();
        else if (f === 3) r.zigzag();
        else if (f === 4) h.encoding = r.zigzag();
        else if (f === 5) h.defBytes = r.zigzag();
        else if (f === 6) h.repBytes = r.zigzag();
        else if (f === 7) h.isCompressed = ft === 1;
        else return false;
        return true;
      });
    } else return false;
    return true;
  });
  return h;
}

/** Reads `count` values of the RLE / bit-packed hybrid encoding of width `width` from `b[pos, end)` into `out[at...]`. */
function readHybrid(b: Uint8Array, pos: number, end: number, width: number, out: Int32Array | Uint8Array, at: number, count: number): void {
  const stop = at + count;
  const bytes = (width + 7) >> 3;
  const mask = width === 32 ? -1 : (1 << width) - 1;
  while (at < stop) {
    if (pos >= end) throw new Error('parquet RLE run past the end of its page');
    let header = 0;
    let mul = 1;
    for (;;) {
      const x = b[pos++];
      header += (x & 0x7f) * mul;
      if (x < 0x80) break;
      mul *= 128;
    }
    if (header % 2 === 0) {
      // A run: one value, repeated.
      const n = header / 2;
      let v = 0;
      for (let k = 0; k < bytes; k++) v |= b[pos++] << (8 * k);
      const last = Math.min(stop, at + n);
      out.fill(v, at, last);
      at = last;
    } else {
      // Bit-packed groups of 8 values, least significant bits first.
      const n = ((header - 1) / 2) * 8;
      if (width === 1) {
        for (let k = 0; k < n; k += 8) {
          const x = pos < end ? b[pos] : 0;
          pos++;
          const m = Math.min(8, stop - at);
          for (let j = 0; j < m; j++) out[at + j] = (x >> j) & 1;
          at += m;
        }
      } else if (width <= 24) {
        let acc = 0;
        let bits = 0;
        for (let k = 0; k < n; k++) {
          while (bits < width) {
            acc |= (pos < end ? b[pos] : 0) << bits;
            pos++;
            bits += 8;
          }
          if (at < stop) out[at++] = acc & mask;
          acc >>>= width;
          bits -= width;
        }
      } else {
        let acc = 0;
        let bits = 0;
        for (let k = 0; k < n; k++) {
          while (bits < width) {
            acc += (pos < end ? b[pos] : 0) * 2 ** bits;
            pos++;
            bits += 8;
          }
          const v = acc % 2 ** width;
          acc = (acc - v) / 2 ** width;
          bits -= width;
          if (at < stop) out[at++] = v | 0;
        }
      }
    }
  }
}

/** An unsigned LEB128 varint at `b[pos]`: [value, next position] (exact below 2^53). */
function uleb(b: Uint8Array, pos: number): [number, number] {
  let r = 0;
  let mul = 1;
  for (;;) {
    if (pos >= b.length) throw new Error('parquet varint past the end of its page');
    const x = b[pos++];
    r += (x & 0x7f) * mul;
    if (x < 0x80) return [r, pos];
    mul *= 128;
  }
}

const unzig = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

/**
 * `count` INT64 values of the DELTA_BINARY_PACKED encoding from `b[pos...]`, where values stay
 * below 2^53 and deltas below 2^45 in size, as times and line numbers do (beyond,
 * {@link UnsupportedParquet}).
 */
function deltaNumbers(b: Uint8Array, pos: number, count: number, out: Float64Array = new Float64Array(count)): Float64Array {
  let blockSize: number;
  let miniblocks: number;
  let first: number;
  [blockSize, pos] = uleb(b, pos);
  [miniblocks, pos] = uleb(b, pos);
  [, pos] = uleb(b, pos);
  [first, pos] = uleb(b, pos);
  const perMini = blockSize / miniblocks;
  if (!Number.isInteger(perMini) || perMini % 8 !== 0) throw new Error('parquet delta block of a bad size');
  if (count === 0) return out;
  let v = unzig(first);
  out[0] = v;
  let k = 1;
  const widths = new Uint8Array(miniblocks);
  const u = new Int32Array(perMini);
  while (k < count) {
    let z: number;
    [z, pos] = uleb(b, pos);
    const minDelta = unzig(z);
    for (let m = 0; m < miniblocks; m++) widths[m] = b[pos + m];
    pos += miniblocks;
    for (let m = 0; m < miniblocks && k < count; m++) {
      const w = widths[m];
      if (w > 45) throw new UnsupportedParquet('parquet delta of more than 45 bits');
      const n = Math.min(perMini, count - k);
      if (w <= 24) {
        unpack(b, pos, w, u, perMini);
        for (let j = 0; j < n; j++) {
          v += minDelta + u[j];
          out[k++] = v;
        }
      } else {
        let acc = 0;
        let bits = 0;
        let at = pos;
        for (let j = 0; j < n; j++) {
          while (bits < w) {
            acc += (at < b.length ? b[at] : 0) * 2 ** bits;
            at++;
            bits += 8;
          }
          const x = acc % 2 ** w;
          acc = (acc - x) / 2 ** w;
          bits -= w;
          v += minDelta + x;
          out[k++] = v;
        }
      }
      pos += (perMini * w) / 8;
      if (Math.abs(v) > Number.MAX_SAFE_INTEGER) throw new UnsupportedParquet('parquet delta values beyond 2^53');
    }
  }
  return out;
}

/** `count` values of `width` <= 24 bits, packed least significant bits first, from `b[pos...]` into `out`. */
function unpack(b: Uint8Array, pos: number, width: number, out: Int32Array, count: number): void {
  if (width === 0) {
    out.fill(0, 0, count);
    return;
  }
  const mask = (1 << width) - 1;
  let acc = 0;
  let bits = 0;
  for (let k = 0; k < count; k++) {
    while (bits < width) {
      acc |= (pos < b.length ? b[pos] : 0) << bits;
      pos++;
      bits += 8;
    }
    out[k] = acc & mask;
    acc >>>= width;
    bits -= width;
  }
}

const utf8 = new TextDecoder();

/** `count` PLAIN BYTE_ARRAY values from `b[pos...]`, as texts. */
function plainTexts(b: Uint8Array, pos: number, count: number): string[] {
  const out = new Array<string>(count);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let k = 0; k < count; k++) {
    const len = dv.getUint32(pos, true);
    pos += 4;
    if (pos + len > b.length) throw new Error('parquet byte array past the end of its page');
    out[k] = utf8.decode(b.subarray(pos, pos + len));
    pos += len;
  }
  return out;
}

/** `count` PLAIN numbers of physical type `type` from `b[pos...]`. */
function plainNumbers(b: Uint8Array, pos: number, count: number, type: string, out: Float64Array = new Float64Array(count)): Float64Array {
  const width = type === 'INT32' ? 4 : 8;
  if (pos + width * count > b.length) throw new Error('parquet values past the end of their page');
  // An aligned copy read through a typed array (the file is little-endian, as is every platform Node runs on).
  const aligned = (b.byteOffset + pos) % width === 0;
  const bytes = aligned ? b : b.slice(pos, pos + width * count);
  if (type === 'DOUBLE') out.set(new Float64Array(bytes.buffer, aligned ? b.byteOffset + pos : 0, count));
  else if (type === 'INT32') out.set(new Int32Array(bytes.buffer, aligned ? b.byteOffset + pos : 0, count));
  else if (type === 'INT64') {
    const w = new Int32Array(bytes.buffer, aligned ? b.byteOffset + pos : 0, 2 * count);
    for (let k = 0; k < count; k++) out[k] = (w[2 * k] >>> 0) + w[2 * k + 1] * 4294967296;
  } else throw new UnsupportedParquet(`parquet type ${type}`);
  return out;
}

function uncompress(codec: string, b: Uint8Array, size: number): Uint8Array {
  if (codec === 'UNCOMPRESSED') return b;
  if (codec !== 'SNAPPY') throw new UnsupportedParquet(`parquet codec ${codec}`);
  // Snappy expands at most about 32 times (a 2-byte copy gives at most 64 bytes).
  if (!(size >= 0 && size <= 64 * b.length + 64)) throw new Error(`parquet page of ${b.length} bytes claims ${size} uncompressed`);
  // Into the page buffer: a page's values are copied out before the next page is read.
  if (scratch.page.length < size) scratch.page = new Uint8Array(Math.max(size, 2 * scratch.page.length));
  const out = scratch.page.subarray(0, size);
  snappyUncompress(b, out);
  return out;
}

/** The values buffer of the page being decoded, for `count` values. */
function pageValues(count: number): Float64Array {
  if (scratch.vals.length < count) scratch.vals = new Float64Array(Math.max(count, 2 * scratch.vals.length));
  return scratch.vals.subarray(0, count);
}

/** Row `row + i`'s text code for i < n: the page's k-th value where present (a dictionary index, or `base + k`), else -1. */
function spreadCodes(
  out: Int32Array,
  row: number,
  n: number,
  present: Uint8Array | undefined,
  dict: Int32Array | undefined,
  base: number,
): void {
  if (present === undefined) {
    if (dict !== undefined) out.set(dict.subarray(0, n), row);
    else for (let i = 0; i < n; i++) out[row + i] = base + i;
    return;
  }
  let k = 0;
  for (let i = 0; i < n; i++) {
    if (present[i] === 0) out[row + i] = -1;
    else {
      out[row + i] = dict !== undefined ? dict[k] : base + k;
      k++;
    }
  }
}

/** Row `row + i`'s number for i < n: the page's k-th value where present (through the dictionary when there is one), else 0. */
function spreadNumbers(
  out: Float64Array,
  row: number,
  n: number,
  present: Uint8Array | undefined,
  idx: Int32Array | undefined,
  dict: Float64Array | undefined,
  vals: Float64Array | undefined,
): void {
  if (idx !== undefined) {
    const d = dict as Float64Array;
    if (present === undefined) for (let i = 0; i < n; i++) out[row + i] = d[idx[i]];
    else {
      let k = 0;
      for (let i = 0; i < n; i++) out[row + i] = present[i] !== 0 ? d[idx[k++]] : 0;
    }
    return;
  }
  const v = vals as Float64Array;
  if (present === undefined) out.set(v.subarray(0, n), row);
  else {
    let k = 0;
    for (let i = 0; i < n; i++) out[row + i] = present[i] !== 0 ? v[k++] : 0;
  }
}

/**
 * Definition levels, dictionary indices, uncompressed bytes and values of the page being decoded
 * (decoding is synchronous): reused from page to page, where a new array each would be garbage
 * by the next page, its memory given back only when the collector gets to it.
 */
const scratch = { present: new Uint8Array(0), idx: new Int32Array(0), page: new Uint8Array(0), vals: new Float64Array(0) };

/**
 * Decodes one column chunk (`bytes`: its pages, dictionary first, as stored) into one value per
 * row, in the arrays of `reuse` (the same column's previous chunk) when they are long enough.
 * Throws {@link UnsupportedParquet} for what it does not read, an Error for damaged pages.
 */
export function decodeChunk(bytes: Uint8Array, spec: ChunkSpec, reuse?: FlatColumn): FlatColumn {
  const { type, optional, codec, rows } = spec;
  const text = type === 'BYTE_ARRAY';
  if (!text && type !== 'INT32' && type !== 'INT64' && type !== 'DOUBLE') throw new UnsupportedParquet(`parquet type ${type}`);
  // The arrays of the column's previous chunk, when they are long enough (the caller is done with them).
  // (Every row is written below: a value, or 0 or -1 for null.)
  const num = text ? undefined : reuse?.num !== undefined && reuse.num.length >= rows ? reuse.num : new Float64Array(rows);
  const codes = !text ? undefined : reuse?.codes !== undefined && reuse.codes.length >= rows ? reuse.codes : new Int32Array(rows);
  let texts: string[] = [];
  let dictNums: Float64Array | undefined;
  let dictTexts: string[] | undefined;
  let row = 0;
  const r = new Compact(bytes, 0);
  let present = scratch.present;
  let idx = scratch.idx;
  while (row < rows) {
    if (r.pos >= bytes.length) throw new Error(`parquet column chunk ends after ${row} of its ${rows} values`);
    const h = pageHeader(r);
    const start = r.pos;
    const end = start + h.compressed;
    if (end > bytes.length) throw new Error('parquet page runs past its column chunk');
    r.pos = end;
    if (h.type === DICTIONARY_PAGE) {
      if (h.encoding !== PLAIN && h.encoding !== PLAIN_DICTIONARY) throw new UnsupportedParquet('parquet dictionary encoding');
      const page = uncompress(codec, bytes.subarray(start, end), h.uncompressed);
      if (text) dictTexts = plainTexts(page, 0, h.values);
      else dictNums = plainNumbers(page, 0, h.values, type);
      continue;
    }
    if (h.type !== DATA_PAGE && h.type !== DATA_PAGE_V2) {
      if (h.type === 1) continue; // an index page: nothing to read
      throw new UnsupportedParquet(`parquet page type ${h.type}`);
    }
    const n = Math.min(h.values, rows - row);
    // Definition levels (flat columns: 0 null, 1 present) and where the values start.
    let page: Uint8Array;
    let at: number;
    let nulls = 0;
    if (present.length < n) present = scratch.present = new Uint8Array(n);
    if (h.type === DATA_PAGE_V2) {
      if (h.repBytes !== 0) throw new UnsupportedParquet('parquet repeated column');
      const levels = start + h.repBytes;
      const valuesAt = levels + h.defBytes;
      if (optional && h.nulls > 0) {
        readHybrid(bytes, levels, valuesAt, 1, present, 0, n);
        nulls = Math.min(n, h.nulls);
      }
      const body = bytes.subarray(valuesAt, end);
      page = h.isCompressed ? uncompress(codec, body, h.uncompressed - h.defBytes - h.repBytes) : body;
      at = 0;
    } else {
      page = uncompress(codec, bytes.subarray(start, end), h.uncompressed);
      at = 0;
      if (optional) {
        const len = new DataView(page.buffer, page.byteOffset, page.byteLength).getUint32(0, true);
        readHybrid(page, 4, 4 + len, 1, present, 0, n);
        for (let k = 0; k < n; k++) nulls += present[k] === 0 ? 1 : 0;
        at = 4 + len;
      }
    }
    const count = n - nulls;
    // The page's values (for the rows that are not null).
    let vals: Float64Array | string[] | undefined;
    let dictIdx: Int32Array | undefined;
    if (h.encoding === PLAIN) vals = text ? plainTexts(page, at, count) : plainNumbers(page, at, count, type, pageValues(count));
    else if (h.encoding === DELTA_BINARY_PACKED && type === 'INT64') vals = deltaNumbers(page, at, count, pageValues(count));
    else if (h.encoding === RLE_DICTIONARY || h.encoding === PLAIN_DICTIONARY) {
      if (count > 0) {
        if (idx.length < count) idx = scratch.idx = new Int32Array(count);
        const width = page[at];
        if (width > 32) throw new Error('parquet dictionary index width above 32');
        readHybrid(page, at + 1, page.length, width, idx, 0, count);
      }
      dictIdx = idx;
    } else if (h.encoding === RLE && count === 0) vals = [];
    else throw new UnsupportedParquet(`parquet encoding ${h.encoding}`);
    // Spread over the rows (a null keeps 0 or -1).
    const dictSize = text ? (dictTexts?.length ?? 0) : (dictNums?.length ?? 0);
    const base = texts.length;
    if (dictIdx !== undefined) {
      if (count > 0 && (text ? dictTexts === undefined : dictNums === undefined)) throw new Error('parquet dictionary page missing');
      for (let k = 0; k < count; k++)
        if (dictIdx[k] < 0 || dictIdx[k] >= dictSize) throw new Error('parquet dictionary index out of range');
      // Texts: the dictionary is the chunk's list (one dictionary per chunk).
      if (text && texts !== dictTexts) {
        if (texts.length > 0) throw new UnsupportedParquet('parquet dictionary and plain pages mixed');
        texts = dictTexts ?? [];
      }
    } else if (text && vals !== undefined) {
      if (texts === dictTexts && dictTexts !== undefined) throw new UnsupportedParquet('parquet dictionary and plain pages mixed');
      for (const s of vals as string[]) texts.push(s);
    }
    if (text) spreadCodes(codes as Int32Array, row, n, nulls > 0 ? present : undefined, dictIdx, base);
    else spreadNumbers(num as Float64Array, row, n, nulls > 0 ? present : undefined, dictIdx, dictNums, vals as Float64Array);
    row += n;
  }
  return text ? { codes, texts } : { num };
}
