/**
 * The position book (docs/methodology.md section 11): the latest `position` snapshot per account
 * and exchange symbol, closed at quantity 0, and the reachability of each exchange from its latest
 * `connectivity` event. A pure reducer: the engine feeds it the accepted events in log order, and
 * a replay database's rows rebuild it as of any tick.
 *
 * @module
 */
import type { Dec } from '../types.js';
import { splitAccount, type ConnectivityEvent, type PositionEvent } from './events.js';

/**
 * An open position as kept: its latest snapshot, with the base and quote assets of its symbol as
 * known when it was applied (absent when neither its symbol_id nor a `symbol` event says them).
 *
 * @example
 * ```ts
 * const p: BookPosition = { event, base: 'BTC', quote: 'USDT' };
 * ```
 */
export interface BookPosition {
  readonly event: PositionEvent;
  readonly base?: string;
  readonly quote?: string;
}

/**
 * The open positions of one account, in symbol_id_exchange order.
 *
 * @example
 * ```ts
 * const a: AccountPositions = { account: 'BINANCE~hedge', exchangeId: 'BINANCE', positions: [] };
 * ```
 */
export interface AccountPositions {
  readonly account: string;
  readonly exchangeId: string;
  readonly positions: readonly BookPosition[];
}

/**
 * The book as plain JSON (part of an engine snapshot): open positions in account and symbol
 * order, and the latest connectivity event of every exchange that had one, in exchange order.
 *
 * @example
 * ```ts
 * const j: PositionBookJSON = { positions: [], connectivity: [{ time: 1709251204500000, exchangeId: 'KRAKEN', reachable: false }] };
 * ```
 */
export interface PositionBookJSON {
  positions: (Omit<PositionEvent, 'type'> & { base?: string; quote?: string })[];
  connectivity: Omit<ConnectivityEvent, 'type'>[];
}

/**
 * Whether a quantity is exactly 0 (its text's mantissa has no digit 1-9): such a snapshot closes
 * the position. A tiny positive quantity that underflows to 0 as a float is still open.
 *
 * @example
 * ```ts
 * isZeroQuantity({ value: 0, text: '0.000' }); // true
 * ```
 */
export function isZeroQuantity(q: Dec): boolean {
  if (q.value !== 0) return false;
  return !/[1-9]/.test(q.text.split(/[eE]/)[0]);
}

const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Which accounts an `exchange_id` filter selects: the account itself when it carries a tag
 * (`BINANCE~hedge`), every account of the exchange when it is a bare exchange id (`BINANCE`:
 * `BINANCE`, `BINANCE~hedge`, `BINANCE/2574`...).
 *
 * Why: docs/methodology.md section 11 (positions are kept per full account id; a query may name
 * an account or an exchange).
 *
 * @example
 * ```ts
 * accountMatches('BINANCE~hedge', 'BINANCE'); // true
 * accountMatches('BINANCE~hedge', 'BINANCE~main'); // false
 * ```
 */
export function accountMatches(account: string, filter: string): boolean {
  if (account === filter) return true;
  const a = splitAccount(account);
  const f = splitAccount(filter);
  return typeof a !== 'string' && typeof f !== 'string' && f.tag === undefined && a.exchangeId === f.exchangeId;
}

/**
 * The position book. Apply events in log order; read the open positions and the unreachable
 * exchanges at any point.
 *
 * @example
 * ```ts
 * const book = new PositionBook();
 * book.apply(positionEvent, { base: 'BTC', quote: 'USDT' });
 * book.open(); // [{ account: 'BINANCE~hedge', exchangeId: 'BINANCE', positions: [...] }]
 * ```
 */
export class PositionBook {
  /** account → symbol_id_exchange → position. */
  private readonly accounts = new Map<string, Map<string, BookPosition>>();
  /** exchange → its latest connectivity event. */
  private readonly reachability = new Map<string, ConnectivityEvent>();

  /** Whether the book holds nothing (no open position, no connectivity seen). */
  get isEmpty(): boolean {
    return this.accounts.size === 0 && this.reachability.size === 0;
  }

  /**
   * Applies a snapshot: it replaces the account's previous snapshot of the symbol; quantity 0
   * closes (removes) the position.
   *
   * @param assets - the base and quote of the position's symbol, when known
   */
  apply(e: PositionEvent, assets?: { base: string; quote: string }): void {
    let symbols = this.accounts.get(e.account);
    if (isZeroQuantity(e.quantity)) {
      if (!symbols) return;
      symbols.delete(e.symbolIdExchange);
      if (symbols.size === 0) this.accounts.delete(e.account);
      return;
    }
    if (!symbols) {
      symbols = new Map();
      this.accounts.set(e.account, symbols);
    }
    symbols.set(e.symbolIdExchange, assets ? { event: e, base: assets.base, quote: assets.quote } : { event: e });
  }

  /** Applies a connectivity event: the exchange's reachability from now on. */
  applyConnectivity(e: ConnectivityEvent): void {
    this.reachability.set(e.exchangeId, e);
  }

  /** The exchanges whose latest connectivity event says unreachable, sorted. */
  unreachable(): string[] {
    return [...this.reachability.values()]
      .filter((e) => !e.reachable)
      .map((e) => e.exchangeId)
      .sort(byKey);
  }

  /** The latest connectivity event of every exchange that had one, in exchange order. */
  connectivity(): ConnectivityEvent[] {
    return [...this.reachability.values()].sort((a, b) => byKey(a.exchangeId, b.exchangeId));
  }

  /**
   * The open positions of the accounts `filter` selects ({@link accountMatches}; all without one),
   * accounts sorted by id and each one's positions by symbol_id_exchange. Accounts with nothing
   * open are left out.
   */
  open(filter?: string): AccountPositions[] {
    const out: AccountPositions[] = [];
    for (const account of [...this.accounts.keys()].sort(byKey)) {
      if (filter !== undefined && !accountMatches(account, filter)) continue;
      const symbols = this.accounts.get(account)!;
      const a = splitAccount(account);
      out.push({
        account,
        exchangeId: typeof a === 'string' ? account : a.exchangeId,
        positions: [...symbols.keys()].sort(byKey).map((k) => symbols.get(k)!),
      });
    }
    return out;
  }

  /** The book as plain JSON (see {@link PositionBookJSON}). */
  toJSON(): PositionBookJSON {
    const positions: PositionBookJSON['positions'] = [];
    for (const a of this.open()) {
      for (const p of a.positions) {
        const { type: _type, ...rest } = p.event;
        positions.push(p.base === undefined ? rest : { ...rest, base: p.base, quote: p.quote });
      }
    }
    return { positions, connectivity: this.connectivity().map(({ type: _type, ...rest }) => rest) };
  }

  /** Loads {@link toJSON} output into an empty book (absent: stays empty). */
  restore(j: PositionBookJSON | undefined): void {
    if (!j) return;
    for (const p of j.positions) {
      const { base, quote, ...rest } = p;
      const e: PositionEvent = { type: 'position', ...rest };
      this.apply(e, base !== undefined && quote !== undefined ? { base, quote } : undefined);
    }
    for (const c of j.connectivity) this.applyConnectivity({ type: 'connectivity', ...c });
  }
}
