/**
 * Output formats of the rate service: JSON (default), XML and CSV by `output_format`, MessagePack
 * by `Accept`, with every `csv_*` option of the interface (docs/service.md).
 *
 * - {@link negotiate}: which format a request asks for, and its CSV options.
 * - {@link render}: a payload's body and Content-Type in that format ({@link toCsv},
 *   {@link toXml}, {@link toMsgpack}).
 * - {@link historyPieces}: a long history answer in pieces, the same bytes as {@link render}.
 * - {@link formatTimeCustom}: the custom time formats of CSV.
 *
 * @module
 */
export { negotiate, prefersMsgpack, csvOptions, CONTENT_TYPES, type OutputFormat, type CsvOptions, type PayloadKind } from './negotiate.js';
export { formatTimeCustom, DEFAULT_TIME_FORMAT } from './time.js';
export { toCsv } from './csv.js';
export { toXml } from './xml.js';
export { render, toMsgpack } from './render.js';
export { historyPieces, type HistoryPieces } from './pieces.js';
