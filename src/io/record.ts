/**
 * Records of the CSV and SQLite readers.
 *
 * @module
 */
import type { SourceRecord } from './source.js';

/**
 * A CSV or SQLite record whose `raw` text (the record as JSON) is made only when asked for: it is
 * needed only for rejects, and serialising every row would cost more than parsing it.
 */
export class JsonRecord implements SourceRecord {
  constructor(
    readonly line: number,
    readonly record: Record<string, unknown>,
  ) {}

  get raw(): string {
    return JSON.stringify(this.record);
  }
}
