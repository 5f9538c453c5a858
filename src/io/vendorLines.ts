/**
 * The byte-level row parser of the columnar vendor reader (vendorBatches.ts): the lines of a
 * CoinAPI flat file or a tardis CSV file into the rows of a batch, with the fast path and the
 * hand-over to the record reader's row logic described there.
 *
 * @module
 */
import { StringDecoder } from 'node:string_decoder';
import { BatchBuilder, type BatchColumns, type BufferPool, CELLS, type OtherRow, sideCode } from '../core/batch.js';
import { parseTime } from '../core/time.js';
import type { Dec, QuoteEvent, TradeEvent } from '../core/types.js';
import { type CsvRow, CsvSplitter, isBlank } from './csv.js';
import type { SourceRecord } from './source.js';
import { type VendorKind, type VendorRows, type VendorTime, vendorRows } from './vendorCsv.js';

const US = 1_000_000;
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];
const COINAPI_SIDES = ['BUY', 'SELL', 'BUY_ESTIMATED', 'SELL_ESTIMATED', 'UNKNOWN'].map((s) => Buffer.from(s));
const TARDIS_SIDES = [
  [Buffer.from('buy'), 'BUY'],
  [Buffer.from('sell'), 'SELL'],
  [Buffer.from('unknown'), 'UNKNOWN'],
] as const;

/** A record as a plain object without its line (a structured-clone value, for an other row). */
function plainRecord(r: SourceRecord): OtherRow {
  const o: OtherRow = { raw: r.raw };
  if (r.record !== undefined) o.record = r.record;
  if (r.error !== undefined) o.error = r.error;
  if (r.reason !== undefined) o.reason = r.reason;
  if (r.event !== undefined) o.event = r.event;
  if (r.venue !== undefined) o.venue = r.venue;
  return o;
}

/**
 * Where the rows of a batch are built: one per thread, shared by every file read. A reader
 * builds a whole batch within one step of its generator (no await between its first row and
 * `finish`), so the builder is empty whenever another file's reader runs; an open file then
 * holds no builder of its own (a merge opens thousands).
 */
interface RowSink {
  bb: BatchBuilder;
  raw: Buffer;
  rawLen: number;
  /** Field bounds of the line being read (a line is read within one call, so every parser of the thread can share them). */
  fs: Int32Array;
  fe: Int32Array;
}

let sink: RowSink | undefined;

/**
 * The date of the last ISO time a parser of this thread read a day for (`YYYY-MM-DD` bytes) and
 * the µs of its midnight, and the last folder date and its midnight: a merge opens each of a day's
 * files twice, one after another (parsing the dates again for each parser took 9-15 ms of a merge
 * of 1,034 files, 2,068 parsers).
 */
let lastDayBytes: Uint8Array = new Uint8Array(0);
let lastDayUs = 0;
let lastFolderDate: string | undefined;
let lastFolderDay = Number.NaN;

/** The µs of the midnight of folder date `date` (`YYYY-MM-DD`; NaN: none, or not a date). */
function folderMidnight(date: string | undefined): number {
  if (date === undefined) return Number.NaN;
  if (date !== lastFolderDate) {
    lastFolderDay = parseTime(`${date}T00:00:00Z`) ?? Number.NaN;
    lastFolderDate = date;
  }
  return lastFolderDay;
}

function rowSink(): RowSink {
  sink ??= { bb: new BatchBuilder(), raw: Buffer.allocUnsafe(1 << 16), rawLen: 0, fs: new Int32Array(64), fe: new Int32Array(64) };
  return sink;
}

/**
 * The byte-level row parser of one file: lines in, rows into a {@link BatchBuilder} (see the
 * module description).
 */
export class VendorLineParser {
  private readonly out = rowSink();
  private carry: Buffer | undefined;
  private line = 1;
  private width = 0;
  /** The last line handed over whole (a read error names it). */
  lastLine = 0;
  private readonly rows: VendorRows;
  private readonly delim: number;
  private readonly coinapi: boolean;
  private readonly quotes: boolean;
  private readonly max: number;
  private readonly startLine: number;
  /** Columns of the header (-1: absent). */
  private cTime = -1;
  private cA = -1;
  private cB = -1;
  private cC = -1;
  private cD = -1;
  private cSide = -1;
  private cExchange = -1;
  private cSymbol = -1;
  /** Field bounds of the line being read: the thread's (RowSink). */
  private fs = this.out.fs;
  private fe = this.out.fe;
  /** The symbol's dictionary index in the batch being built (CoinAPI: one symbol a file). */
  private sym = -1;
  /** The date of the last ISO time read (`YYYY-MM-DD` bytes) and the µs of its midnight. */
  private dayBytes: Uint8Array = lastDayBytes;
  private dayUs = lastDayUs;
  /** The µs of the midnight of the folder's date (NaN: no D-YYYYMMDD folder). */
  private readonly folderDay: number;
  /** After a line the fast path cannot split (a quote, a long line): the rest of the file goes to the CSV splitter. */
  private slow: { sp: CsvSplitter; decoder: StringDecoder } | undefined;
  private readonly recs: SourceRecord[] = [];
  private value = 0;

  constructor(
    private readonly kind: VendorKind,
    path: string,
    opts: { startLine: number; maxLineBytes: number; time?: VendorTime },
  ) {
    this.rows = vendorRows(path, kind, { ...opts, batchSize: 1, gzip: false, totalBytes: 0 });
    this.delim = kind.delimiter.charCodeAt(0);
    this.coinapi = kind.format === 'coinapi';
    this.quotes = kind.data === 'quotes';
    this.max = opts.maxLineBytes;
    this.startLine = opts.startLine;
    const date = this.rows.where.date;
    this.folderDay = folderMidnight(date);
  }

  /** Whether the header has been read. */
  get hasHeader(): boolean {
    return this.rows.columns !== undefined;
  }

  /** Reads the complete lines of `chunk` (a view valid only during the call). */
  push(chunk: Buffer): void {
    if (this.slow !== undefined) {
      this.takeSlow(this.slow.sp.push(this.slow.decoder.write(chunk)));
      return;
    }
    let pos = 0;
    const n = chunk.length;
    if (this.carry !== undefined) {
      const lf = chunk.indexOf(10);
      if (lf < 0) {
        this.carry = Buffer.concat([this.carry, chunk]);
        if (this.carry.length > this.max + 1) this.toSlow(this.carry, 0);
        return;
      }
      const whole = Buffer.concat([this.carry, chunk.subarray(0, lf)]);
      this.carry = undefined;
      if (whole.indexOf(34) >= 0 || !this.lineAt(whole, 0, whole.length, true)) {
        // The rest of the file from this line goes to the splitter: the line, its ending, the rest.
        this.toSlow(Buffer.concat([whole, chunk.subarray(lf)]), 0);
        return;
      }
      pos = lf + 1;
    }
    let quote = chunk.indexOf(34, pos);
    if (quote < 0) quote = n;
    while (pos < n) {
      const lf = chunk.indexOf(10, pos);
      if (lf < 0) break;
      if (quote < lf || !this.lineAt(chunk, pos, lf, true)) {
        this.toSlow(chunk, pos);
        return;
      }
      pos = lf + 1;
    }
    if (pos < n) {
      this.carry = Buffer.from(chunk.subarray(pos));
      if (this.carry.length > this.max + 1) this.toSlow(this.carry, 0);
    }
  }

  /** The end of the file: the last line (without a line ending). */
  end(): void {
    if (this.slow === undefined && this.carry !== undefined) {
      const c = this.carry;
      this.carry = undefined;
      if (c.indexOf(34) >= 0 || !this.lineAt(c, 0, c.length, false)) this.toSlow(c, 0);
    }
    if (this.slow !== undefined) {
      const { sp, decoder } = this.slow;
      const tail = decoder.end();
      if (tail.length > 0) this.takeSlow(sp.push(tail));
      this.takeSlow(sp.end());
    }
  }

  /** Rows so far in the batch. */
  get length(): number {
    return this.out.bb.length;
  }

  /** The batch of the rows so far. */
  finish(pool?: BufferPool): BatchColumns {
    // The raw bytes copied into the batch's one buffer, a plain Uint8Array (what a batch holds
    // after crossing threads), not a Buffer. (`new Uint8Array(buffer.subarray(...))` took 2 µs for
    // a row's bytes and 12-22 µs for a batch's, a copy into an array made 0.3-4.)
    const b = this.out.bb.finish(this.out.raw.subarray(0, this.out.rawLen), { copyRaw: true, pool });
    this.out.rawLen = 0;
    this.sym = -1;
    return b;
  }

  private toSlow(buf: Buffer, from: number): void {
    const header = this.rows.columns !== undefined;
    const sp = new CsvSplitter(true, this.max, this.kind.delimiter, { line: this.line, width: header ? this.width : 0 });
    this.slow = { sp, decoder: new StringDecoder('utf8') };
    this.carry = undefined;
    this.takeSlow(sp.push(this.slow.decoder.write(buf.subarray(from))));
  }

  private takeSlow(rows: CsvRow[]): void {
    if (rows.length === 0) return;
    this.rows.take(rows, this.recs);
    this.lastLine = this.rows.lastLine;
    this.flushRecords();
  }

  /** Hands the rows of one line to the record-at-a-time logic. */
  private slowRow(line: number, text: string): void {
    const fields = text.split(this.kind.delimiter);
    if (isBlank(fields)) return;
    if (this.rows.columns !== undefined && fields.length !== this.width) {
      this.rows.take([{ line, error: `row has ${fields.length} fields, the header has ${this.width}`, text }], this.recs);
    } else {
      const first = this.rows.columns === undefined;
      this.rows.take([{ line, fields }], this.recs);
      if (first) this.readColumns(fields.length);
    }
    this.lastLine = line;
    this.flushRecords();
  }

  /** The records the row logic gave, as rows of the batch. */
  private flushRecords(): void {
    const recs = this.recs;
    for (let k = 0; k < recs.length; k++) {
      const r = recs[k];
      const e = r.event;
      if (e !== undefined && r.venue === undefined && (e.type === 'quote' || e.type === 'trade')) {
        const raw = r.raw;
        const start = this.out.rawLen;
        this.ensureRaw(Buffer.byteLength(raw));
        this.out.rawLen += this.out.raw.write(raw, start);
        const sym = this.out.bb.symbolIndex(e.symbolId);
        if (e.type === 'quote') {
          const q = e as QuoteEvent;
          const i = this.out.bb.quote(
            r.line,
            q.time,
            sym,
            q.bidPrice.value,
            q.bidSize.value,
            q.askPrice.value,
            q.askSize.value,
            start,
            this.out.rawLen,
          );
          const c = CELLS * i;
          this.out.bb.text(c, q.bidPrice.text);
          this.out.bb.text(c + 1, q.bidSize.text);
          this.out.bb.text(c + 2, q.askPrice.text);
          this.out.bb.text(c + 3, q.askSize.text);
        } else {
          const t = e as TradeEvent;
          const i = this.out.bb.trade(r.line, t.time, sym, t.price.value, t.size.value, sideCode(t.takerSide), start, this.out.rawLen);
          this.out.bb.text(CELLS * i, t.price.text);
          this.out.bb.text(CELLS * i + 1, t.size.text);
        }
      } else {
        this.out.bb.other(r.line, plainRecord(r));
      }
    }
    recs.length = 0;
  }

  private ensureRaw(n: number): void {
    if (this.out.rawLen + n <= this.out.raw.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.out.raw.length * 2, this.out.rawLen + n));
    this.out.raw.copy(next, 0, 0, this.out.rawLen);
    this.out.raw = next;
  }

  private readColumns(width: number): void {
    const col = this.rows.columns!;
    this.width = width;
    const at = (name: string): number => col[name] ?? -1;
    this.cTime = at(this.rows.timeColumn);
    if (this.coinapi) {
      this.cA = at(this.quotes ? 'bid_px' : 'price');
      this.cB = at(this.quotes ? 'bid_sx' : 'base_amount');
      this.cC = at('ask_px');
      this.cD = at('ask_sx');
      this.cSide = this.quotes ? -1 : at('taker_side');
    } else {
      this.cExchange = at('exchange');
      this.cSymbol = at('symbol');
      this.cA = at(this.quotes ? 'bid_price' : 'price');
      this.cB = at(this.quotes ? 'bid_amount' : 'amount');
      this.cC = at('ask_price');
      this.cD = at('ask_amount');
      this.cSide = this.quotes ? -1 : at('side');
    }
    if (width > this.fs.length) {
      this.fs = this.out.fs = new Int32Array(width);
      this.fe = this.out.fe = new Int32Array(width);
    }
  }

  /**
   * Reads line `buf[s, lf)` (`lf`: its line feed, or the end of the file), which has no quote
   * character; false when the rest of the file must go to the CSV splitter from this line on
   * (a line over the limit: nothing of it was read).
   */
  private lineAt(buf: Buffer, s: number, lf: number, ended: boolean): boolean {
    let e = lf;
    if (e > s && buf[e - 1] === 13) e--;
    if (lf - s > this.max) return false;
    const line = this.line;
    if (ended) this.line++;
    if (this.rows.columns === undefined) {
      let from = s;
      if (line === 1 && e - s >= 3 && buf[s] === 0xef && buf[s + 1] === 0xbb && buf[s + 2] === 0xbf) from += 3;
      this.slowRow(line, buf.toString('utf8', from, e));
      return true;
    }
    if (line < this.startLine || !this.fastRow(buf, s, e, line)) this.slowRow(line, buf.toString('utf8', s, e));
    return true;
  }

  /** The fast path (see the module description); false to leave the row to the row logic. */
  private fastRow(buf: Buffer, s: number, e: number, line: number): boolean {
    const fs = this.fs;
    const fe = this.fe;
    const width = this.width;
    const delim = this.delim;
    let k = 0;
    fs[0] = s;
    for (let i = s; i < e; i++) {
      const c = buf[i];
      if (c === delim) {
        fe[k] = i;
        if (++k >= width) return false;
        fs[k] = i + 1;
      } else if (c < 0x21 || c > 0x7e) return false;
    }
    fe[k] = e;
    if (k + 1 !== width) return false;
    const time = this.coinapi
      ? this.coinapiTime(buf, fs[this.cTime], fe[this.cTime])
      : this.tardisTime(buf, fs[this.cTime], fe[this.cTime]);
    if (Number.isNaN(time)) return false;
    if (this.coinapi) return this.coinapiRow(buf, s, e, line, time);
    return this.tardisRow(buf, s, e, line, time);
  }

  private coinapiRow(buf: Buffer, s: number, e: number, line: number, time: number): boolean {
    const symbolId = this.rows.where.symbolId;
    if (symbolId === undefined) return false;
    const fs = this.fs;
    const fe = this.fe;
    const a = this.dec(buf, fs[this.cA], fe[this.cA]);
    if (a === 0 || !(this.value > 0)) return false;
    const va = this.value;
    const b = this.dec(buf, fs[this.cB], fe[this.cB]);
    if (b === 0) return false;
    const vb = this.value;
    let side = 0;
    let c = 0;
    let d = 0;
    let vc = 0;
    let vd = 0;
    if (this.quotes) {
      c = this.dec(buf, fs[this.cC], fe[this.cC]);
      if (c === 0 || !(this.value > 0)) return false;
      vc = this.value;
      d = this.dec(buf, fs[this.cD], fe[this.cD]);
      if (d === 0) return false;
      vd = this.value;
    } else if (this.cSide >= 0) {
      const ss = fs[this.cSide];
      const se = fe[this.cSide];
      if (se > ss) {
        for (let k = 0; k < COINAPI_SIDES.length; k++) {
          if (same(buf, ss, se, COINAPI_SIDES[k])) {
            side = k + 1;
            break;
          }
        }
        if (side === 0) return false;
      }
    }
    const start = this.out.rawLen;
    this.ensureRaw(e - s);
    const raw = this.out.raw;
    let o = start;
    for (let k = s; k < e; k++) raw[o++] = buf[k]; // a row is short: faster than a copy call
    this.out.rawLen = o;
    if (this.sym < 0) this.sym = this.out.bb.symbolIndex(symbolId);
    const bb = this.out.bb;
    if (this.quotes) {
      // Cells: bid, bid size, ask, ask size (a, b: bid_px, bid_sx; c, d: ask_px, ask_sx).
      const i = bb.quote(line, time, this.sym, va, vb, vc, vd, start, this.out.rawLen);
      const cell = CELLS * i;
      if (a === 2) bb.text(cell, buf.toString('latin1', fs[this.cA], fe[this.cA]));
      if (b === 2) bb.text(cell + 1, buf.toString('latin1', fs[this.cB], fe[this.cB]));
      if (c === 2) bb.text(cell + 2, buf.toString('latin1', fs[this.cC], fe[this.cC]));
      if (d === 2) bb.text(cell + 3, buf.toString('latin1', fs[this.cD], fe[this.cD]));
    } else {
      const i = bb.trade(line, time, this.sym, va, vb, side, start, this.out.rawLen);
      const cell = CELLS * i;
      if (a === 2) bb.text(cell, buf.toString('latin1', fs[this.cA], fe[this.cA]));
      if (b === 2) bb.text(cell + 1, buf.toString('latin1', fs[this.cB], fe[this.cB]));
    }
    this.lastLine = line;
    return true;
  }

  private tardisRow(buf: Buffer, s: number, e: number, line: number, time: number): boolean {
    const fs = this.fs;
    const fe = this.fe;
    const xs = fs[this.cExchange];
    const ss = fs[this.cSymbol];
    if (fe[this.cExchange] === xs || fe[this.cSymbol] === ss) return false;
    const a = this.decOf(buf, fs[this.cA], fe[this.cA], true);
    if (a === undefined) return false;
    const b = this.decOf(buf, fs[this.cB], fe[this.cB], false);
    if (b === undefined) return false;
    const symbol = buf.toString('latin1', ss, fe[this.cSymbol]);
    const venue = { exchange: buf.toString('latin1', xs, fe[this.cExchange]), symbol };
    let event: QuoteEvent | TradeEvent;
    if (this.quotes) {
      const c = this.decOf(buf, fs[this.cC], fe[this.cC], true);
      if (c === undefined) return false;
      const d = this.decOf(buf, fs[this.cD], fe[this.cD], false);
      if (d === undefined) return false;
      event = { type: 'quote', time, symbolId: symbol, bidPrice: a, bidSize: b, askPrice: c, askSize: d };
    } else {
      let side: string | undefined;
      if (this.cSide >= 0 && fe[this.cSide] > fs[this.cSide]) {
        for (const [bytes, name] of TARDIS_SIDES) if (same(buf, fs[this.cSide], fe[this.cSide], bytes)) side = name;
        if (side === undefined) return false;
      }
      event =
        side === undefined
          ? { type: 'trade', time, symbolId: symbol, price: a, size: b }
          : { type: 'trade', time, symbolId: symbol, price: a, size: b, takerSide: side as TradeEvent['takerSide'] };
    }
    this.out.bb.other(line, { raw: buf.toString('latin1', s, e), event, venue });
    this.lastLine = line;
    return true;
  }

  /**
   * A plain decimal (`\d+(\.\d+)?`) at `buf[s, e)`: 0 when it is not one (the row logic decides),
   * else 1 when its text is `String(value)`, 2 when the text must be listed; the value in `this.value`.
   */
  private dec(buf: Buffer, s: number, e: number): number {
    const len = e - s;
    if (len === 0 || len > 40) return 0;
    let m = 0;
    let dot = -1;
    for (let i = s; i < e; i++) {
      const c = buf[i];
      if (c === 46) {
        if (dot >= 0) return 0;
        dot = i;
      } else if (c >= 48 && c <= 57) m = m * 10 + (c - 48);
      else return 0;
    }
    if (dot === s || dot === e - 1) return 0;
    const digits = dot < 0 ? len : len - 1;
    if (digits > 15) {
      this.value = Number(buf.toString('latin1', s, e));
      return 2;
    }
    const v = dot < 0 ? m : m / POW10[e - 1 - dot];
    this.value = v;
    // String(v) is the text for at most 15 significant digits without a leading zero (other than
    // the units of 0.x), a fraction's trailing zero, or a value below 1e-6 (exponent form).
    if (len > 1 && buf[s] === 48 && buf[s + 1] !== 46) return 2;
    if (dot >= 0 && buf[e - 1] === 48) return 2;
    if (v < 1e-6 && !(v === 0 && len === 1)) return 2;
    return 1;
  }

  /** A decimal as a Dec (tardis), undefined when not plain or, for a price, not above 0. */
  private decOf(buf: Buffer, s: number, e: number, price: boolean): Dec | undefined {
    const k = this.dec(buf, s, e);
    if (k === 0 || (price && !(this.value > 0))) return undefined;
    return { value: this.value, text: buf.toString('latin1', s, e) };
  }

  /** A tardis time: µs since 1970, 1 to 16 digits (NaN: not one). */
  private tardisTime(buf: Buffer, s: number, e: number): number {
    const len = e - s;
    if (len < 1 || len > 16) return Number.NaN;
    let t = 0;
    for (let i = s; i < e; i++) {
      const c = buf[i] - 48;
      if (c < 0 || c > 9) return Number.NaN;
      t = t * 10 + c;
    }
    return t;
  }

  /**
   * A CoinAPI time (NaN: not one the fast path reads): `YYYY-MM-DDTHH:MM:SS[.f]Z`, or a time of
   * day `HH:MM:SS[.f]` on the folder's date (1 to 7 fractional digits, the 7th truncated), read
   * from the bytes on the µs of its day (cached by date); any other shape is left to the row logic.
   */
  private coinapiTime(buf: Buffer, s: number, e: number): number {
    const len = e - s;
    let h = s;
    let day: number;
    if (len >= 20 && buf[s + 10] === 84 && buf[e - 1] === 90) {
      // ISO: the date's bytes against the cached date.
      const d = this.dayBytes;
      let same = d.length === 10;
      for (let k = 0; same && k < 10; k++) same = buf[s + k] === d[k];
      if (!same) {
        const date = buf.toString('latin1', s, s + 10);
        const t = parseTime(`${date}T00:00:00Z`);
        if (t === undefined) return Number.NaN;
        this.dayBytes = lastDayBytes = Buffer.from(date, 'latin1');
        this.dayUs = lastDayUs = t;
      }
      day = this.dayUs;
      h = s + 11;
      e--; // before the Z
    } else if (len >= 8 && buf[s + 2] === 58) {
      if (Number.isNaN(this.folderDay)) return Number.NaN;
      day = this.folderDay;
    } else return Number.NaN;
    // HH:MM:SS
    if (e - h < 8 || buf[h + 2] !== 58 || buf[h + 5] !== 58) return Number.NaN;
    const hh = digit2(buf, h);
    const mm = digit2(buf, h + 3);
    const ss = digit2(buf, h + 6);
    if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 59) return Number.NaN;
    let us = day + ((hh * 60 + mm) * 60 + ss) * US;
    let p = h + 8;
    if (p === e) return us;
    if (buf[p] !== 46) return Number.NaN;
    p++;
    const digits = e - p;
    if (digits < 1 || digits > 7) return Number.NaN;
    let frac = 0;
    for (let k = 0; k < digits; k++) {
      const dg = buf[p + k] - 48;
      if (dg < 0 || dg > 9) return Number.NaN;
      if (k < 6) frac = frac * 10 + dg;
    }
    for (let k = digits; k < 6; k++) frac *= 10;
    us += frac;
    return us;
  }
}

/** The two-digit number at `buf[i]`, or -1. */
function digit2(buf: Buffer, i: number): number {
  const a = buf[i] - 48;
  const b = buf[i + 1] - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** `buf[s, e)` equals `bytes`. */
function same(buf: Buffer, s: number, e: number, bytes: Buffer): boolean {
  if (e - s !== bytes.length) return false;
  for (let k = 0; k < bytes.length; k++) if (buf[s + k] !== bytes[k]) return false;
  return true;
}
