/**
 * The answers' "no data" error: the asked item has no data (an unknown asset, no rate at that
 * time, no stored history, a database another replay is writing). An {@link XrateError} of code
 * `no_data` whose message says why; the services answer it as status 550 with the interface's
 * wording before that message (src/http/errors.ts).
 *
 * @module
 */
import { XrateError } from '../core/errors.js';

/**
 * The error of an item without data; `detail` says why.
 *
 * @example
 * ```ts
 * throw noDataError('no rate for FOO/USD at 2024-03-01T05:00:00.0000000Z: unknown asset "FOO"');
 * ```
 */
export function noDataError(detail: string): XrateError {
  return new XrateError('no_data', detail);
}
