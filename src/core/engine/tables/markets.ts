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

/**
 * Offsets of a committed quote's values in {@link MarketTable.mq} (market m at `5 m`) and in the
 * pair-major layout's {@link MarketTable.pq} (slot sl at `8 sl`).
 */
export const Q_BID = 0;
/** See {@link Q_BID}. */
export const Q_ASK = 1;
/** See {@link Q_BID}. */
export const Q_BID_SIZE = 2;
/** See {@link Q_BID}. */
export const Q_ASK_SIZE = 3;
/** See {@link Q_BID}: the quote's time, NaN before the first. */
export const Q_TIME = 4;

/** Values a quote has in {@link MarketTable.mq}. */
const QS = 5;

/**
 * Values a slot has in {@link MarketTable.pq}: its market's committed quote (offsets {@link Q_BID}
 * .. {@link Q_TIME}), V ({@link S_VOLUME}), exchange when eligible ({@link S_EXCHANGE}) and market
 * ({@link S_MARKET}): all that a pair's computation reads of a market, in one record.
 */
export const SLOT_STRIDE = 8;
/** See {@link SLOT_STRIDE}: the market's traded volume V at the last refresh (rule 8). */
export const S_VOLUME = 5;
/** See {@link SLOT_STRIDE}: the market's exchange id when it was eligible at the last refresh (rule 8), else -1. */
export const S_EXCHANGE = 6;
/** See {@link SLOT_STRIDE}: the market id. */
export const S_MARKET = 7;
const PS = SLOT_STRIDE;

/**
 * The per-market record {@link MarketTable.rec}, read and written when a quote is staged (in one
 * cache line per four markets), so that the commit at the next tick need not touch it.
 */
const RS = 4;
/**
 * Stage number of the market's last staged quote (-1: none): the quote is staged, not yet
 * committed, while it is at least `stageBase`, at position `rec[R_STAGE] - stageBase`.
 */
const R_STAGE = 0;
/** Slot in the pair-major layout (-1: in no pair); valid while the layout is. */
const R_SLOT = 1;
/** Pair id (-1: none); valid while the layout is. */
const R_PAIR = 2;
/**
 * Where the exact texts of the last staged quote are (`kind`, the low two bits) and of the quote
 * committed before it (`4 kind`): 0 String(value), from a quote event whose texts are short; 1 in
 * {@link MarketTable.text}; 2 String(value), staged from values ({@link MarketTable.stageValues}),
 * which the snapshot checks for length (see `keptTexts`). The committed quote's kind is the
 * first while that quote is staged, else the second.
 */
const R_TEXT = 3;
/** Stage numbers are renumbered from 0 past this (an Int32 record). */
const STAGE_LIMIT = 0x40000000;

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
  /**
   * Committed quote (as of the last tick) of market m at `mq[5 m ..]`: bid, ask, bid size, ask
   * size and time (offsets {@link Q_BID} .. {@link Q_TIME}); the time is NaN before the first.
   * While the pair-major layout is valid, the quote of a market in a pair is in its slot of
   * {@link pq} instead (see {@link quoteAt}): a commit writes one place, in one cache line.
   */
  private mq = new Float64Array(0);
  /**
   * Per market at `rec[4 m ..]`: its stage number, its layout slot and pair and where its exact
   * texts are (see R_STAGE, R_SLOT, R_PAIR, R_TEXT).
   */
  private rec = new Int32Array(0);
  /** Stage number of the first quote staged since the last commit (see R_STAGE). */
  private stageBase = 0;
  /**
   * Exact texts [bid, ask, bid_size, ask_size] of the committed quote when its kind (R_TEXT) is
   * 1, that is when one of them is longer than {@link FLOAT64_EXACT_CHARS} characters (see
   * {@link exactTexts}); otherwise what is there is no longer used.
   */
  private readonly text: (string[] | undefined)[] = [];
  /**
   * By position i in {@link stagedList}: the quote event staged (the last one read wins),
   * committed at the next tick; undefined for a quote staged from its values
   * ({@link stageValues}), whose exact texts are String(value) but where `sTexts[i]` lists them.
   */
  private readonly sQuote: (QuoteEvent | undefined)[] = [];
  /**
   * By position i: the exact texts [bid, bid_size, ask, ask_size] of a quote staged from its
   * values when one of them is not String(value) (see {@link stageValues}).
   */
  private readonly sTexts: (string[] | undefined)[] = [];
  /**
   * The staged quotes' values, copied at staging time (while the event is in cache) so that the
   * commit at the next tick reads them in order instead of cold event objects: for the i-th market
   * of {@link stagedList}, bid, ask, bid size, ask size and time at `sq[5 i ..]`, and `sLong[i]`
   * = 1 when its exact texts must be kept (see {@link text}), 2 when its texts are String(value)
   * (staged from values). `sSlot[i]` and `sPair[i]`: its layout slot and pair, valid while the
   * layout is (read from its record at staging time, set again when the layout is built).
   */
  private sq = new Float64Array(5 * 64);
  private sLong = new Uint8Array(64);
  private sSlot = new Int32Array(64);
  private sPair = new Int32Array(64);
  /**
   * Markets with a staged quote, in order of arrival: the first {@link stagedCount}. The lists by
   * position keep their room from tick to tick (truncating them, V8 frees it, to allocate it again).
   */
  private readonly stagedList: number[] = [];
  private stagedCount = 0;
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
   * to the columns by eligibility refreshes. While it is valid, `pq` is where the committed quotes
   * of the markets in pairs are (the commit writes them there only; {@link invalidateLayout}
   * copies them back to the per-market record).
   */
  layoutValid = false;
  /** Slot ranges of the pairs the layout covers (one more entry than pairs). */
  pStart = new Int32Array(1);
  pMarket = new Int32Array(0);
  slotOf = new Int32Array(0);
  pExchange = new Int32Array(0);
  /** Per slot at `pq[8 slot ..]`: the slot's record (see {@link SLOT_STRIDE}). */
  pq = new Float64Array(0);

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
      this.growRecords(this.exchange.length);
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
    }
    return m;
  }

  /** Grows {@link mq} and {@link rec} to `cap` markets (no quote, nothing staged, no slot or pair). */
  private growRecords(cap: number): void {
    const old = this.rec.length / RS;
    if (cap <= old) return;
    const mq = new Float64Array(QS * cap);
    mq.set(this.mq);
    const rec = new Int32Array(RS * cap);
    rec.set(this.rec);
    for (let m = old; m < cap; m++) {
      mq[QS * m + Q_TIME] = NaN;
      rec[RS * m + R_STAGE] = -1;
      rec[RS * m + R_SLOT] = -1;
      rec[RS * m + R_PAIR] = -1;
    }
    this.mq = mq;
    this.rec = rec;
  }

  /** Value k ({@link Q_BID} .. {@link Q_TIME}) of market m's committed quote; the time is NaN before the first. */
  quoteAt(m: number, k: number): number {
    const sl = this.layoutValid ? this.slotOf[m] : -1;
    return sl >= 0 ? this.pq[PS * sl + k] : this.mq[QS * m + k];
  }

  /** Time of market m's committed quote, NaN before the first. */
  quoteTime(m: number): number {
    return this.quoteAt(m, Q_TIME);
  }

  /** The kind (see R_TEXT) of market m's committed quote's exact texts. */
  private textKind(m: number): number {
    const r = RS * m;
    const k = this.rec[r + R_TEXT];
    return this.rec[r + R_STAGE] >= this.stageBase ? k >> 2 : k & 3;
  }

  /** Stages an accepted quote of market m for the next tick. */
  stage(m: number, q: QuoteEvent): void {
    const long =
      q.bidPrice.text.length > FLOAT64_EXACT_CHARS ||
      q.askPrice.text.length > FLOAT64_EXACT_CHARS ||
      q.bidSize.text.length > FLOAT64_EXACT_CHARS ||
      q.askSize.text.length > FLOAT64_EXACT_CHARS
        ? 1
        : 0;
    const i = this.stagePosition(m, long);
    this.sQuote[i] = q;
    this.sTexts[i] = undefined;
    const sq = this.sq;
    const o = 5 * i;
    sq[o] = q.bidPrice.value;
    sq[o + 1] = q.askPrice.value;
    sq[o + 2] = q.bidSize.value;
    sq[o + 3] = q.askSize.value;
    sq[o + 4] = q.time;
    this.sLong[i] = long;
  }

  /**
   * Stages an accepted quote of market m from its values and time (a row of a columnar batch):
   * what {@link stage} does with the quote event of these values, without the object. `texts`:
   * its exact texts [bid, bid_size, ask, ask_size] when one of them is not String(value), else
   * undefined.
   */
  stageValues(m: number, bid: number, bidSize: number, ask: number, askSize: number, time: number, texts: string[] | undefined): void {
    const long =
      texts === undefined
        ? 2
        : texts[0].length > FLOAT64_EXACT_CHARS ||
            texts[1].length > FLOAT64_EXACT_CHARS ||
            texts[2].length > FLOAT64_EXACT_CHARS ||
            texts[3].length > FLOAT64_EXACT_CHARS
          ? 1
          : 0;
    const i = this.stagePosition(m, long);
    this.sQuote[i] = undefined;
    this.sTexts[i] = texts;
    const sq = this.sq;
    const o = 5 * i;
    sq[o] = bid;
    sq[o + 1] = ask;
    sq[o + 2] = bidSize;
    sq[o + 3] = askSize;
    sq[o + 4] = time;
    this.sLong[i] = long;
  }

  /** Market m's position in {@link stagedList}, adding it when not staged yet. */
  private stagePosition(m: number, long: number): number {
    const rec = this.rec;
    const r = RS * m;
    const at = rec[r + R_STAGE] - this.stageBase;
    if (at >= 0) {
      rec[r + R_TEXT] = (rec[r + R_TEXT] & ~3) | long;
      return at;
    }
    const i = this.stagedCount++;
    rec[r + R_STAGE] = this.stageBase + i;
    // The quote staged before is the committed one now.
    rec[r + R_TEXT] = ((rec[r + R_TEXT] & 3) << 2) | long;
    this.stagedList[i] = m;
    this.sQuote[i] = undefined;
    this.sTexts[i] = undefined;
    if (this.stagedCount > this.sLong.length) {
      const cap = 2 * this.sLong.length;
      this.sq = growF64(this.sq, QS * cap);
      this.sLong = growU8(this.sLong, cap);
      this.sSlot = growI32(this.sSlot, cap);
      this.sPair = growI32(this.sPair, cap);
    }
    this.sSlot[i] = rec[r + R_SLOT];
    this.sPair[i] = rec[r + R_PAIR];
    return i;
  }

  /** The staged quote of market m (at position i of {@link stagedList}) as its event. */
  private stagedEvent(m: number, i: number): QuoteEvent {
    const q = this.sQuote[i];
    if (q !== undefined) return structuredClone(q);
    const o = 5 * i;
    const sq = this.sq;
    const t = this.sTexts[i];
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

  /**
   * Commits the staged quotes (start of a tick) and marks their pairs dirty in `pairDirty`. Per
   * market it reads the staged values, slot and pair in order and writes the quote in one place
   * (its slot while the layout is valid, else its record); the market's record was updated when
   * the quote was staged.
   */
  commitStaged(pairDirty: Uint8Array): void {
    const { sQuote, sTexts, mq, text, pair, sq, sLong, sSlot, sPair, pq } = this;
    const layout = this.layoutValid;
    const list = this.stagedList;
    const n = this.stagedCount;
    for (let i = 0; i < n; i++) {
      const m = list[i];
      const o = QS * i;
      let pr: number;
      let sl = -1;
      if (layout) {
        pr = sPair[i];
        sl = sSlot[i];
      } else pr = pair[m];
      const to = sl >= 0 ? pq : mq;
      const d = sl >= 0 ? PS * sl : QS * m;
      to[d] = sq[o];
      to[d + 1] = sq[o + 1];
      to[d + 2] = sq[o + 2];
      to[d + 3] = sq[o + 3];
      to[d + 4] = sq[o + 4];
      if (sLong[i] === 1) {
        const q = sQuote[i];
        if (q !== undefined) text[m] = [q.bidPrice.text, q.askPrice.text, q.bidSize.text, q.askSize.text];
        else {
          const st = sTexts[i]!;
          text[m] = [st[0], st[2], st[1], st[3]];
        }
      }
      if (pr >= 0) pairDirty[pr] = 1;
      sQuote[i] = undefined;
      sTexts[i] = undefined;
    }
    this.stagedCount = 0;
    this.stageBase += n;
    if (this.stageBase > STAGE_LIMIT) {
      const rec = this.rec;
      for (let r = 0; r < rec.length; r += RS) rec[r + R_STAGE] = -1;
      this.stageBase = 0;
    }
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
      const { pMarket, pq } = this;
      for (let sl = 0; sl < pMarket.length; sl++) {
        const m = pMarket[sl];
        pq[PS * sl + S_VOLUME] = volume[m];
        pq[PS * sl + S_EXCHANGE] = eligible[m] ? exchange[m] : -1;
      }
    }
  }

  /**
   * The layout no longer matches the markets (see {@link layoutValid}): the committed quotes it
   * holds go back to the per-market record.
   */
  invalidateLayout(): void {
    if (!this.layoutValid) return;
    const { pMarket, pq, mq } = this;
    for (let sl = 0; sl < pMarket.length; sl++) {
      const m = pMarket[sl];
      for (let k = 0; k < QS; k++) mq[QS * m + k] = pq[PS * sl + k];
    }
    this.layoutValid = false;
  }

  /** Builds the pair-major layout of the pairs' market lists (`pairMarkets[pr]`, in order). */
  buildLayout(pairMarkets: readonly (readonly number[])[]): void {
    const P = pairMarkets.length;
    const start = new Int32Array(P + 1);
    for (let pr = 0; pr < P; pr++) start[pr + 1] = start[pr] + pairMarkets[pr].length;
    const total = start[P];
    const pMarket = new Int32Array(total);
    const rec = this.rec;
    this.slotOf.fill(-1);
    for (let r = 0; r < rec.length; r += RS) {
      rec[r + R_SLOT] = -1;
      rec[r + R_PAIR] = -1;
    }
    for (let pr = 0; pr < P; pr++) {
      const list = pairMarkets[pr];
      for (let i = 0; i < list.length; i++) {
        const sl = start[pr] + i;
        const m = list[i];
        pMarket[sl] = m;
        this.slotOf[m] = sl;
        rec[RS * m + R_SLOT] = sl;
        rec[RS * m + R_PAIR] = pr;
      }
    }
    this.pStart = start;
    this.pMarket = pMarket;
    const pExchange = new Int32Array(total);
    const pq = new Float64Array(PS * total);
    const mq = this.mq;
    for (let sl = 0; sl < total; sl++) {
      const m = pMarket[sl];
      const o = PS * sl;
      for (let k = 0; k < QS; k++) pq[o + k] = mq[QS * m + k];
      pExchange[sl] = this.exchange[m];
      pq[o + S_VOLUME] = this.volume[m];
      pq[o + S_EXCHANGE] = this.eligible[m] ? this.exchange[m] : -1;
      pq[o + S_MARKET] = m;
    }
    this.pExchange = pExchange;
    this.pq = pq;
    const list = this.stagedList;
    for (let i = 0; i < this.stagedCount; i++) {
      this.sSlot[i] = rec[RS * list[i] + R_SLOT];
      this.sPair[i] = rec[RS * list[i] + R_PAIR];
    }
    this.layoutValid = true;
  }

  /** Exact decimal texts [bid, ask, bid_size, ask_size] of market m's committed quote (see {@link text}). */
  exactTexts(m: number): string[] {
    if (this.textKind(m) === 1) return this.text[m]!;
    return [Q_BID, Q_ASK, Q_BID_SIZE, Q_ASK_SIZE].map((k) => String(this.quoteAt(m, k)));
  }

  /**
   * The exact texts [bid, ask, bid_size, ask_size] market m's committed quote keeps (a copy), or
   * null: the texts of a quote staged from values are kept when one of them is long, as
   * {@link stage} keeps them.
   */
  private keptTexts(m: number): string[] | null {
    const kind = this.textKind(m);
    if (kind === 1) return [...this.text[m]!];
    if (kind === 2) {
      const v = [Q_BID, Q_ASK, Q_BID_SIZE, Q_ASK_SIZE].map((k) => this.quoteAt(m, k));
      if (v.some(floatTextLong)) return v.map(String);
    }
    return null;
  }

  /** Value k (see {@link Q_BID}) of the committed quotes of markets 0 .. n - 1, NaN as null. */
  private quoteColumn(k: number, n: number): (number | null)[] {
    const out: (number | null)[] = [];
    for (let m = 0; m < n; m++) {
      const v = this.quoteAt(m, k);
      out.push(Number.isNaN(v) ? null : v);
    }
    return out;
  }

  /** The table as plain JSON (see {@link MarketTableJSON}); the volume window is snapshotted separately. */
  toJSON(): MarketTableJSON {
    const n = this.index.size;
    const staged = this.stagedList.slice(0, this.stagedCount);
    return {
      names: [...this.index.names],
      exchange: Array.from(this.exchange.subarray(0, n)),
      base: Array.from(this.base.subarray(0, n)),
      quote: Array.from(this.quote.subarray(0, n)),
      type: this.type.slice(0, n),
      pair: Array.from(this.pair.subarray(0, n)),
      quote_state: [Q_BID, Q_ASK, Q_BID_SIZE, Q_ASK_SIZE, Q_TIME].map((k) => this.quoteColumn(k, n)),
      quote_text: Array.from({ length: n }, (_, m) => this.keptTexts(m)),
      staged,
      staged_quotes: staged.map((m, i) => this.stagedEvent(m, i)),
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
    const columns = json.quote_state.map(floatColumn);
    for (let k = 0; k < QS; k++) {
      const col = columns[k];
      for (let m = 0; m < n; m++) this.mq[QS * m + k] = col[m];
    }
    for (let m = 0; m < n; m++) {
      const txt = json.quote_text[m];
      this.text[m] = txt ? [...txt] : undefined;
      // Nothing is staged yet: the kind of the committed quote is the last staged one's.
      this.rec[RS * m + R_TEXT] = txt ? 1 : 0;
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
