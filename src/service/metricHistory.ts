/**
 * Metric history answers of up to 100,000 items, from their buckets in columns
 * (core/metrics/timeseries.ts `metricTimeseriesColumns`): the wire items are made only when asked
 * for (XML, CSV, MessagePack, `xrate metrics`' tests), and the JSON is written straight from the
 * columns, a run of items at a time, no object per item; routeTable.ts sends it a slice at a time
 * when long, as history.ts does the exchange-rate history.
 *
 * @module
 */
import { METRIC_ITEM_FIELDS, type MetricBucketColumns } from '../core/metrics/timeseries.js';
import type { TimeUs } from '../core/types.js';
import type { JsonItems } from './routeTable.js';

/** How a time is written: ISO text, or a Unix timestamp with `time_format` (metrics.ts). */
export type TimeWriter = (us: TimeUs) => string | number;

/** Bytes of one item's JSON at most, with room to spare (keys 116, times 4 x 30, numbers 6 x 25: 386). */
const JSON_ITEM_MAX = 512;

/** Bytes of the buffers the runs of items are written into (a run takes a part of one). */
const POOL_BYTES = 1 << 16;

/** Items whose text is made before it is copied into the buffer (a longer text costs more to flatten). */
const FLUSH_EVERY = 128;

/** What precedes each field of an item in JSON; the first key opens the item. */
const [K0, K1, K2, K3, K4, K5, K6, K7, K8, K9] = METRIC_ITEM_FIELDS.map((name, f) => `${f === 0 ? '{' : ','}"${name}":`);

/** A number as JSON writes it. */
function num(v: number): string {
  return Number.isFinite(v) ? String(v) : 'null';
}

/** Whether character code `c` is a decimal digit. */
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * Whether a decimal text is the JSON of its own float (`String(Number(text)) === text`): in the
 * form an exact sum writes (no exponent, sign `+`, leading or trailing zeros; not `-0`), with at
 * most 15 significant digits (every integer digit counted), and `0` or at least 1e-6 in magnitude.
 * Two decimals of at most 15 significant digits never have the same float, so the shortest text
 * that reads back as the float, which JavaScript writes, has exactly these digits, and within
 * [1e-6, 1e21) it writes them without an exponent.
 *
 * @example
 * ```ts
 * isOwnJson('0.0123'); // true
 * isOwnJson('0.0000001'); // false: written 1e-7
 * ```
 */
export function isOwnJson(text: string): boolean {
  const n = text.length;
  let i = text.charCodeAt(0) === 45 ? 1 : 0; // -
  let digits = 0;
  if (text.charCodeAt(i) === 48) {
    // 0 or 0.fraction: at most 5 zeros before the first significant digit.
    if (i + 1 === n) return i === 0;
    if (text.charCodeAt(i + 1) !== 46) return false;
    i += 2;
    const zeros = i;
    while (i < n && text.charCodeAt(i) === 48) i++;
    if (i - zeros > 5) return false;
  } else {
    if (!isDigit(text.charCodeAt(i))) return false;
    while (i < n && isDigit(text.charCodeAt(i))) {
      i++;
      digits++;
    }
    if (i === n) return digits <= 15;
    if (text.charCodeAt(i) !== 46) return false;
    i++;
  }
  const fraction = i;
  while (i < n && isDigit(text.charCodeAt(i))) {
    i++;
    digits++;
  }
  return i === n && i > fraction && text.charCodeAt(n - 1) !== 48 && digits <= 15;
}

/**
 * The JSON of a time as `time` writes it (a string, quoted; a number), remembering the last two:
 * consecutive buckets share their times (a bucket's start is the previous one's end, and a point
 * alone in its bucket is its open and close time), so most are written once.
 */
function timeJson(time: TimeWriter): (us: TimeUs) => string {
  let us1 = Number.NaN;
  let us2 = Number.NaN;
  let text1 = '';
  let text2 = '';
  return (us) => {
    if (us === us1) return text1;
    if (us === us2) return text2;
    const t = time(us);
    // Times are ISO texts, digit strings or numbers: nothing to escape.
    const text = typeof t === 'string' ? `"${t}"` : num(t);
    // Reading a character has V8 join the text's pieces once (in place): else each of its up to
    // four copies in the items walks them again.
    text.charCodeAt(0);
    us2 = us1;
    text2 = text1;
    us1 = us;
    text1 = text;
    return text;
  };
}

/** The JSON of item `i` of `cols`, times written by `t` (a comma before it but the first). */
function itemJson(cols: MetricBucketColumns, i: number, t: (us: TimeUs) => string): string {
  const sum = cols.num(i, 9);
  const sumText = cols.sumText(i);
  // The sum's exact text is often its JSON, and a bucket of one point has that float throughout.
  const s = sumText !== undefined && isOwnJson(sumText) ? sumText : num(sum);
  const start = t(cols.num(i, 0));
  const end = t(cols.num(i, 1));
  const open = t(cols.num(i, 2));
  const close = t(cols.num(i, 3));
  const first = aggJson(cols.num(i, 4), sum, s);
  const last = aggJson(cols.num(i, 5), sum, s);
  const min = aggJson(cols.num(i, 6), sum, s);
  const max = aggJson(cols.num(i, 7), sum, s);
  const count = String(cols.num(i, 8));
  const times = `${K0}${start}${K1}${end}${K2}${open}${K3}${close}`;
  return `${i > 0 ? ',' : ''}${times}${K4}${first}${K5}${last}${K6}${min}${K7}${max}${K8}${count}${K9}${s}}`;
}

/** The JSON of an aggregate: that of the sum (`sumJson`) when it is the same float. */
function aggJson(v: number, sum: number, sumJson: string): string {
  return v === sum ? sumJson : num(v);
}

/**
 * The JSON of the wire items of `cols`, times written by `time`: the bytes of `JSON.stringify` of
 * the items ({@link MetricBucketColumns.item}), a run at a time.
 *
 * @example
 * ```ts
 * const j = metricHistoryJson(cols, formatTime);
 * `[${j.json(0, j.length)}]` === JSON.stringify(items); // true
 * ```
 */
export function metricHistoryJson(cols: MetricBucketColumns, time: TimeWriter): JsonItems {
  if (cols.length > 0) {
    // A time that cannot be written (RangeError) fails now, not once the body is under way: the
    // first start and the last end bound every other time.
    time(cols.num(0, 0));
    time(cols.num(cols.length - 1, 1));
  }
  const t = timeJson(time);
  let pool = Buffer.alloc(0);
  let used = 0;
  return {
    length: cols.length,
    json(from, to) {
      const room = (to - from) * JSON_ITEM_MAX;
      if (pool.length - used < room) {
        pool = Buffer.allocUnsafe(Math.max(POOL_BYTES, room));
        used = 0;
      }
      const start = used;
      let text = '';
      for (let i = from; i < to; i++) {
        text += itemJson(cols, i, t);
        if ((i - from) % FLUSH_EVERY === FLUSH_EVERY - 1) {
          used += pool.write(text, used, 'latin1');
          text = '';
        }
      }
      used += pool.write(text, used, 'latin1');
      return pool.subarray(start, used);
    },
  };
}
