/**
 * Applying one event to the engine's state (docs/methodology.md sections 1-2): symbols and
 * exchanges update the tables, quotes pass rule 5 and are staged for the next tick, trades feed
 * the volume window (rule 8). The ticks before the event have already been computed.
 *
 * @module
 */
import { spreadAccepted } from '../quoteFilter.js';
import type { ExchangeEvent, QuoteEvent, Reject, RejectReason, SymbolEvent, TradeEvent } from '../types.js';
import type { EngineState } from './state.js';

/** A reject record (`field` only when given). */
export function reject(reason: RejectReason, message: string, field?: string): Reject {
  return field === undefined ? { kind: 'reject', reason, message } : { kind: 'reject', reason, message, field };
}

/** A symbol event: defines or redefines its market. */
export function applySymbol(s: EngineState, e: SymbolEvent): undefined {
  s.stats.events.symbol++;
  const m = s.defineMarket(e.symbolId, e.exchangeId, e.symbolType, e.assetIdBase, e.assetIdQuote);
  s.symbolRecords.onSymbol(m, e, s.lastTick);
  return undefined;
}

/** An exchange event: staged, committed at the next tick (rules 4, 9). */
export function applyExchange(s: EngineState, e: ExchangeEvent): undefined {
  s.stats.events.exchange++;
  const x = s.exchanges.ensure(e.exchangeId);
  s.exchanges.stage(x, e.legitimate, e.rank);
  return undefined;
}

/** The reject of a quote or trade whose market is not known. */
export function unknownSymbol(s: EngineState, type: 'quote' | 'trade', symbolId: string): Reject {
  return s.countReject(
    reject(
      'unknown_symbol',
      `${type} for unknown symbol "${symbolId}" (no symbol event, and the id matches no known pattern)`,
      'symbol_id',
    ),
  );
}

/** A quote: rule 5 discards it (the market keeps its last accepted quote) or it is staged for the next tick. */
export function applyQuote(s: EngineState, e: QuoteEvent, known?: number): Reject | undefined {
  const m = known ?? s.marketFor(e.symbolId);
  if (m === undefined) return unknownSymbol(s, 'quote', e.symbolId);
  s.stats.events.quote++;
  s.symbolRecords.onQuote(m, e.time);
  if (s.listener.onOwnMetrics !== undefined) s.ownMetrics.noteQuote(m, e.bidPrice.value, e.askPrice.value);
  if (!spreadAccepted(e.bidPrice, e.askPrice, s.config.maxSpreadText, s.config.maxSpreadValue)) {
    s.stats.quotesDiscarded++;
    s.markets.discardedAt[m] = e.time;
    return undefined;
  }
  s.markets.stage(m, e);
  return undefined;
}

/** A trade: its size goes into the market's volume window (rule 8). */
export function applyTrade(s: EngineState, e: TradeEvent, known?: number): Reject | undefined {
  const m = known ?? s.marketFor(e.symbolId);
  if (m === undefined) return unknownSymbol(s, 'trade', e.symbolId);
  s.stats.events.trade++;
  s.symbolRecords.onTrade(m, e.time, e.price, e.size.text, s.lastTick ?? s.t0!);
  // A trade at or before T0 - window (possible only before the first tick, in a log out of order
  // by more than the window) lies outside every refresh window (R >= T0): leaving it out keeps
  // V exact at the unaligned T0 (whose first bucket straddles T0 - window) and stops an old
  // bucket from evicting a newer one in the ring.
  if (e.time > s.t0! - s.config.volumeWindowUs) s.markets.window.add(m, e.time, e.size.value, e.size.text);
  return undefined;
}
