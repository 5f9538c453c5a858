/**
 * History answers of the rate service, up to 100,000 items: read a slice at a time from the
 * provider's lazily read buckets, kept in typed arrays (a few bytes per bucket, no object for the
 * garbage collector to copy), then written a slice at a time (slices.ts), each bucket becoming its
 * wire item only while its slice is rendered. The bytes are those of the whole array rendered at
 * once ({@link render}); an answer of at most {@link STREAM_MIN_ITEMS} items is rendered at once.
 *
 * @module
 */
import type { OhlcBucket } from '../core/ohlc.js';
import { formatTime } from '../core/time.js';
import { wireText } from '../core/wire.js';
import { historyPieces, render, type OutputFormat } from '../http/format/index.js';
import { timeseriesItem, type HistoryQuery, type RateProvider, type TimeseriesItem } from '../answers/index.js';
import { drainSlices, slicedArrayBody, type SlicedBody } from './slices.js';

/** A history of more items than this is written a slice at a time (a shorter one in one piece). */
export const STREAM_MIN_ITEMS = 256;

/** Buckets per block of {@link BucketList}. */
const BLOCK = 4096;
/** Numbers kept per bucket: start, end, timeOpen, timeClose, open, high, low, close. */
const FIELDS = 8;

/**
 * What precedes each field of an item in JSON (the times quoted, so their closing quote starts
 * the next key); index {@link FIELDS} is the first key of the array's first item (no comma).
 */
const JSON_KEYS = [
  ',{"time_period_start":"',
  '","time_period_end":"',
  '","time_open":"',
  '","time_close":"',
  '","rate_open":',
  ',"rate_high":',
  ',"rate_low":',
  ',"rate_close":',
  '{"time_period_start":"',
].map((k) => Buffer.from(k, 'latin1'));

/** Bytes of one item's JSON at most, with room to spare (keys 129, times 4 x 28, numbers 4 x 24). */
const JSON_ITEM_MAX = 400;

/** Buckets in blocks of a Float64Array (the fields of {@link timeseriesItem}; `count` is not kept). */
export class BucketList {
  private readonly blocks: Float64Array[] = [];
  length = 0;

  push(b: OhlcBucket): void {
    const i = this.length % BLOCK;
    if (i === 0) this.blocks.push(new Float64Array(BLOCK * FIELDS));
    const a = this.blocks[this.blocks.length - 1];
    const o = i * FIELDS;
    a[o] = b.start;
    a[o + 1] = b.end;
    a[o + 2] = b.timeOpen;
    a[o + 3] = b.timeClose;
    a[o + 4] = b.open;
    a[o + 5] = b.high;
    a[o + 6] = b.low;
    a[o + 7] = b.close;
    this.length++;
  }

  /**
   * The JSON of the wire items of buckets [from, to), each preceded by a comma but the array's
   * first: the bytes of `JSON.stringify` of the items (rates as written: wireText), written
   * straight into a buffer (no objects, no concatenated strings for the garbage collector).
   */
  json(from: number, to: number): Buffer {
    const buf = Buffer.allocUnsafe((to - from) * JSON_ITEM_MAX);
    let at = 0;
    for (let k = from; k < to; k++) {
      const a = this.blocks[Math.floor(k / BLOCK)];
      const o = (k % BLOCK) * FIELDS;
      for (let f = 0; f < FIELDS; f++) {
        at += JSON_KEYS[k === 0 && f === 0 ? FIELDS : f].copy(buf, at);
        at += buf.write(f < 4 ? formatTime(a[o + f]) : wireText(a[o + f]), at, 'latin1');
      }
      buf[at++] = 0x7d; // }
    }
    return buf.subarray(0, at);
  }

  /** The wire items of buckets [from, to). */
  items(from: number, to: number): TimeseriesItem[] {
    const out: TimeseriesItem[] = [];
    for (let k = from; k < to; k++) {
      const a = this.blocks[Math.floor(k / BLOCK)];
      const o = (k % BLOCK) * FIELDS;
      out.push(
        timeseriesItem({
          start: a[o],
          end: a[o + 1],
          timeOpen: a[o + 2],
          timeClose: a[o + 3],
          open: a[o + 4],
          high: a[o + 5],
          low: a[o + 6],
          close: a[o + 7],
          count: 0,
        }),
      );
    }
    return out;
  }
}

/** A history read: its buckets, or (from a provider that reads them all at once) its items. */
export type HistoryData = BucketList | TimeseriesItem[];

/**
 * Reads a history a slice at a time ({@link RateProvider.historyBuckets}), or at once from a
 * provider without it.
 *
 * @param gone - whether the client has gone (then reading stops, and the promise rejects with slices.ts' ClientGone)
 */
export async function readHistory(
  provider: RateProvider,
  base: string,
  quote: string,
  q: HistoryQuery,
  gone: () => boolean,
): Promise<HistoryData> {
  if (!provider.historyBuckets) return provider.history(base, quote, q);
  const buckets = provider.historyBuckets(base, quote, q);
  const list = new BucketList();
  await drainSlices(buckets, (b) => list.push(b), gone);
  return list;
}

/** The body of a history in `format`: one piece when short, else a {@link SlicedBody}. */
export function historyBody(data: HistoryData, format: OutputFormat): { body: string | Buffer | SlicedBody; type: string } {
  const run =
    data instanceof BucketList ? (from: number, to: number) => data.items(from, to) : (from: number, to: number) => data.slice(from, to);
  if (data.length <= STREAM_MIN_ITEMS) return render('history', run(0, data.length), format);
  const pieces = historyPieces(format, data.length, run(0, 1)[0]);
  if (data instanceof BucketList && format.kind === 'json') {
    // JSON, the common case, straight from the buckets (no wire objects to make and stringify).
    const ends = { head: Buffer.from(pieces.head), tail: Buffer.from(pieces.tail) };
    return { body: slicedArrayBody(ends, data.length, (from, to) => data.json(from, to)), type: pieces.type };
  }
  return { body: slicedArrayBody(pieces, data.length, (from, to) => pieces.items(run(from, to), from)), type: pieces.type };
}
