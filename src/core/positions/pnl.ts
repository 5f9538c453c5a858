/**
 * Unrealized P&L of a position at xrate's own rate (docs/methodology.md section 11), and the base
 * and quote assets of a position's symbol it needs.
 *
 * @module
 */
import { parseSymbolId } from '../symbols.js';
import type { AccountPositions, BookPosition } from './book.js';
import type { PositionSide } from './events.js';

/**
 * The base and quote of a position's symbol: from its symbol_id's pattern (`BINANCE_SPOT_BTC_USDT`,
 * `BITMEX_PERP_BTC_USD`, ...), else from the `symbol` record of that id (`known`), else none.
 *
 * Why: docs/methodology.md section 11 (the symbol's base/quote come from symbol_id, else from its
 * `symbol` record).
 *
 * @param symbolId - the position's symbol_id, if it has one
 * @param known - the base and quote a `symbol` event declared for an id, if any
 *
 * @example
 * ```ts
 * positionAssets('BINANCE_SPOT_BTC_USDT', () => undefined); // { base: 'BTC', quote: 'USDT' }
 * positionAssets(undefined, () => undefined);               // undefined
 * ```
 */
export function positionAssets(
  symbolId: string | undefined,
  known: (symbolId: string) => { base: string; quote: string } | undefined,
): { base: string; quote: string } | undefined {
  if (symbolId === undefined) return undefined;
  const info = parseSymbolId(symbolId);
  if (info?.assetIdBase !== undefined && info.assetIdQuote !== undefined) return { base: info.assetIdBase, quote: info.assetIdQuote };
  return known(symbolId);
}

/**
 * unrealized_pnl = (m - avg_entry_price) × quantity × s, s = +1 for BUY and -1 for SELL, in the
 * quote asset of the position's symbol; undefined when the result is not finite.
 *
 * Why: docs/methodology.md section 11.
 *
 * @param m - rate(base, quote) of the position's symbol at the tick
 *
 * @example
 * ```ts
 * unrealizedPnl(60000, 0.5, 'BUY', 62000);  // 1000
 * unrealizedPnl(60000, 0.5, 'SELL', 62000); // -1000
 * ```
 */
export function unrealizedPnl(avgEntryPrice: number, quantity: number, side: PositionSide, m: number): number | undefined {
  const s = side === 'BUY' ? 1 : -1;
  const pnl = (m - avgEntryPrice) * quantity * s;
  return Number.isFinite(pnl) ? pnl : undefined;
}

/**
 * A position valued at a tick: its snapshot, and its unrealized P&L when its symbol had a rate.
 *
 * @example
 * ```ts
 * const v: ValuedPosition = { position, unrealizedPnl: 1000 };
 * ```
 */
export interface ValuedPosition {
  readonly position: BookPosition;
  /** Absent when the symbol's base/quote are unknown or rate(base, quote) has no value at the tick. */
  readonly unrealizedPnl?: number;
}

/**
 * The open positions of some accounts valued with `rate` (rate(base, quote) at the tick, undefined
 * when there is none): a position without a rate has no P&L, never a wrong one.
 *
 * @example
 * ```ts
 * valuePositions(book.open(), (b, q) => engine.rate(b, q)?.rate);
 * ```
 */
export function valuePositions(
  accounts: readonly AccountPositions[],
  rate: (base: string, quote: string) => number | undefined,
): { account: string; exchangeId: string; positions: ValuedPosition[] }[] {
  return accounts.map((a) => ({
    account: a.account,
    exchangeId: a.exchangeId,
    positions: a.positions.map((p) => {
      const m = p.base !== undefined && p.quote !== undefined ? rate(p.base, p.quote) : undefined;
      const e = p.event;
      const pnl = m === undefined ? undefined : unrealizedPnl(e.avgEntryPrice.value, e.quantity.value, e.side, m);
      return pnl === undefined ? { position: p } : { position: p, unrealizedPnl: pnl };
    }),
  }));
}
