/**
 * Where the EMS gateway's positions come from, and the `/v1/positions` answer (docs/ems.md): the
 * position book at a tick and the rates to value it with, from a live engine (`--replay LOG`,
 * `--follow LOG`: its book now, at its last tick's rates) or from a replay database (the stored
 * position rows up to the tick, at the database's rates of that tick).
 *
 * @module
 */
import type { AccountPositions } from '../core/positions/book.js';
import { splitAccount } from '../core/positions/events.js';
import { valuePositions } from '../core/positions/pnl.js';
import { floorSecond, formatTime } from '../core/time.js';
import { wireNumber } from '../core/wire.js';
import { isXrateError, XrateError } from '../core/errors.js';
import type { PositionHistory } from '../io/storeTypes.js';
import type { ReplayStore } from '../io/store.js';
import { badParam } from '../http/errors.js';
import { shown } from '../http/params.js';
import { DatabaseRateProvider, LiveRateProvider, type RateProvider } from '../answers/index.js';

/** The interface's status for "exchange is unreachable". */
export const EXCHANGE_UNREACHABLE = 490;

/**
 * The interface's MessageReject (field order of the schema): the body of a 490.
 *
 * @example
 * ```ts
 * const r: MessageReject = { type: 'MESSAGE_REJECT', reject_reason: 'EXCHANGE_UNREACHABLE', exchange_id: 'KRAKEN', message: '...' };
 * ```
 */
export interface MessageReject {
  type: 'MESSAGE_REJECT';
  reject_reason: 'EXCHANGE_UNREACHABLE';
  exchange_id?: string;
  message: string;
}

/** A 490 (code `exchange_unreachable`) with its {@link MessageReject} body. */
export class UnreachableError extends XrateError {
  constructor(readonly body: MessageReject) {
    super('exchange_unreachable', body.message);
    this.name = 'UnreachableError';
  }
}

/**
 * One position on the wire (the interface's Position data item, field order of the schema).
 *
 * @example
 * ```ts
 * const p: WirePosition = { symbol_id_exchange: 'BTCUSDT', avg_entry_price: 60000, quantity: 0.5, side: 'BUY' };
 * ```
 */
export interface WirePosition {
  symbol_id_exchange: string;
  symbol_id_coinapi?: string;
  avg_entry_price: number;
  quantity: number;
  side: 'BUY' | 'SELL';
  unrealized_pnl?: number;
  leverage?: number;
  cross_margin?: boolean;
  liquidation_price?: number;
  raw_data?: unknown;
}

/** One account's positions on the wire (the interface's Position). */
export interface WireAccount {
  exchange_id: string;
  data: WirePosition[];
}

/** What the positions of a tick are read from. */
interface Book {
  open(filter?: string): AccountPositions[];
  unreachable(): string[];
}

/**
 * The positions of a rate service's data: a {@link LiveRateProvider}'s engine, or the replay
 * database `store` (its stored rows) valued at `provider`'s rates.
 *
 * @example
 * ```ts
 * const src = new PositionSource(provider, store);
 * src.answer('BINANCE', undefined); // [{ exchange_id: 'BINANCE~hedge', data: [...] }]
 * ```
 */
export class PositionSource {
  private readonly stored: PositionHistory;

  /**
   * @param provider - the rate provider (a live engine's or a database's)
   * @param store - the replay database the positions are stored in (read here)
   */
  constructor(
    private readonly provider: RateProvider,
    private readonly store: ReplayStore,
  ) {
    this.stored = store.positions();
  }

  /** The book as of `at` (µs, floored to its tick) or now, and the rate to value it with. */
  private bookAt(at: number | undefined): { book: Book; rate: (b: string, q: string) => number | undefined } {
    const p = this.provider;
    if (p instanceof LiveRateProvider && at === undefined) {
      const engine = p.engine;
      return {
        book: { open: (f) => engine.positions(f), unreachable: () => engine.unreachableExchanges() },
        rate: (b, q) => engine.rate(b, q)?.rate,
      };
    }
    if (!(p instanceof LiveRateProvider)) {
      const owner = this.store.outputsRun();
      if (owner && owner.status !== 'complete') {
        throw new XrateError(
          'unavailable',
          `the database "${this.store.path}" holds the partial outputs of replay run ${owner.id} (status "${owner.status}"): positions are answered once a replay into it completes`,
        );
      }
    }
    const T = at === undefined ? undefined : floorSecond(at);
    // A time the database does not cover (before the replay's --from or its first tick, after a
    // --to stop) is the same 550 as a rate's: the rows there are not the log's whole book.
    if (T !== undefined && p instanceof DatabaseRateProvider) p.sourceFor(T, `no positions at ${formatTime(T)}`);
    return { book: this.stored.bookAt(T), rate: (b, q) => rateOrNone(p, b, q, T) };
  }

  /**
   * The `/v1/positions` answer: the open positions of the accounts `exchangeId` selects (an
   * account exactly, or every account of a bare exchange id; all without it), accounts and
   * symbols sorted, valued at the tick's rates (no rate: no `unrealized_pnl`; computed from the
   * rates as computed, written rounded as a rate is: wireNumber, docs/methodology.md section 7).
   *
   * @throws {@link UnreachableError} when the exchange asked for (or, without `exchangeId`, any
   *   exchange) is unreachable at that time; a 400 {@link XrateError} (`usage`) for a bad `exchangeId`
   */
  answer(exchangeId: string | undefined, at: number | undefined): WireAccount[] {
    const a = exchangeId === undefined ? undefined : splitAccount(exchangeId);
    if (typeof a === 'string') throw badParam('exchange_id', `${shown(exchangeId!)} is not an exchange or account id: ${a}`);
    const { book, rate } = this.bookAt(at);
    const when = at === undefined ? '' : ` at ${formatTime(floorSecond(at))}`;
    const down = book.unreachable();
    if (a !== undefined) {
      if (down.includes(a.exchangeId)) {
        throw new UnreachableError({
          type: 'MESSAGE_REJECT',
          reject_reason: 'EXCHANGE_UNREACHABLE',
          exchange_id: a.exchangeId,
          message: `Exchange ${a.exchangeId} is unreachable${when}: its positions cannot be known`,
        });
      }
    } else if (down.length > 0) {
      throw new UnreachableError({
        type: 'MESSAGE_REJECT',
        reject_reason: 'EXCHANGE_UNREACHABLE',
        ...(down.length === 1 && { exchange_id: down[0] }),
        message:
          `${down.length === 1 ? 'Exchange' : 'Exchanges'} ${down.join(', ')} ${down.length === 1 ? 'is' : 'are'} unreachable${when}: ` +
          'the positions across all exchanges cannot be known (ask for the others one by one with exchange_id)',
      });
    }
    return valuePositions(book.open(exchangeId), rate).map((a) => ({
      exchange_id: a.account,
      data: a.positions.map(({ position, unrealizedPnl }) => {
        const e = position.event;
        const w: WirePosition = {
          symbol_id_exchange: e.symbolIdExchange,
          ...(e.symbolId !== undefined && { symbol_id_coinapi: e.symbolId }),
          avg_entry_price: e.avgEntryPrice.value,
          quantity: e.quantity.value,
          side: e.side,
          ...(unrealizedPnl !== undefined && { unrealized_pnl: wireNumber(unrealizedPnl) }),
          ...(e.leverage !== undefined && { leverage: e.leverage.value }),
          ...(e.crossMargin !== undefined && { cross_margin: e.crossMargin }),
          ...(e.liquidationPrice !== undefined && { liquidation_price: e.liquidationPrice.value }),
          ...(e.rawData !== undefined && { raw_data: e.rawData }),
        };
        return w;
      }),
    }));
  }
}

/** rate(base, quote) at T (or the last tick) from a provider, undefined where it has none (its 550). */
function rateOrNone(p: RateProvider, base: string, quote: string, T: number | undefined): number | undefined {
  try {
    return p.rate(base, quote, T).raw;
  } catch (e) {
    if (isXrateError(e, 'no_data')) return undefined;
    throw e;
  }
}
