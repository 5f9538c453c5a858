/**
 * Test helper: a log's events exported as vendor files (CoinAPI flat files, tardis CSV), with the
 * NDJSON log they stand for, so that replaying each gives the same outputs.
 *
 * - The events are the log's valid ones, normalised to what both vendor files can carry: values as
 *   text, `taker_side` one of BUY, SELL, UNKNOWN (absent and the `_ESTIMATED` sides mapped), every
 *   market declared by a `symbol` event with a `symbol_id_exchange` (added where the log has none;
 *   a market used before its declaration gets one just before its first use).
 * - Quotes and trades go to the vendor files; every other event (exchange, symbol, metric ...) to a
 *   metadata NDJSON file that is given first, as the vendor files cannot carry them.
 * - The NDJSON log is in the order a merge reads the metadata file and the vendor tree: a stable
 *   sort by (time, input, line) (src/io/merge.ts), without the events the engine rejects in that
 *   order (a rejected event changes nothing), so that no reject differs by file and line.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createEngine } from '../../src/core/engine.js';
import { parseEvent } from '../../src/core/events.js';
import { parseSymbolId } from '../../src/core/symbols.js';
import { formatTime } from '../../src/core/time.js';
import { isReject } from '../../src/core/types.js';
import { comparePaths } from '../../src/io/inputs.js';

/** Options of {@link exportVendor}. */
export interface ExportOptions {
  vendor: 'coinapi' | 'tardis';
  /** Which vendor time column holds the event's time (the other is off by 1.5 ms). Default receive. */
  time?: 'receive' | 'exchange';
  /** gzip the vendor files (`.csv.gz`). */
  gzip?: boolean;
  /** CoinAPI: the delimiter (default `;`). */
  delimiter?: ';' | ',';
  /** CoinAPI: times of day (`HH:mm:ss.fffffff`, the date from the D- folder) instead of ISO times. */
  timeOfDay?: boolean;
  /** CoinAPI quotes: lead with an `id_site_coinapi` column. */
  idSite?: boolean;
}

/** What {@link exportVendor} wrote. */
export interface Exported {
  /** The NDJSON log the export stands for. */
  ndjson: string;
  /** The metadata NDJSON file (give it first). */
  meta: string;
  /** The vendor tree (a directory). */
  tree: string;
  /** Vendor files written, relative to `tree`, in path order. */
  files: string[];
  /** Events in the NDJSON log. */
  events: number;
}

interface Item {
  rec: Record<string, unknown>;
  time: number;
  seq: number;
  /** The vendor file (relative path), or undefined for the metadata file. */
  file?: string;
  /** The row of that file (without the line ending). */
  row?: string;
}

const SIDES: Record<string, string> = { BUY: 'BUY', SELL: 'SELL', BUY_ESTIMATED: 'BUY', SELL_ESTIMATED: 'SELL', UNKNOWN: 'UNKNOWN' };
const SHIFT_US = 1500;

/** `YYYY-MM-DD` of a time, µs. */
function dayOf(us: number): string {
  return formatTime(us).slice(0, 10);
}

/**
 * Exports the NDJSON `lines` of a log into `dir` (see the module description): `dir/log.ndjson`,
 * `dir/meta.ndjson` and the vendor tree `dir/tree/`.
 */
export function exportVendor(lines: Iterable<string>, dir: string, opts: ExportOptions): Exported {
  const items: Item[] = [];
  let seq = 0;
  // Markets: declared symbol_id → its exchange and exchange symbol.
  const declared = new Map<string, { exchange: string; symbol: string }>();
  const exchangeSymbol = (symbolId: string, exchange: string): string => symbolId.slice(exchange.length + 1) || symbolId;
  for (const line of lines) {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line);
    } catch {
      continue;
    }
    const ev = parseEvent(rec);
    if (isReject(ev)) continue;
    const norm: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(rec))
      if (v !== null && v !== undefined && v !== '') norm[k] = typeof v === 'number' ? String(v) : v;
    norm.type = ev.type;
    norm.time = formatTime(ev.time);
    if (ev.type === 'symbol') {
      if (norm.symbol_id_exchange === undefined) norm.symbol_id_exchange = exchangeSymbol(ev.symbolId, ev.exchangeId);
      declared.set(ev.symbolId, { exchange: ev.exchangeId, symbol: String(norm.symbol_id_exchange) });
    }
    if (ev.type === 'quote' || ev.type === 'trade') {
      if (!declared.has(ev.symbolId)) {
        // Declared here, just before its first use, from its id.
        const info = parseSymbolId(ev.symbolId);
        if (info?.exchangeId === undefined || info.assetIdBase === undefined || info.assetIdQuote === undefined) continue;
        const symbol = exchangeSymbol(ev.symbolId, info.exchangeId);
        declared.set(ev.symbolId, { exchange: info.exchangeId, symbol });
        items.push({
          rec: {
            type: 'symbol',
            time: norm.time,
            symbol_id: ev.symbolId,
            exchange_id: info.exchangeId,
            symbol_type: info.symbolType,
            asset_id_base: info.assetIdBase,
            asset_id_quote: info.assetIdQuote,
            symbol_id_exchange: symbol,
          },
          time: ev.time,
          seq: seq++,
        });
      }
      if (ev.type === 'trade') norm.taker_side = SIDES[ev.takerSide ?? 'UNKNOWN'];
      const m = declared.get(ev.symbolId)!;
      const item: Item = { rec: norm, time: ev.time, seq: seq++ };
      writeRow(item, ev.symbolId, m, opts);
      items.push(item);
      continue;
    }
    items.push({ rec: norm, time: ev.time, seq: seq++ });
  }

  // The merge's order: metadata file first, then the vendor files in path order.
  const files = [...new Set(items.filter((i) => i.file !== undefined).map((i) => i.file!))].sort(comparePaths);
  const inputOf = new Map(files.map((f, k) => [f, k + 1]));
  const input = (i: Item): number => (i.file === undefined ? 0 : inputOf.get(i.file)!);
  items.sort((a, b) => a.time - b.time || input(a) - input(b) || a.seq - b.seq);

  // Leave out what the engine rejects in that order (it changes nothing).
  const engine = createEngine({});
  const kept = items.filter((i) => {
    const ev = parseEvent(i.rec);
    return !isReject(ev) && engine.apply(ev) === undefined;
  });

  const tree = join(dir, 'tree');
  const byFile = new Map<string, string[]>();
  const meta: string[] = [];
  for (const i of kept) {
    if (i.file === undefined) meta.push(JSON.stringify(i.rec));
    else {
      const rows = byFile.get(i.file) ?? [];
      if (rows.length === 0) byFile.set(i.file, rows);
      rows.push(i.row!);
    }
  }
  const eol = opts.vendor === 'coinapi' ? '\r\n' : '\n';
  for (const [file, rows] of byFile) {
    const path = join(tree, file);
    mkdirSync(dirname(path), { recursive: true });
    const text = `${headerOf(file, opts)}${eol}${rows.join(eol)}${eol}`;
    writeFileSync(path, opts.gzip ? gzipSync(text) : text);
  }
  const ndjson = join(dir, 'log.ndjson');
  writeFileSync(ndjson, `${kept.map((i) => JSON.stringify(i.rec)).join('\n')}\n`);
  const metaPath = join(dir, 'meta.ndjson');
  writeFileSync(metaPath, meta.length > 0 ? `${meta.join('\n')}\n` : '');
  return { ndjson, meta: metaPath, tree, files: [...byFile.keys()].sort(comparePaths), events: kept.length };
}

function headerOf(file: string, opts: ExportOptions): string {
  const quotes = file.includes('QUOTES') || file.includes('/quotes/');
  if (opts.vendor === 'tardis') {
    return quotes
      ? 'exchange,symbol,timestamp,local_timestamp,ask_amount,ask_price,bid_price,bid_amount'
      : 'exchange,symbol,timestamp,local_timestamp,id,side,price,amount';
  }
  const d = opts.delimiter ?? ';';
  const cols = quotes
    ? [...(opts.idSite ? ['id_site_coinapi'] : []), 'time_exchange', 'time_coinapi', 'ask_px', 'ask_sx', 'bid_px', 'bid_sx']
    : ['time_exchange', 'time_coinapi', 'guid', 'price', 'base_amount', 'taker_side'];
  return cols.join(d);
}

/** Sets the item's vendor file and row. */
function writeRow(item: Item, symbolId: string, m: { exchange: string; symbol: string }, opts: ExportOptions): void {
  const r = item.rec;
  const t = item.time;
  const receive = opts.time === 'exchange' ? t + SHIFT_US : t;
  const exchange = opts.time === 'exchange' ? t : t - SHIFT_US;
  const quote = r.type === 'quote';
  const day = dayOf(t);
  if (opts.vendor === 'tardis') {
    const ex = m.exchange.toLowerCase();
    item.file = `${ex}/${quote ? 'quotes' : 'trades'}/${day}.csv${opts.gzip ? '.gz' : ''}`;
    item.row = quote
      ? [ex, m.symbol, exchange, receive, r.ask_size, r.ask_price, r.bid_price, r.bid_size].join(',')
      : [ex, m.symbol, exchange, receive, `t${item.seq}`, String(r.taker_side).toLowerCase(), r.price, r.size].join(',');
    return;
  }
  const d = opts.delimiter ?? ';';
  // A 7th fractional digit (100 ns), which xrate truncates to the µs.
  const time = (us: number): string => {
    const iso = `${formatTime(us).slice(0, 26)}${item.seq % 10}Z`;
    return opts.timeOfDay ? iso.slice(11, 27) : iso;
  };
  const dir = `T-${quote ? 'QUOTES' : 'TRADES'}/D-${day.replaceAll('-', '')}/E-${m.exchange}`;
  item.file = `${dir}/IDDI-${symbolId.length}+SC-${symbolId}+S-${m.symbol}.csv${opts.gzip ? '.gz' : ''}`;
  item.row = quote
    ? [
        ...(opts.idSite ? ['5b0c7d2e-0000-4000-8000-000000000001'] : []),
        time(exchange),
        time(receive),
        r.ask_price,
        r.ask_size,
        r.bid_price,
        r.bid_size,
      ].join(d)
    : [time(exchange), time(receive), `g${item.seq}`, r.price, r.size, r.taker_side].join(d);
}
