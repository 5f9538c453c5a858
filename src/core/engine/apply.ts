/**
 * Applying one event to the engine's state (docs/methodology.md sections 1-2): symbols and
 * exchanges update the tables, quotes pass rule 5 and are staged for the next tick, trades feed
 * the volume window (rule 8). The ticks before the event have already been computed.
 *
 * @module
 */
import {
  type BatchColumns,
  CELLS,
  decText,
  firstTextAt,
  QUOTE_ASK,
  QUOTE_ASK_SIZE,
  QUOTE_BID,
  QUOTE_BID_SIZE,
  TRADE_PRICE,
  TRADE_SIZE,
} from '../batch.js';
import { SPREAD_ACCEPTED, SPREAD_EXACT, spreadAccepted, spreadAcceptedExact, spreadFloatDecision } from '../quoteFilter.js';
import type { ExchangeEvent, QuoteEvent, Reject, RejectReason, SymbolEvent, TradeEvent } from '../types.js';
import type { EngineState } from './state.js';
import { FLOAT64_EXACT_CHARS, floatTextLong } from './tables/markets.js';

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
  const price = e.price;
  const long = price.text.length > FLOAT64_EXACT_CHARS ? price.text : undefined;
  s.symbolRecords.onTrade(m, e.time, price.value, long, e.size.value, e.size.text, s.lastTick ?? s.t0!);
  // A trade at or before T0 - window (possible only before the first tick, in a log out of order
  // by more than the window) lies outside every refresh window (R >= T0): leaving it out keeps
  // V exact at the unaligned T0 (whose first bucket straddles T0 - window) and stops an old
  // bucket from evicting a newer one in the ring.
  if (e.time > s.t0! - s.config.volumeWindowUs) s.markets.window.add(m, e.time, e.size.value, e.size.text);
  return undefined;
}

/** Whether row i of `b` lists an exact text for one of its cells (most rows list none). */
function listsTexts(b: BatchColumns, i: number): boolean {
  const cells = b.textCells;
  if (cells.length === 0) return false;
  const k = firstTextAt(b, CELLS * i);
  return k < cells.length && cells[k] < CELLS * (i + 1);
}

/**
 * {@link applyQuote} for quote row i of a columnar batch (src/core/batch.ts), from its columns:
 * the same counters, logs, rule-5 decision (the float test, the exact texts only near the
 * boundary) and staged quote as for the row's event, without the event.
 */
export function applyQuoteRow(s: EngineState, b: BatchColumns, i: number, known?: number): Reject | undefined {
  const symbolId = b.symbols[b.symbol[i]];
  const m = known ?? s.marketFor(symbolId);
  if (m === undefined) return unknownSymbol(s, 'quote', symbolId);
  s.stats.events.quote++;
  const t = b.time[i];
  s.symbolRecords.onQuote(m, t);
  const v = b.v;
  const c = CELLS * i;
  const bid = v[c + QUOTE_BID];
  const ask = v[c + QUOTE_ASK];
  if (s.listener.onOwnMetrics !== undefined) s.ownMetrics.noteQuote(m, bid, ask);
  const listed = listsTexts(b, i);
  let d = spreadFloatDecision(bid, ask, s.config.maxSpreadValue);
  if (d === SPREAD_EXACT) {
    // A locked book whose texts are both String(value) has the same texts: spread exactly 0.
    if (bid === ask && !listed) d = SPREAD_ACCEPTED;
    else {
      const bt = decText(b, c + QUOTE_BID);
      const at = decText(b, c + QUOTE_ASK);
      d = (bid === ask && bt === at) || spreadAcceptedExact(bt, at, s.config.maxSpreadText) ? SPREAD_ACCEPTED : 0;
    }
  }
  if (d !== SPREAD_ACCEPTED) {
    s.stats.quotesDiscarded++;
    s.markets.discardedAt[m] = t;
    return undefined;
  }
  const texts = listed
    ? [decText(b, c + QUOTE_BID), decText(b, c + QUOTE_BID_SIZE), decText(b, c + QUOTE_ASK), decText(b, c + QUOTE_ASK_SIZE)]
    : undefined;
  s.markets.stageValues(m, bid, v[c + QUOTE_BID_SIZE], ask, v[c + QUOTE_ASK_SIZE], t, texts);
  return undefined;
}

/** {@link applyTrade} for trade row i of a columnar batch, from its columns (see {@link applyQuoteRow}). */
export function applyTradeRow(s: EngineState, b: BatchColumns, i: number, known?: number): Reject | undefined {
  const symbolId = b.symbols[b.symbol[i]];
  const m = known ?? s.marketFor(symbolId);
  if (m === undefined) return unknownSymbol(s, 'trade', symbolId);
  s.stats.events.trade++;
  const t = b.time[i];
  const c = CELLS * i;
  const price = b.v[c + TRADE_PRICE];
  const size = b.v[c + TRADE_SIZE];
  const listed = listsTexts(b, i);
  let longPrice: string | undefined;
  if (listed) {
    const text = decText(b, c + TRADE_PRICE);
    if (text.length > FLOAT64_EXACT_CHARS) longPrice = text;
  } else if (floatTextLong(price)) longPrice = String(price);
  // The size's exact text when listed; else it is String(size), which the exact sums read from the float.
  const sizeText = listed ? decText(b, c + TRADE_SIZE) : undefined;
  s.symbolRecords.onTrade(m, t, price, longPrice, size, sizeText, s.lastTick ?? s.t0!);
  // As in applyTrade: a trade at or before T0 - window lies outside every refresh window.
  if (t > s.t0! - s.config.volumeWindowUs) s.markets.window.add(m, t, size, sizeText);
  return undefined;
}
