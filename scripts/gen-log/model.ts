/**
 * The market model of the log generator: the world (assets, exchanges, markets) and the stream of
 * rows it produces from a seed (see scripts/gen-log.ts for the description of the model).
 *
 * @module
 */
import { C, type GenOptions, type GenRow } from './columns.js';
import { rowToNdjson } from './format.js';
import { Rng } from './rng.js';

// ---------------------------------------------------------------------------------------------
// Static world description.

interface AssetSpec {
  id: string;
  usd: number;
  /** Vol per sqrt(second) of its walk (vs BTC for alts, vs USD for BTC). */
  vol: number;
  pop: number;
}

const QUOTE_ONLY: AssetSpec[] = [
  { id: 'USD', usd: 1, vol: 0, pop: 1 },
  { id: 'USDT', usd: 1.0003, vol: 4e-6, pop: 1 },
  { id: 'EUR', usd: 1.085, vol: 3e-6, pop: 1 },
];

const BASES: AssetSpec[] = [
  { id: 'BTC', usd: 62000, vol: 1.0e-4, pop: 1 },
  { id: 'ETH', usd: 3400, vol: 0.8e-4, pop: 0.75 },
  { id: 'SOL', usd: 130, vol: 1.2e-4, pop: 0.5 },
  { id: 'XRP', usd: 0.62, vol: 1.0e-4, pop: 0.45 },
  { id: 'ADA', usd: 0.71, vol: 1.0e-4, pop: 0.35 },
  { id: 'DOGE', usd: 0.121, vol: 1.3e-4, pop: 0.4 },
  { id: 'LTC', usd: 84.5, vol: 0.9e-4, pop: 0.3 },
  { id: 'DOT', usd: 9.45, vol: 1.0e-4, pop: 0.25 },
  { id: 'AVAX', usd: 40.2, vol: 1.2e-4, pop: 0.25 },
  { id: 'LINK', usd: 19.3, vol: 1.1e-4, pop: 0.25 },
  { id: 'TRX', usd: 0.134, vol: 0.7e-4, pop: 0.2 },
  { id: 'BCH', usd: 398, vol: 1.0e-4, pop: 0.2 },
  { id: 'XLM', usd: 0.128, vol: 0.9e-4, pop: 0.15 },
  { id: 'ATOM', usd: 11.2, vol: 1.0e-4, pop: 0.15 },
  { id: 'UNI', usd: 11.6, vol: 1.2e-4, pop: 0.15 },
  { id: 'ETC', usd: 32.8, vol: 1.0e-4, pop: 0.12 },
  { id: 'FIL', usd: 9.1, vol: 1.2e-4, pop: 0.1 },
  { id: 'NEAR', usd: 5.2, vol: 1.3e-4, pop: 0.1 },
  { id: 'APT', usd: 13.4, vol: 1.3e-4, pop: 0.1 },
  { id: 'ARB', usd: 1.92, vol: 1.4e-4, pop: 0.1 },
];

interface ExchangeSpec {
  id: string;
  quotes: string[];
  /** Timestamp step in 100 ns units: 10000 = ms, 10 = µs, 1 = 100 ns. */
  step: number;
  rank: number;
  activity: number;
  /** Writes numbers as strings. */
  strings?: boolean;
  /** Taker side style. */
  sides?: 'estimated' | 'none';
}

const EXCHANGES: ExchangeSpec[] = [
  { id: 'BINANCE', quotes: ['USDT', 'BTC', 'EUR'], step: 10000, rank: 1, activity: 3 },
  { id: 'COINBASE', quotes: ['USD', 'EUR', 'USDT', 'BTC'], step: 10, rank: 1, activity: 2 },
  { id: 'KRAKEN', quotes: ['USD', 'EUR', 'BTC'], step: 10, rank: 2, activity: 1.5, strings: true },
  { id: 'BITSTAMP', quotes: ['USD', 'EUR', 'BTC', 'USDT'], step: 10, rank: 1, activity: 0.8 },
  { id: 'OKX', quotes: ['USDT', 'BTC', 'USD'], step: 10000, rank: 1, activity: 1.5 },
  { id: 'BYBIT', quotes: ['USDT', 'BTC'], step: 10000, rank: 0, activity: 1.2 },
  { id: 'GEMINI', quotes: ['USD', 'BTC'], step: 10000, rank: 0, activity: 0.4, sides: 'none' },
  { id: 'KUCOIN', quotes: ['USDT', 'BTC'], step: 1, rank: 0, activity: 0.8 },
  { id: 'HTX', quotes: ['USDT', 'BTC'], step: 10000, rank: 0, activity: 0.6, sides: 'estimated' },
  { id: 'GATEIO', quotes: ['USDT', 'BTC'], step: 10000, rank: 0, activity: 0.6 },
  { id: 'BITFINEX', quotes: ['USD', 'USDT', 'EUR', 'BTC'], step: 10000, rank: 1, activity: 0.5 },
  { id: 'MEXC', quotes: ['USDT'], step: 10000, rank: 0, activity: 0.5 },
];

const QUOTE_FACTOR: Record<string, number> = { USDT: 1, USD: 0.8, EUR: 0.3, BTC: 0.3 };

// ---------------------------------------------------------------------------------------------
// Simulation state.

const TICKS_PER_S = 10_000_000; // 100 ns units

interface AssetState {
  id: string;
  /** log of the price (vs BTC for alts, vs USD for BTC/USDT/EUR). */
  x: number;
  mu: number;
  vol: number;
  /** Mean reversion per second (0 = pure walk). */
  theta: number;
  t: number;
  vsBtc: boolean;
}

interface Market {
  symbolId: string;
  ex: number;
  exchangeId: string;
  base: number;
  quote: number;
  perp: boolean;
  bias: number;
  spreadBp: number;
  notional: number;
  priceDec: number;
  sizeDec: number;
  step: number;
  strings: boolean;
  sides: 'normal' | 'estimated' | 'none';
  quoteFrac: number;
  dev: number;
  devT: number;
  silentUntil: number;
  nextSilence: number;
  /** Listing time in seconds since start (0 = from the start). */
  listAt: number;
  announced: boolean;
  declared: boolean;
  /** Last quote: time (s), bid/ask in ticks, size texts; one side often stays as it was. */
  lastT: number;
  lastBid: number;
  lastAsk: number;
  lastBidSize: string;
  lastAskSize: string;
}

function pow10(d: number): number {
  return 10 ** d;
}

/** `x` with `d` decimals, trailing zeros removed. */
function fixed(x: number, d: number): string {
  let s = x.toFixed(d);
  if (d > 0) {
    let e = s.length;
    while (s.charCodeAt(e - 1) === 48) e--;
    if (s.charCodeAt(e - 1) === 46) e--;
    s = s.slice(0, e);
  }
  return s;
}

/** Rounds to `sig` significant digits. */
function roundSig(x: number, sig: number): number {
  if (x <= 0) return x;
  const p = pow10(sig - 1 - Math.floor(Math.log10(x)));
  return Math.round(x * p) / p;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * Generates the rows of a log (see the module description). Most callers want
 * {@link generateLog} (NDJSON lines) or {@link writeLog}.
 *
 * @example
 * ```ts
 * for (const row of generateRows({ seed: 1, events: 10 })) console.log(row.cols[0]);
 * ```
 */
export function* generateRows(opts: GenOptions): Generator<GenRow> {
  const rng = new Rng(opts.seed);
  const total = Math.max(0, Math.floor(opts.events));
  const nEx = clampInt(opts.exchanges ?? 8, 1, EXCHANGES.length);
  const nAssets = clampInt(opts.assets ?? 12, 4, QUOTE_ONLY.length + BASES.length);
  const rate = opts.rate ?? 20;
  if (!(rate > 0)) throw new Error('gen-log: rate must be > 0');
  const badRate = opts.badRate ?? 0;
  const lateRate = opts.lateRate ?? 0;
  const stringRate = opts.stringRate ?? 0.05;
  const startMs = Date.parse(opts.start ?? '2024-03-01T00:00:00Z');
  if (!Number.isFinite(startMs)) throw new Error(`gen-log: bad --start ${String(opts.start)}`);
  const startSec = Math.floor(startMs / 1000);
  const expectedSpan = total / rate; // seconds

  // Assets: USD, USDT, EUR then bases.
  const specs = [...QUOTE_ONLY, ...BASES.slice(0, nAssets - QUOTE_ONLY.length)];
  const assetIdx = new Map(specs.map((s, i) => [s.id, i]));
  const BTC = assetIdx.get('BTC')!;
  const assets: AssetState[] = specs.map((s) => {
    const vsBtc = s.id !== 'BTC' && !QUOTE_ONLY.includes(s);
    const x0 = vsBtc ? Math.log(s.usd / BASES[0].usd) : Math.log(s.usd);
    return {
      id: s.id,
      x: x0 + (s.vol > 0 ? rng.normal() * 0.002 : 0),
      mu: x0,
      vol: s.vol,
      theta: QUOTE_ONLY.includes(s) ? 1 / 3600 : 0,
      t: 0,
      vsBtc,
    };
  });
  const advance = (a: AssetState, t: number): void => {
    const dt = t - a.t;
    if (dt <= 0 || a.vol === 0) {
      if (dt > 0) a.t = t;
      return;
    }
    if (a.theta > 0) {
      const e = Math.exp(-a.theta * dt);
      a.x = a.mu + (a.x - a.mu) * e + a.vol * Math.sqrt((1 - e * e) / (2 * a.theta)) * rng.normal();
    } else {
      a.x += a.vol * Math.sqrt(dt) * rng.normal();
    }
    a.t = t;
  };
  const usdPrice = (i: number, t: number): number => {
    const a = assets[i];
    advance(a, t);
    if (!a.vsBtc) return Math.exp(a.x);
    const b = assets[BTC];
    advance(b, t);
    return Math.exp(a.x + b.x);
  };

  // Exchanges and their roles.
  const exchanges = EXCHANGES.slice(0, nEx).map((e) => ({ ...e, legitimate: true, bias: 0 }));
  const biased = nEx >= 5 ? 4 : nEx >= 3 ? nEx - 1 : -1;
  const illegit = nEx >= 3 ? (nEx - 1 === biased ? nEx - 2 : nEx - 1) : -1;
  if (biased >= 0) {
    exchanges[biased].bias = 0.02;
    exchanges[biased].rank = 1;
  }
  if (illegit >= 0) {
    exchanges[illegit].legitimate = false;
    exchanges[illegit].rank = 0;
  }

  // Markets.
  const markets: Market[] = [];
  const weights: number[] = [];
  const addMarket = (ex: number, base: number, quote: number, perp: boolean, weight: number): Market => {
    const e = exchanges[ex];
    const bSpec = specs[base];
    const px = specs[base].usd / specs[quote].usd;
    const pop = bSpec.pop;
    const m: Market = {
      symbolId: `${e.id}_${perp ? 'PERP' : 'SPOT'}_${specs[base].id}_${specs[quote].id}`,
      ex,
      exchangeId: e.id,
      base,
      quote,
      perp,
      bias: e.bias + (perp ? 0.0004 : 0),
      spreadBp: Math.min(30, Math.max(1, (1 + 22 * (1 - pop) * rng.between(0.5, 1.3)) / (QUOTE_FACTOR[specs[quote].id] ?? 0.3) ** 0.3)),
      notional: 40000 * pop * e.activity * Math.exp(rng.normal() * 0.4),
      priceDec: clampInt(5 - Math.log10(px), 2, 10),
      sizeDec: clampInt(Math.ceil(Math.log10(bSpec.usd)) + 1, 0, 8),
      step: e.step,
      strings: e.strings === true,
      sides: e.sides ?? 'normal',
      quoteFrac: rng.between(0.55, 0.75),
      dev: rng.normal() * 1.5e-4,
      devT: 0,
      silentUntil: -1,
      nextSilence: rng.exp() * 5400,
      listAt: 0,
      announced: false,
      declared: false,
      lastT: -1e9,
      lastBid: 0,
      lastAsk: 0,
      lastBidSize: '',
      lastAskSize: '',
    };
    markets.push(m);
    weights.push(weight);
    return m;
  };
  for (let ex = 0; ex < nEx; ex++) {
    const e = exchanges[ex];
    for (let bi = QUOTE_ONLY.length; bi < specs.length; bi++) {
      const b = specs[bi];
      const rankInList = bi - QUOTE_ONLY.length;
      for (const q of e.quotes) {
        const qi = assetIdx.get(q)!;
        if (qi === bi) continue;
        let p: number;
        if (q === 'USDT' || q === 'USD') p = rankInList < 2 ? 1 : 0.92 - 0.035 * rankInList;
        else if (q === 'EUR') p = rankInList < 2 ? 0.8 : rankInList < 6 ? 0.35 : 0.1;
        else p = rankInList < 6 ? 0.65 : 0.3;
        if (!rng.chance(p)) continue;
        let w = e.activity * b.pop * (QUOTE_FACTOR[q] ?? 0.3) * Math.exp(rng.normal() * 0.5);
        if (rng.chance(0.15)) w *= 0.02; // sparse market
        addMarket(ex, bi, qi, false, w);
      }
    }
    // Stablecoin and fiat pairs.
    const has = (q: string): boolean => e.quotes.includes(q);
    if (has('USD') && has('USDT')) addMarket(ex, assetIdx.get('USDT')!, assetIdx.get('USD')!, false, 0.3 * e.activity);
    if (has('USD') && has('EUR')) addMarket(ex, assetIdx.get('EUR')!, assetIdx.get('USD')!, false, 0.15 * e.activity);
    if (has('USDT') && has('EUR') && !has('USD')) addMarket(ex, assetIdx.get('EUR')!, assetIdx.get('USDT')!, false, 0.15 * e.activity);
  }
  // Two perpetuals (not used for rates): one declared, one known only from its id.
  const perpEx = [0, Math.min(nEx - 1, 5)];
  const btcPerp = addMarket(perpEx[0], BTC, assetIdx.get('USDT')!, true, 2);
  btcPerp.declared = true;
  if (specs.length > QUOTE_ONLY.length + 1 && perpEx[1] !== perpEx[0]) {
    addMarket(perpEx[1], QUOTE_ONLY.length + 1, assetIdx.get('USDT')!, true, 0.8);
  }
  // Which spot markets get a symbol event at the start (about 85%), and one late listing.
  for (const m of markets) if (!m.perp) m.declared = rng.chance(0.85);
  const spotSparse = markets.filter((m) => !m.perp && m.base !== BTC);
  if (spotSparse.length > 0 && expectedSpan > 600) {
    const late = spotSparse[rng.int(spotSparse.length)];
    late.listAt = Math.floor(expectedSpan * 0.4);
    late.declared = true;
  }
  const cum = new Float64Array(weights.length);
  let acc = 0;
  for (let i = 0; i < weights.length; i++) cum[i] = acc += weights[i];
  const pickMarket = (): Market => {
    const u = rng.uniform() * acc;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] > u) hi = mid;
      else lo = mid + 1;
    }
    return markets[lo];
  };

  // Clock: seconds since start (sec) plus 100 ns ticks (frac).
  let sec = 0;
  let frac = 0;
  let isoSec = -1;
  let isoPrefix = '';
  const timeText = (s: number, f: number): string => {
    if (s !== isoSec) {
      isoSec = s;
      const d = new Date((startSec + s) * 1000);
      isoPrefix =
        `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}T` +
        `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}.`;
    }
    const fs = String(f);
    return `${isoPrefix + '0000000'.slice(fs.length) + fs}Z`;
  };

  let emitted = 0;
  const row = (): (string | undefined)[] => new Array<string | undefined>(16).fill(undefined);

  // Start: exchange events, then symbol events.
  const t0 = timeText(0, 0);
  for (const e of exchanges) {
    if (emitted >= total) return;
    const r = row();
    r[C.type] = 'exchange';
    r[C.time] = t0;
    r[C.exchange_id] = e.id;
    r[C.legitimate] = e.legitimate ? 'true' : 'false';
    r[C.rank] = String(e.rank);
    emitted++;
    yield { cols: r, strNums: false };
  }
  const symbolRow = (m: Market, time: string): GenRow => {
    const r = row();
    r[C.type] = 'symbol';
    r[C.time] = time;
    r[C.exchange_id] = m.exchangeId;
    r[C.symbol_id] = m.symbolId;
    r[C.symbol_type] = m.perp ? 'PERPETUAL' : 'SPOT';
    r[C.asset_id_base] = specs[m.base].id;
    r[C.asset_id_quote] = specs[m.quote].id;
    return { cols: r, strNums: false };
  };
  for (const m of markets) {
    if (!m.declared || m.listAt > 0) continue;
    if (emitted >= total) return;
    m.announced = true;
    emitted++;
    yield symbolRow(m, t0);
  }

  // Scheduled exchange events: a 15-minute kill switch on BITSTAMP.
  const scheduled: { at: number; ex: number; legit: boolean }[] = [];
  if (nEx >= 4 && expectedSpan > 3600) {
    const at = Math.floor(expectedSpan * 0.55);
    scheduled.push({ at, ex: 3, legit: false }, { at: at + 900, ex: 3, legit: true });
  }
  const listings = markets.filter((m) => m.listAt > 0).sort((a, b) => a.listAt - b.listAt);

  const book = (m: Market, t: number): { bid: number; ask: number; tick: number; mid: number } => {
    const dt = t - m.devT;
    if (dt > 0) {
      const e = Math.exp(-dt / 60);
      m.dev = m.dev * e + 1.5e-4 * Math.sqrt(1 - e * e) * rng.normal();
      m.devT = t;
    }
    const mid = (usdPrice(m.base, t) / usdPrice(m.quote, t)) * (1 + m.bias) * Math.exp(m.dev);
    const s = m.spreadBp * 1e-4 * rng.between(0.7, 1.4);
    const sc = pow10(m.priceDec);
    let bidT = Math.floor(mid * (1 - s / 2) * sc);
    let askT = Math.ceil(mid * (1 + s / 2) * sc);
    if (bidT < 1) bidT = 1;
    if (askT <= bidT) askT = bidT + 1;
    return { bid: bidT, ask: askT, tick: sc, mid };
  };
  const sizeText = (m: Market, notional: number, t: number, sig: number): string => {
    const units = notional / usdPrice(m.base, t);
    const sc = pow10(m.sizeDec);
    let v = Math.round(roundSig(units, sig) * sc);
    if (v < 1) v = 1;
    return fixed(v / sc, m.sizeDec);
  };

  const quoteRow = (m: Market, t: number, time: string): (string | undefined)[] => {
    const b = book(m, t);
    let bid = b.bid;
    let ask = b.ask;
    let bidSize: string | undefined;
    let askSize: string | undefined;
    // Most book updates change one side only: keep the other when the last quote is recent.
    if (t - m.lastT < 5 && t >= m.lastT) {
      const u = rng.uniform();
      if (u < 0.35 && m.lastBid < ask) {
        bid = m.lastBid;
        bidSize = m.lastBidSize;
      } else if (u < 0.7 && m.lastAsk > bid) {
        ask = m.lastAsk;
        askSize = m.lastAskSize;
      }
    }
    bidSize ??= sizeText(m, m.notional * Math.exp(rng.normal() * 0.9), t, 3);
    askSize ??= sizeText(m, m.notional * Math.exp(rng.normal() * 0.9), t, 3);
    if (t >= m.lastT) {
      m.lastT = t;
      m.lastBid = bid;
      m.lastAsk = ask;
      m.lastBidSize = bidSize;
      m.lastAskSize = askSize;
    }
    const r = row();
    r[C.type] = 'quote';
    r[C.time] = time;
    r[C.symbol_id] = m.symbolId;
    r[C.bid_price] = fixed(bid / b.tick, m.priceDec);
    r[C.bid_size] = bidSize;
    r[C.ask_price] = fixed(ask / b.tick, m.priceDec);
    r[C.ask_size] = askSize;
    return r;
  };
  const tradeRow = (m: Market, t: number, time: string): (string | undefined)[] => {
    const b = book(m, t);
    const buy = rng.chance(0.5);
    const r = row();
    r[C.type] = 'trade';
    r[C.time] = time;
    r[C.symbol_id] = m.symbolId;
    r[C.price] = fixed((buy ? b.ask : b.bid) / b.tick, m.priceDec);
    r[C.size] = sizeText(m, 400 * Math.exp(rng.normal() * 1.4), t, 3);
    if (m.sides === 'normal') r[C.taker_side] = rng.chance(0.02) ? 'UNKNOWN' : buy ? 'BUY' : 'SELL';
    else if (m.sides === 'estimated') r[C.taker_side] = buy ? 'BUY_ESTIMATED' : 'SELL_ESTIMATED';
    return r;
  };
  const badRow = (m: Market, t: number, time: string): GenRow => {
    const k = rng.int(10);
    const strNums = m.strings || rng.chance(stringRate);
    switch (k) {
      case 0: {
        // Invalid JSON: a truncated line, or a stray character.
        const line = rowToNdjson({ cols: quoteRow(m, t, time), strNums });
        const broken = rng.chance(0.5) ? line.slice(0, 10 + rng.int(line.length - 20)) : `${line.slice(0, -1)},}`;
        return { cols: [], strNums: false, broken };
      }
      case 1: {
        const r = rng.chance(0.5) ? quoteRow(m, t, time) : tradeRow(m, t, time);
        const col = r[C.type] === 'quote' ? (rng.chance(0.5) ? C.bid_size : C.ask_size) : C.size;
        r[col] = `-${r[col]}`;
        return { cols: r, strNums };
      }
      case 2: {
        const r = tradeRow(m, t, time);
        r[C.price] = '0';
        return { cols: r, strNums };
      }
      case 3: {
        const r = rng.chance(0.5) ? quoteRow(m, t, time) : tradeRow(m, t, time);
        const cands = r[C.type] === 'quote' ? [C.bid_price, C.ask_size, C.time, C.symbol_id] : [C.price, C.size, C.time];
        r[cands[rng.int(cands.length)]] = undefined;
        return { cols: r, strNums };
      }
      case 4: {
        const r = quoteRow(m, t, time);
        r[C.type] = rng.chance(0.5) ? 'book_snapshot' : 'ohlcv';
        return { cols: r, strNums };
      }
      case 5: {
        const r = tradeRow(m, t, time);
        r[C.time] = rng.chance(0.5) ? time.replace('T', ' at ') : `${time.slice(0, 5)}13${time.slice(7)}`;
        return { cols: r, strNums };
      }
      case 6: {
        const r = quoteRow(m, t, time);
        r[C.symbol_id] = `${m.exchangeId}-${specs[m.base].id}${specs[m.quote].id}`;
        return { cols: r, strNums };
      }
      case 7:
      case 8: {
        // Crossed book (bid > ask).
        const r = quoteRow(m, t, time);
        const bid = r[C.bid_price];
        r[C.bid_price] = r[C.ask_price];
        r[C.ask_price] = bid;
        const b = Number(r[C.bid_price]);
        r[C.bid_price] = fixed(b * 1.004, m.priceDec);
        return { cols: r, strNums };
      }
      default: {
        // Spread above 67%.
        const r = quoteRow(m, t, time);
        const b = book(m, t);
        r[C.bid_price] = fixed(b.mid * 0.6, m.priceDec);
        r[C.ask_price] = fixed(b.mid * 1.45, m.priceDec);
        return { cols: r, strNums };
      }
    }
  };

  const meanGap = TICKS_PER_S / rate;
  while (emitted < total) {
    // Advance the clock.
    frac += Math.max(1, Math.round(rng.exp() * meanGap));
    if (frac >= TICKS_PER_S) {
      sec += Math.floor(frac / TICKS_PER_S);
      frac %= TICKS_PER_S;
    }
    // Scheduled events that are due.
    while (scheduled.length > 0 && scheduled[0].at <= sec && emitted < total) {
      const s = scheduled.shift()!;
      const r = row();
      r[C.type] = 'exchange';
      r[C.time] = timeText(sec, frac);
      r[C.exchange_id] = exchanges[s.ex].id;
      r[C.legitimate] = s.legit ? 'true' : 'false';
      r[C.rank] = String(exchanges[s.ex].rank);
      emitted++;
      yield { cols: r, strNums: false };
    }
    while (listings.length > 0 && listings[0].listAt <= sec && emitted < total) {
      const m = listings.shift()!;
      m.announced = true;
      emitted++;
      yield symbolRow(m, timeText(sec, frac));
    }
    if (emitted >= total) break;

    const m = pickMarket();
    if (m.listAt > sec) continue;
    if (sec >= m.nextSilence) {
      m.silentUntil = m.nextSilence + rng.between(120, 720);
      m.nextSilence = m.silentUntil + rng.exp() * 5400;
    }
    if (sec < m.silentUntil) continue;

    // Timestamp at the exchange's precision (rounded up, so time never goes back).
    if (m.step > 1) {
      frac = Math.ceil(frac / m.step) * m.step;
      if (frac >= TICKS_PER_S) {
        sec += 1;
        frac -= TICKS_PER_S;
      }
    }
    let ts = sec;
    let tf = frac;
    if (lateRate > 0 && rng.chance(lateRate)) {
      const back = Math.round(rng.between(2, 60) * TICKS_PER_S);
      const all = sec * TICKS_PER_S + frac - back;
      if (all >= 0) {
        ts = Math.floor(all / TICKS_PER_S);
        tf = all - ts * TICKS_PER_S;
        if (m.step > 1) tf = Math.floor(tf / m.step) * m.step;
      }
    }
    const t = ts + tf / TICKS_PER_S;
    const time = timeText(ts, tf);
    emitted++;
    if (badRate > 0 && rng.chance(badRate)) {
      yield badRow(m, t, time);
      continue;
    }
    const strNums = m.strings || rng.chance(stringRate);
    const cols = rng.uniform() < m.quoteFrac ? quoteRow(m, t, time) : tradeRow(m, t, time);
    yield { cols, strNums };
  }
}

function clampInt(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, Math.round(v)));
}
