/**
 * The market table: one row per symbol id with its exchange, assets, pair, committed quote,
 * staged quote, eligibility (rule 8) and traded volume V at the last refresh.
 *
 * @module
 */
import { floatToSafe } from '../../decimal.js';
import { isEligible } from '../../eligibility.js';
import type { QuoteEvent, SymbolType } from '../../types.js';
import { VolumeWindow, type VolumeWindowJSON } from '../../volumeWindow.js';
import { Interner } from '../interner.js';
import { floatColumn, growF64, growI32, growU8, nullableColumn } from './columns.js';

/**
 * Why a market was not eligible at the last refresh (rules 3, 4, 8), stored per market in
 * {@link MarketTable.whyNot}; the codes are part of the snapshot format.
 */
export const WhyNot = {
  /** Eligible, or not refreshed yet (listed after the last refresh). */
  none: 0,
  /** Not a SPOT market (rule 3). */
  notSpot: 1,
  /** Base or quote asset unknown. */
  assetsUnknown: 2,
  /** Its exchange was not legitimate at the refresh (rule 4). */
  notLegitimate: 3,
  /** No traded volume in the window before the refresh (rule 8). */
  noVolume: 4,
} as const;

/**
 * Longest decimal text (in characters) whose exact value the engine does not keep: a decimal of
 * at most 15 significant digits round-trips through float64, so its exact value is the float's
 * shortest representation (docs/methodology.md section 7).
 */
export const FLOAT64_EXACT_CHARS = 15;

/**
 * Whether `String(v)` is longer than {@link FLOAT64_EXACT_CHARS} characters, mostly without
 * making the string (see {@link floatToSafe}: when it finds the digits, the text has at most 15
 * characters).
 */
export function floatTextLong(v: number): boolean {
  return !floatToSafe(v) && String(v).length > FLOAT64_EXACT_CHARS;
}

/** Snapshot of a {@link MarketTable} (the `markets` part of the engine snapshot; key order is part of the format). */
export interface MarketTableJSON {
  names: string[];
  exchange: number[];
  base: number[];
  quote: number[];
  type: string[];
  pair: number[];
  /** [bid, ask, bid_size, ask_size, quote time] columns, NaN as null. */
  quote_state: (number | null)[][];
  quote_text: (string[] | null)[];
  staged: number[];
  staged_quotes: QuoteEvent[];
  eligible: number[];
  why_not: number[];
  volume: number[];
  discarded_at: (number | null)[];
}

/**
 * Typed-array columns indexed by market id. Quotes are staged per market (the last one read
 * wins) and committed at the next tick, so the committed quote is always "as of the last tick".
 */
export class MarketTable {
  /** Symbol ids <-> market ids. */
  readonly index = new Interner();
  /** Exchange id of each market. */
  exchange = new Int32Array(0);
  /** Base asset id, -1 when unknown. */
  base = new Int32Array(0);
  /** Quote asset id, -1 when unknown. */
  quote = new Int32Array(0);
  /** Symbol type (rule 3). */
  readonly type: SymbolType[] = [];
  /** Pair id of a SPOT market with two known, distinct assets; -1 otherwise. */
  pair = new Int32Array(0);
  /** Committed quote (as of the last tick); `tq` is its time, NaN before the first. */
  bid = new Float64Array(0);
  ask = new Float64Array(0);
  bidSize = new Float64Array(0);
  askSize = new Float64Array(0);
  tq = new Float64Array(0);
  /**
   * Exact texts [bid, ask, bid_size, ask_size] of the committed quote, kept only when one of them
   * is longer than {@link FLOAT64_EXACT_CHARS} characters (see {@link exactTexts}).
   */
  readonly text: (string[] | undefined)[] = [];
  /**
   * 1 when market m's committed quote was staged from values whose exact texts are String(value)
   * ({@link stageValues}): {@link text} is then undefined and the snapshot derives the texts it
   * would have kept from the values (see {@link toJSON}), so a commit does no string work.
   */
  textFromValues = new Uint8Array(0);
  /**
   * Quote received after the last tick, per market (the last one read wins); committed at the next
   * tick. Undefined for a quote staged from its values ({@link stageValues}), whose exact texts
   * are String(value) but where {@link stagedTexts} lists them.
   */
  readonly stagedQuote: (QuoteEvent | undefined)[] = [];
  /**
   * The exact texts [bid, bid_size, ask, ask_size] of a quote staged from its values when one of
   * them is not String(value) (see {@link stageValues}).
   */
  readonly stagedTexts: (string[] | undefined)[] = [];
  /**
   * The staged quotes' values, copied at staging time (while the event is in cache) so that the
   * commit at the next tick reads them in order instead of cold event objects: for the i-th market
   * of {@link stagedList}, bid, ask, bid size, ask size and time at `sq[5 i ..]`, and `sLong[i]`
   * = 1 when its exact texts must be kept (see {@link text}), 2 when its texts are String(value)
   * (see {@link textFromValues}). `sPos[m]` is market m's position.
   */
  sq = new Float64Array(5 * 64);
  sLong = new Uint8Array(64);
  sPos = new Int32Array(0);
  /** 1 when the market is in {@link stagedList}. */
  staged = new Uint8Array(0);
  /** Markets with a staged quote, in order of arrival. */
  readonly stagedList: number[] = [];
  /** Time of the last quote discarded by rule 5, NaN when none. */
  discardedAt = new Float64Array(0);
  /** Eligible at the last refresh (rule 8). */
  eligible = new Uint8Array(0);
  /** A {@link WhyNot} code per market. */
  whyNot = new Uint8Array(0);
  /** Traded volume V at the last refresh (rule 8). */
  volume = new Float64Array(0);

  /**
   * The pair-major layout (docs/performance.md): a copy of the columns a pair's computation reads,
   * with the markets of each pair in consecutive slots, in the pair's market order. Pair `pr`
   * holds slots `pStart[pr]` to `pStart[pr + 1] - 1`; `pMarket[slot]` is the market, `slotOf[m]`
   * its slot (-1 when in no pair). Built by {@link buildLayout} when a pair's computation needs it
   * after {@link invalidateLayout} (a market defined or redefined, a snapshot restored); kept equal
   * to the columns by the commit of staged quotes and by eligibility refreshes.
   */
  layoutValid = false;
  /** Slot ranges of the pairs the layout covers (one more entry than pairs). */
  pStart = new Int32Array(1);
  pMarket = new Int32Array(0);
  slotOf = new Int32Array(0);
  pExchange = new Int32Array(0);
  pEligible = new Uint8Array(0);
  /** Per slot: bid, ask, bid size, ask size and quote time at `pq[5 slot ..]` (one cache line to write at a commit). */
  pq = new Float64Array(0);
  pVolume = new Float64Array(0);

  /** @param window - the rolling traded-volume window of every market (rule 8) */
  constructor(public window: VolumeWindow) {}

  /** The id of market `symbolId`, creating its row (SPOT, no exchange, no assets, no pair, no quote) on first sight. */
  intern(symbolId: string): number {
    const m = this.index.intern(symbolId);
    const n = this.index.size;
    if (n > this.exchange.length) {
      this.exchange = growI32(this.exchange, n, -1);
      this.base = growI32(this.base, n, -1);
      this.quote = growI32(this.quote, n, -1);
      this.pair = growI32(this.pair, n, -1);
      this.bid = growF64(this.bid, n);
      this.ask = growF64(this.ask, n);
      this.bidSize = growF64(this.bidSize, n);
      this.askSize = growF64(this.askSize, n);
      this.tq = growF64(this.tq, n, NaN);
      this.staged = growU8(this.staged, n);
      this.textFromValues = growU8(this.textFromValues, n);
      this.sPos = growI32(this.sPos, n);
      this.discardedAt = growF64(this.discardedAt, n, NaN);
      this.eligible = growU8(this.eligible, n);
      this.whyNot = growU8(this.whyNot, n);
      this.volume = growF64(this.volume, n);
      this.slotOf = growI32(this.slotOf, n, -1);
      this.window.ensure(n);
    }
    while (this.type.length < n) {
      this.type.push('SPOT');
      this.text.push(undefined);
      this.stagedQuote.push(undefined);
      this.stagedTexts.push(undefined);
    }
    return m;
  }

  /** Stages an accepted quote of market m for the next tick. */
  stage(m: number, q: QuoteEvent): void {
    this.stagedQuote[m] = q;
    this.stagedTexts[m] = undefined;
    const i = this.stagePosition(m);
    const sq = this.sq;
    const o = 5 * i;
    sq[o] = q.bidPrice.value;
    sq[o + 1] = q.askPrice.value;
    sq[o + 2] = q.bidSize.value;
    sq[o + 3] = q.askSize.value;
    sq[o + 4] = q.time;
    this.sLong[i] =
      q.bidPrice.text.length > FLOAT64_EXACT_CHARS ||
      q.askPrice.text.length > FLOAT64_EXACT_CHARS ||
      q.bidSize.text.length > FLOAT64_EXACT_CHARS ||
      q.askSize.text.length > FLOAT64_EXACT_CHARS
        ? 1
        : 0;
  }

  /**
   * Stages an accepted quote of market m from its values and time (a row of a columnar batch):
   * what {@link stage} does with the quote event of these values, without the object. `texts`:
   * its exact texts [bid, bid_size, ask, ask_size] when one of them is not String(value), else
   * undefined.
   */
  stageValues(m: number, bid: number, bidSize: number, ask: number, askSize: number, time: number, texts: string[] | undefined): void {
    this.stagedQuote[m] = undefined;
    this.stagedTexts[m] = texts;
    const i = this.stagePosition(m);
    const sq = this.sq;
    const o = 5 * i;
    sq[o] = bid;
    sq[o + 1] = ask;
    sq[o + 2] = bidSize;
    sq[o + 3] = askSize;
    sq[o + 4] = time;
    this.sLong[i] =
      texts === undefined
        ? 2
        : texts[0].length > FLOAT64_EXACT_CHARS ||
            texts[1].length > FLOAT64_EXACT_CHARS ||
            texts[2].length > FLOAT64_EXACT_CHARS ||
            texts[3].length > FLOAT64_EXACT_CHARS
          ? 1
          : 0;
  }

  /** Market m's position in {@link stagedList}, adding it when not staged yet. */
  private stagePosition(m: number): number {
    if (!this.staged[m]) {
      this.staged[m] = 1;
      this.sPos[m] = this.stagedList.length;
      this.stagedList.push(m);
      if (5 * this.stagedList.length > this.sq.length) {
        this.sq = growF64(this.sq, 2 * this.sq.length);
        this.sLong = growU8(this.sLong, 2 * this.sLong.length);
      }
    }
    return this.sPos[m];
  }

  /** The staged quote of market m (at position i of {@link stagedList}) as its event. */
  private stagedEvent(m: number, i: number): QuoteEvent {
    const q = this.stagedQuote[m];
    if (q !== undefined) return structuredClone(q);
    const o = 5 * i;
    const sq = this.sq;
    const t = this.stagedTexts[m];
    return {
      type: 'quote',
      time: sq[o + 4],
      symbolId: this.index.names[m],
      bidPrice: { value: sq[o], text: t ? t[0] : String(sq[o]) },
      bidSize: { value: sq[o + 2], text: t ? t[1] : String(sq[o + 2]) },
      askPrice: { value: sq[o + 1], text: t ? t[2] : String(sq[o + 1]) },
      askSize: { value: sq[o + 3], text: t ? t[3] : String(sq[o + 3]) },
    };
  }

  /** Commits the staged quotes (start of a tick) and marks their pairs dirty in `pairDirty`. */
  commitStaged(pairDirty: Uint8Array): void {
    const { stagedQuote, stagedTexts, textFromValues, bid, ask, bidSize, askSize, tq, text, staged, pair, sq, sLong, slotOf, pq } = this;
    const layout = this.layoutValid;
    const list = this.stagedList;
    for (let i = 0; i < list.length; i++) {
      const m = list[i];
      const o = 5 * i;
      const b = sq[o];
      const a = sq[o + 1];
      const bs = sq[o + 2];
      const as = sq[o + 3];
      const t = sq[o + 4];
      bid[m] = b;
      ask[m] = a;
      bidSize[m] = bs;
      askSize[m] = as;
      tq[m] = t;
      if (layout) {
        const sl = slotOf[m];
        if (sl >= 0) {
          const po = 5 * sl;
          pq[po] = b;
          pq[po + 1] = a;
          pq[po + 2] = bs;
          pq[po + 3] = as;
          pq[po + 4] = t;
        }
      }
      const long = sLong[i];
      if (long === 1) {
        const q = stagedQuote[m];
        if (q !== undefined) text[m] = [q.bidPrice.text, q.askPrice.text, q.bidSize.text, q.askSize.text];
        else {
          const st = stagedTexts[m]!;
          text[m] = [st[0], st[2], st[1], st[3]];
        }
      } else if (text[m] !== undefined) text[m] = undefined;
      textFromValues[m] = long === 2 ? 1 : 0;
      stagedQuote[m] = undefined;
      stagedTexts[m] = undefined;
      staged[m] = 0;
      const pr = pair[m];
      if (pr >= 0) pairDirty[pr] = 1;
    }
    this.stagedList.length = 0;
  }

  /** Eligibility refresh at tick T (rules 3, 4, 8): V over the window, eligibility and its {@link WhyNot} code. */
  refreshEligibility(T: number, exchangeLegit: Uint8Array): void {
    const { type, base, quote, exchange, volume, eligible, whyNot, window } = this;
    const n = this.index.size;
    for (let m = 0; m < n; m++) {
      const V = window.sum(m, T);
      volume[m] = V;
      const spot = type[m] === 'SPOT';
      const known = base[m] >= 0 && quote[m] >= 0;
      const legit = exchangeLegit[exchange[m]] === 1;
      eligible[m] = isEligible(spot, legit, known, V) ? 1 : 0;
      whyNot[m] = !spot
        ? WhyNot.notSpot
        : !known
          ? WhyNot.assetsUnknown
          : !legit
            ? WhyNot.notLegitimate
            : V > 0
              ? WhyNot.none
              : WhyNot.noVolume;
    }
    if (this.layoutValid) {
      const { pMarket, pEligible, pVolume } = this;
      for (let sl = 0; sl < pMarket.length; sl++) {
        const m = pMarket[sl];
        pEligible[sl] = eligible[m];
        pVolume[sl] = volume[m];
      }
    }
  }

  /** The layout no longer matches the markets (see {@link layoutValid}). */
  invalidateLayout(): void {
    this.layoutValid = false;
  }

  /** Builds the pair-major layout of the pairs' market lists (`pairMarkets[pr]`, in order). */
  buildLayout(pairMarkets: readonly (readonly number[])[]): void {
    const P = pairMarkets.length;
    const start = new Int32Array(P + 1);
    for (let pr = 0; pr < P; pr++) start[pr + 1] = start[pr] + pairMarkets[pr].length;
    const total = start[P];
    const pMarket = new Int32Array(total);
    this.slotOf.fill(-1);
    for (let pr = 0; pr < P; pr++) {
      const list = pairMarkets[pr];
      for (let i = 0; i < list.length; i++) {
        const sl = start[pr] + i;
        pMarket[sl] = list[i];
        this.slotOf[list[i]] = sl;
      }
    }
    const gather = <A extends Float64Array | Int32Array | Uint8Array>(out: A, col: A): A => {
      for (let sl = 0; sl < total; sl++) out[sl] = col[pMarket[sl]];
      return out;
    };
    this.pStart = start;
    this.pMarket = pMarket;
    this.pExchange = gather(new Int32Array(total), this.exchange);
    this.pEligible = gather(new Uint8Array(total), this.eligible);
    const pq = new Float64Array(5 * total);
    for (let sl = 0; sl < total; sl++) {
      const m = pMarket[sl];
      pq[5 * sl] = this.bid[m];
      pq[5 * sl + 1] = this.ask[m];
      pq[5 * sl + 2] = this.bidSize[m];
      pq[5 * sl + 3] = this.askSize[m];
      pq[5 * sl + 4] = this.tq[m];
    }
    this.pq = pq;
    this.pVolume = gather(new Float64Array(total), this.volume);
    this.layoutValid = true;
  }

  /** Exact decimal texts [bid, ask, bid_size, ask_size] of market m's committed quote (see {@link text}). */
  exactTexts(m: number): string[] {
    return this.text[m] ?? [String(this.bid[m]), String(this.ask[m]), String(this.bidSize[m]), String(this.askSize[m])];
  }

  /**
   * The exact texts [bid, ask, bid_size, ask_size] market m's committed quote keeps (a copy), or
   * null: the texts of a quote staged from values are kept when one of them is long, as
   * {@link stage} keeps them.
   */
  private keptTexts(m: number): string[] | null {
    const t = this.text[m];
    if (t !== undefined) return [...t];
    if (this.textFromValues[m] === 1) {
      const v = [this.bid[m], this.ask[m], this.bidSize[m], this.askSize[m]];
      if (v.some(floatTextLong)) return v.map(String);
    }
    return null;
  }

  /** The table as plain JSON (see {@link MarketTableJSON}); the volume window is snapshotted separately. */
  toJSON(): MarketTableJSON {
    const n = this.index.size;
    return {
      names: [...this.index.names],
      exchange: Array.from(this.exchange.subarray(0, n)),
      base: Array.from(this.base.subarray(0, n)),
      quote: Array.from(this.quote.subarray(0, n)),
      type: this.type.slice(0, n),
      pair: Array.from(this.pair.subarray(0, n)),
      quote_state: [
        nullableColumn(this.bid, n),
        nullableColumn(this.ask, n),
        nullableColumn(this.bidSize, n),
        nullableColumn(this.askSize, n),
        nullableColumn(this.tq, n),
      ],
      quote_text: Array.from({ length: n }, (_, m) => this.keptTexts(m)),
      staged: [...this.stagedList],
      staged_quotes: this.stagedList.map((m, i) => this.stagedEvent(m, i)),
      eligible: Array.from(this.eligible.subarray(0, n)),
      why_not: Array.from(this.whyNot.subarray(0, n)),
      volume: nullableColumn(this.volume, n) as number[],
      discarded_at: nullableColumn(this.discardedAt, n),
    };
  }

  /**
   * Loads the per-market state of {@link toJSON} output and the volume window. The rows must
   * already exist (defined in order from the snapshot's names, exchanges and assets).
   */
  restore(json: MarketTableJSON, window: VolumeWindowJSON): void {
    this.invalidateLayout();
    const n = json.names.length;
    for (let m = 0; m < n; m++) this.pair[m] = json.pair[m];
    const [bid, ask, bidSize, askSize, tq] = json.quote_state.map(floatColumn);
    this.bid.set(bid);
    this.ask.set(ask);
    this.bidSize.set(bidSize);
    this.askSize.set(askSize);
    this.tq.set(tq);
    for (let m = 0; m < n; m++) {
      const txt = json.quote_text[m];
      this.text[m] = txt ? [...txt] : undefined;
      this.textFromValues[m] = 0;
      this.eligible[m] = json.eligible[m];
      this.whyNot[m] = json.why_not[m];
    }
    this.volume.set(floatColumn(json.volume));
    this.discardedAt.set(floatColumn(json.discarded_at));
    for (let i = 0; i < json.staged.length; i++) this.stage(json.staged[i], json.staged_quotes[i]);
    this.window = VolumeWindow.fromJSON(window);
    this.window.ensure(n);
  }
}
