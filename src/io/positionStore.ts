/**
 * The stored positions of the replay database (docs/methodology.md section 11): one row per
 * accepted `position` and `connectivity` event, written by the replay in the transaction of the
 * batch that read it, and the book they give as of any time.
 *
 * `positions` keeps each snapshot with its account id and that account's exchange, the base and
 * quote of its symbol as the engine knew them when it applied it, its decimals as their exact
 * texts, `raw_data` as JSON text, its time (µs) and `seq`, its position among the replay's
 * position and connectivity events (log order). `connectivity` keeps each reachability change.
 * Both carry `batch`, like every output row, so a resume drops what later batches wrote.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { parseDec } from '../core/decimal.js';
import { PositionBook } from '../core/positions/book.js';
import { splitAccount, type PositionEvent, type PositionSide } from '../core/positions/events.js';
import type { Dec, TimeUs } from '../core/types.js';
import type { RowSinkMaker } from './rowJob.js';
import type { PositionHistory, PositionRowWriters } from './storeTypes.js';

/** The tables, created with the rest of the schema (store.ts). */
export const POSITION_SCHEMA = `
CREATE TABLE IF NOT EXISTS positions (
  account TEXT NOT NULL, exchange_id TEXT NOT NULL, symbol_id_exchange TEXT NOT NULL, symbol_id TEXT,
  base TEXT, quote TEXT, avg_entry_price TEXT NOT NULL, quantity TEXT NOT NULL, side TEXT NOT NULL,
  leverage TEXT, cross_margin INTEGER, liquidation_price TEXT, raw_data TEXT,
  time INTEGER NOT NULL, seq INTEGER NOT NULL, batch INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS positions_time ON positions(time, seq);
CREATE TABLE IF NOT EXISTS connectivity (
  exchange_id TEXT NOT NULL, reachable INTEGER NOT NULL, time INTEGER NOT NULL, seq INTEGER NOT NULL, batch INTEGER NOT NULL
);
`;

/** The output tables of this module (cleared and truncated with the others). */
export const POSITION_TABLES = ['positions', 'connectivity'] as const;

/** The columns of a `positions` row, without `batch` (the merge copies them). */
export const POSITION_COLUMNS =
  'account, exchange_id, symbol_id_exchange, symbol_id, base, quote, avg_entry_price, quantity, side, leverage, cross_margin, liquidation_price, raw_data, time';

/** The columns of a `connectivity` row, without `seq` and `batch`. */
export const CONNECTIVITY_COLUMNS = 'exchange_id, reachable, time';

/**
 * Writers of position rows (call inside the batch's transaction).
 *
 * @example
 * ```ts
 * const w = positionWriters((sql) => { const s = db.prepare(sql); return s.run.bind(s); });
 * w.position(event, { base: 'BTC', quote: 'USDT' }, 1, batch);
 * ```
 */
export function positionWriters(make: RowSinkMaker): PositionRowWriters {
  const pos = make(`INSERT INTO positions(${POSITION_COLUMNS}, seq, batch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const con = make(`INSERT INTO connectivity(${CONNECTIVITY_COLUMNS}, seq, batch) VALUES (?, ?, ?, ?, ?)`);
  return {
    position: (e, assets, seq, batch) => {
      const a = splitAccount(e.account);
      pos(
        e.account,
        typeof a === 'string' ? e.account : a.exchangeId,
        e.symbolIdExchange,
        e.symbolId ?? null,
        assets?.base ?? null,
        assets?.quote ?? null,
        e.avgEntryPrice.text,
        e.quantity.text,
        e.side,
        e.leverage?.text ?? null,
        e.crossMargin === undefined ? null : e.crossMargin ? 1 : 0,
        e.liquidationPrice?.text ?? null,
        e.rawData === undefined ? null : JSON.stringify(e.rawData),
        e.time,
        seq,
        batch,
      );
    },
    connectivity: (e, seq, batch) => con(e.exchangeId, e.reachable ? 1 : 0, e.time, seq, batch),
  };
}

/** A `positions` row as read. */
interface PositionRow {
  account: string;
  symbol_id_exchange: string;
  symbol_id: string | null;
  base: string | null;
  quote: string | null;
  avg_entry_price: string;
  quantity: string;
  side: string;
  leverage: string | null;
  cross_margin: number | null;
  liquidation_price: string | null;
  raw_data: string | null;
  time: number;
}

/** A stored decimal text back to its {@link Dec} (written from one, so it parses). */
function dec(text: string): Dec {
  return parseDec(text) ?? { value: Number.NaN, text };
}

/** The event a row was written from. */
function eventOf(r: PositionRow): PositionEvent {
  const e: { -readonly [K in keyof PositionEvent]: PositionEvent[K] } = {
    type: 'position',
    time: r.time,
    account: r.account,
    symbolIdExchange: r.symbol_id_exchange,
    avgEntryPrice: dec(r.avg_entry_price),
    quantity: dec(r.quantity),
    side: r.side as PositionSide,
  };
  if (r.symbol_id !== null) e.symbolId = r.symbol_id;
  if (r.leverage !== null) e.leverage = dec(r.leverage);
  if (r.cross_margin !== null) e.crossMargin = r.cross_margin === 1;
  if (r.liquidation_price !== null) e.liquidationPrice = dec(r.liquidation_price);
  if (r.raw_data !== null) e.rawData = JSON.parse(r.raw_data) as unknown;
  return e;
}

/**
 * The stored positions of a replay database, read back as of a time.
 *
 * @example
 * ```ts
 * const book = new StoredPositions(db).bookAt(tick);
 * book.open('BINANCE');
 * ```
 */
export class StoredPositions implements PositionHistory {
  private readonly present: boolean;

  constructor(private readonly db: Database.Database) {
    // A database written before positions were stored has no such tables: an empty book.
    this.present = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'positions'`).get() !== undefined;
  }

  /**
   * The book as of `at` (µs): every stored event with time <= `at` (every one without `at`)
   * applied in log order, the same reducer the engine runs.
   */
  bookAt(at?: TimeUs): PositionBook {
    const book = new PositionBook();
    if (!this.present) return book;
    const until = at === undefined ? '' : 'WHERE time <= ?';
    const args = at === undefined ? [] : [at];
    const rows = this.db
      .prepare(`SELECT ${POSITION_COLUMNS} FROM positions ${until} ORDER BY seq`)
      .iterate(...args) as Iterable<PositionRow>;
    for (const r of rows) {
      book.apply(eventOf(r), r.base !== null && r.quote !== null ? { base: r.base, quote: r.quote } : undefined);
    }
    const cons = this.db.prepare(`SELECT ${CONNECTIVITY_COLUMNS} FROM connectivity ${until} ORDER BY seq`).iterate(...args) as Iterable<{
      exchange_id: string;
      reachable: number;
      time: number;
    }>;
    for (const c of cons)
      book.applyConnectivity({ type: 'connectivity', time: c.time, exchangeId: c.exchange_id, reachable: c.reachable === 1 });
    return book;
  }

  /** Rows stored (positions and connectivity changes). */
  count(): number {
    if (!this.present) return 0;
    const n = (t: string): number => (this.db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
    return n('positions') + n('connectivity');
  }
}
