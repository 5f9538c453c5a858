/**
 * File sinks for rate changes: NDJSON (one JSON object per line), CSV (header row, `,`
 * delimiter, RFC 4180 quoting where needed) or Parquet (parquetRates.ts, with the OHLC buckets of
 * tracked pairs beside it). Lines are built by hand in a fixed field order so
 * that the same replay always writes the same bytes. Rates are written rounded to at most 15
 * significant digits (wireText, docs/methodology.md section 7).
 *
 * @module
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import type { PairRateChange } from '../core/engine.js';
import type { OhlcBucket } from '../core/ohlc.js';
import { ParquetRateWriter } from './parquetRates.js';
import { formatTime } from '../core/time.js';
import { wireText } from '../core/wire.js';
import { STRING_WINDOW } from './textStream.js';

/** Columns of a rate-change record, in output order. */
export const RATE_COLUMNS = ['tick', 'asset_id_base', 'asset_id_quote', 'rate', 'time', 'rank', 'used', 'fresh'] as const;

function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** Formats one change as an NDJSON line (with newline). */
export function rateChangeToNdjson(c: PairRateChange): string {
  return (
    `{"tick":"${formatTime(c.tick)}","asset_id_base":${JSON.stringify(c.base)},"asset_id_quote":${JSON.stringify(c.quote)},` +
    `"rate":${c.rate === null ? 'null' : wireText(c.rate)},"time":${c.time === null ? 'null' : `"${formatTime(c.time)}"`},` +
    `"rank":${c.rank === null ? 'null' : JSON.stringify(c.rank)},"used":${c.used},"fresh":${c.fresh}}\n`
  );
}

/** Formats one change as a CSV line (with newline). */
export function rateChangeToCsv(c: PairRateChange): string {
  return `${[
    formatTime(c.tick),
    csvField(c.base),
    csvField(c.quote),
    c.rate === null || !Number.isFinite(c.rate) ? '' : wireText(c.rate),
    c.time === null ? '' : formatTime(c.time),
    c.rank === null ? '' : String(c.rank),
    String(c.used),
    c.fresh ? 'true' : 'false',
  ].join(',')}\n`;
}

/**
 * The lines a text output gathers before they are joined and written, in characters: a string
 * below V8's large-object size (textStream.ts `STRING_WINDOW`; 1 MiB before: the dense bench log's
 * replay with `--out` took 2.22-2.31 s against 2.11-2.20 s).
 */
const FLUSH_CHARS = STRING_WINDOW;

/**
 * Buffered writer of rate changes to `path` (format from the extension: .csv, .parquet, else
 * NDJSON).
 *
 * @example
 * ```ts
 * const w = new RateFileWriter('out/rates.ndjson');
 * w.write(change); await w.close();
 * ```
 */
export class RateFileWriter {
  private readonly stream: WriteStream | undefined;
  private readonly parquet: ParquetRateWriter | undefined;
  private buf: string[] = [];
  private bytes = 0;
  /** The stream's buffer is full: wait for {@link drained} before writing much more. */
  private full = false;
  readonly format: 'ndjson' | 'csv' | 'parquet';

  constructor(readonly path: string) {
    const p = path.toLowerCase();
    this.format = p.endsWith('.csv') ? 'csv' : p.endsWith('.parquet') ? 'parquet' : 'ndjson';
    if (this.format === 'parquet') {
      this.parquet = new ParquetRateWriter(path);
      return;
    }
    this.stream = createWriteStream(path);
    if (this.format === 'csv') this.buf.push(`${RATE_COLUMNS.join(',')}\n`);
  }

  write(c: PairRateChange): void {
    if (this.parquet) {
      this.parquet.write(c);
      return;
    }
    const line = this.format === 'csv' ? rateChangeToCsv(c) : rateChangeToNdjson(c);
    this.buf.push(line);
    this.bytes += line.length;
    if (this.bytes > FLUSH_CHARS) this.flushBuffer();
  }

  /**
   * One state of an OHLC bucket of a tracked pair: written to the Parquet output's OHLC file (the
   * NDJSON and CSV outputs hold rate changes only).
   */
  bucket(base: string, quote: string, periodId: string, b: OhlcBucket): void {
    this.parquet?.bucket(base, quote, periodId, b);
  }

  private flushBuffer(): void {
    if (this.buf.length && !this.stream!.write(this.buf.join(''))) this.full = true;
    this.buf = [];
    this.bytes = 0;
  }

  /**
   * Resolves once the file has taken what was written (at once when it keeps up): a replay waits
   * for it between batches, so memory stays bounded when rate changes come faster than the disk
   * takes them.
   */
  drained(): Promise<void> {
    // The file may have taken it all since it was full: its 'drain' came before this was asked.
    if (!this.full || !this.stream!.writableNeedDrain) {
      this.full = false;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const done = (e?: Error): void => {
        this.stream!.off('drain', done);
        this.stream!.off('error', done);
        this.full = false;
        if (e) reject(e);
        else resolve();
      };
      this.stream!.once('drain', done);
      this.stream!.once('error', done);
    });
  }

  /** Flushes and closes the file. */
  close(): Promise<void> {
    if (this.parquet) {
      this.parquet.finish();
      return Promise.resolve();
    }
    this.flushBuffer();
    const stream = this.stream!;
    return new Promise((resolve, reject) => {
      stream.once('error', reject);
      stream.end(() => resolve());
    });
  }
}
