/**
 * The outputs of `xrate replay --out FILE.parquet` (docs/cli.md): the rate changes in FILE.parquet
 * (the fields of the NDJSON `--out`, rates as the engine's float64, times as TIMESTAMP(µs, UTC)),
 * and, with tracked pairs, the OHLC buckets of the stored periods in FILE.ohlc.parquet, each
 * bucket once, as it ends (the rows the database's `ohlc` table keeps).
 *
 * @module
 */
import type { PairRateChange } from '../core/engine.js';
import type { OhlcBucket } from '../core/ohlc.js';
import type { SchemaElementLike } from './parquetSchema.js';
import { ParquetFile, ROW_GROUP_ROWS } from './parquetWrite.js';

const ts = (name: string, required = true): SchemaElementLike => ({
  name,
  type: 'INT64',
  repetition_type: required ? 'REQUIRED' : 'OPTIONAL',
  logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
});
const text = (name: string): SchemaElementLike => ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' });
const dbl = (name: string, required = true): SchemaElementLike => ({
  name,
  type: 'DOUBLE',
  repetition_type: required ? 'REQUIRED' : 'OPTIONAL',
});

/** Columns of the rate-change file (the NDJSON --out's fields, in its order). */
export const RATE_PARQUET_COLUMNS: readonly SchemaElementLike[] = [
  ts('tick'),
  text('asset_id_base'),
  text('asset_id_quote'),
  dbl('rate', false),
  ts('time', false),
  dbl('rank', false),
  { name: 'used', type: 'INT32', repetition_type: 'REQUIRED' },
  { name: 'fresh', type: 'INT32', repetition_type: 'REQUIRED' },
];

/** Columns of the OHLC file. */
export const OHLC_PARQUET_COLUMNS: readonly SchemaElementLike[] = [
  text('asset_id_base'),
  text('asset_id_quote'),
  text('period_id'),
  ts('time_period_start'),
  ts('time_period_end'),
  ts('time_open'),
  ts('time_close'),
  dbl('rate_open'),
  dbl('rate_high'),
  dbl('rate_low'),
  dbl('rate_close'),
  { name: 'count', type: 'INT64', repetition_type: 'REQUIRED' },
];

/** The OHLC file beside a rate-change file: `X.parquet` → `X.ohlc.parquet`. */
export function ohlcPathOf(path: string): string {
  return `${path.replace(/\.parquet$/i, '')}.ohlc.parquet`;
}

/** Rows of a file, buffered by column and written a row group at a time. */
class Columns {
  private cols: unknown[][];
  readonly file: ParquetFile;

  constructor(
    path: string,
    private readonly columns: readonly SchemaElementLike[],
    kind: string,
  ) {
    this.file = new ParquetFile(path, columns, [{ key: 'xrate.kind', value: kind }]);
    this.cols = columns.map(() => []);
  }

  push(values: unknown[]): void {
    for (let k = 0; k < values.length; k++) this.cols[k].push(values[k]);
    if (this.cols[0].length >= ROW_GROUP_ROWS) this.flush();
  }

  private flush(): void {
    if (this.cols[0].length === 0) return;
    this.file.writeGroup(this.cols);
    this.cols = this.columns.map(() => []);
  }

  finish(): void {
    this.flush();
    this.file.finish();
  }
}

const big = (us: number | null): bigint | null => (us === null ? null : BigInt(us));

/**
 * Writes the rate changes of a replay to `path` and its OHLC buckets to {@link ohlcPathOf}
 * (created with the first bucket).
 */
export class ParquetRateWriter {
  private readonly rates: Columns;
  private ohlc: Columns | undefined;
  /** The latest bucket of each pair and period, written when the next one starts or at the end. */
  private readonly open = new Map<string, { base: string; quote: string; period: string; b: OhlcBucket }>();

  constructor(readonly path: string) {
    this.rates = new Columns(path, RATE_PARQUET_COLUMNS, 'rates/1');
  }

  /** One rate change. */
  write(c: PairRateChange): void {
    this.rates.push([BigInt(c.tick), c.base, c.quote, c.rate, big(c.time), c.rank, c.used, c.fresh ? 1 : 0]);
  }

  /** One state of a bucket of a tracked pair (a bucket is given again each time it changes). */
  bucket(base: string, quote: string, period: string, b: OhlcBucket): void {
    const key = `${base}\u0000${quote}\u0000${period}`;
    const was = this.open.get(key);
    if (was !== undefined && was.b.start !== b.start) this.writeBucket(was);
    this.open.set(key, { base, quote, period, b: { ...b } });
  }

  private writeBucket(x: { base: string; quote: string; period: string; b: OhlcBucket }): void {
    this.ohlc ??= new Columns(ohlcPathOf(this.path), OHLC_PARQUET_COLUMNS, 'ohlc/1');
    const b = x.b;
    this.ohlc.push([
      x.base,
      x.quote,
      x.period,
      BigInt(b.start),
      BigInt(b.end),
      BigInt(b.timeOpen),
      BigInt(b.timeClose),
      b.open,
      b.high,
      b.low,
      b.close,
      BigInt(b.count),
    ]);
  }

  /** Writes what is left and the footers. */
  finish(): void {
    for (const x of this.open.values()) this.writeBucket(x);
    this.open.clear();
    this.rates.finish();
    this.ohlc?.finish();
  }
}
