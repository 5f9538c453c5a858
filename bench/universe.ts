/**
 * Seeded market universes for the benchmarks (docs/performance.md): S = 1,000 markets / 400 pairs / 100
 * assets, M = 10,000 / 4,000 / 600, L = 40,000 / 15,000 / 2,000 over 150 exchanges.
 *
 * Realistic shape: most assets are quoted against USD, USDT, BTC and EUR; the main pairs trade on
 * many exchanges and the long tail on one to three; exchanges have rank levels 0-2 and a few are
 * not legitimate; some markets quote far from the others (outliers) and some stop quoting (stale).
 * Prices are consistent across pairs (each asset has a USD price that random-walks), so cross
 * rates are meaningful. Events are built as typed objects (no parsing) so the tick and apply
 * benchmarks measure the engine alone.
 */
import type { MetricEvent } from '../src/core/metrics/events.js';
import type { QuoteEvent, TradeEvent, XrateEvent } from '../src/core/types.js';

/** The universe sizes S, M and L of the benchmarks (docs/benchmarks.md). */
export const SIZES = {
  S: { markets: 1_000, pairs: 400, assets: 100, exchanges: 20 },
  M: { markets: 10_000, pairs: 4_000, assets: 600, exchanges: 80 },
  L: { markets: 40_000, pairs: 15_000, assets: 2_000, exchanges: 150 },
} as const;
export type SizeName = keyof typeof SIZES;

/** xoshiro128** PRNG: deterministic from a seed. */
export class Rng {
  private s = new Uint32Array(4);
  constructor(seed: number) {
    let x = seed >>> 0 || 1;
    for (let i = 0; i < 4; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      this.s[i] = x >>> 0;
    }
  }
  next(): number {
    const s = this.s;
    const r = Math.imul(((Math.imul(s[1], 5) << 7) | (Math.imul(s[1], 5) >>> 25)) >>> 0, 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 11) | (s[3] >>> 21);
    return r / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  normal(): number {
    const u = Math.max(1e-12, this.next());
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
}

const QUOTES = ['USD', 'USDT', 'BTC', 'EUR'];

function dec(v: number, digits = 8): { value: number; text: string } {
  const text = v
    .toPrecision(digits)
    .replace(/(\.\d*?)0+$/, '$1')
    .replace(/\.$/, '');
  return { value: Number(text), text };
}

/** A generated universe and the events that drive it. */
export class Universe {
  readonly assets: string[] = [];
  readonly exchanges: string[] = [];
  readonly pairs: [number, number][] = [];
  /** Per market: symbol id, pair index, exchange index, price bias (1 = fair), quoting (false = goes stale). */
  readonly markets: { symbol: string; pair: number; exchange: number; bias: number; live: boolean }[] = [];
  private usd: Float64Array;
  private readonly rng: Rng;

  constructor(
    readonly size: SizeName,
    seed = 42,
  ) {
    const cfg = SIZES[size];
    const rng = new Rng(seed);
    this.rng = rng;
    this.assets.push(...QUOTES);
    for (let i = this.assets.length; i < cfg.assets; i++) this.assets.push(`A${String(i).padStart(4, '0')}`);
    this.usd = new Float64Array(cfg.assets);
    this.usd[0] = 1;
    this.usd[1] = 1.0005;
    this.usd[2] = 60_000;
    this.usd[3] = 1.08;
    for (let i = 4; i < cfg.assets; i++) this.usd[i] = Math.exp(rng.normal() * 3);
    for (let e = 0; e < cfg.exchanges; e++) this.exchanges.push(`EX${String(e).padStart(3, '0')}`);
    // Pairs: BTC/USD, BTC/USDT, BTC/EUR, USDT/USD, EUR/USD, then each asset against the main quotes, then random crosses.
    const seen = new Set<string>();
    const addPair = (b: number, q: number): boolean => {
      if (b === q || seen.has(`${b}/${q}`) || seen.has(`${q}/${b}`)) return false;
      seen.add(`${b}/${q}`);
      this.pairs.push([b, q]);
      return this.pairs.length >= cfg.pairs;
    };
    const main: [number, number][] = [
      [2, 0],
      [2, 1],
      [2, 3],
      [1, 0],
      [3, 0],
    ];
    for (const [b, q] of main) addPair(b, q);
    outer: for (let round = 0; round < 4; round++) {
      for (let a = 4; a < cfg.assets; a++) {
        const q = [1, 0, 2, 3][round];
        if (round >= 2 && rng.next() < 0.4) continue;
        if (addPair(a, q)) break outer;
      }
    }
    while (this.pairs.length < cfg.pairs) addPair(4 + rng.int(cfg.assets - 4), 4 + rng.int(cfg.assets - 4));
    // Markets: main pairs on many exchanges, the tail on few; total exactly cfg.markets.
    const perPair = new Int32Array(cfg.pairs).fill(1);
    let total = cfg.pairs;
    while (total < cfg.markets) {
      // Zipf-like: low pair indices (main pairs) attract more exchanges.
      const p = Math.min(cfg.pairs - 1, Math.floor(rng.next() ** 2.2 * cfg.pairs));
      if (perPair[p] < cfg.exchanges) {
        perPair[p]++;
        total++;
      }
    }
    for (let p = 0; p < cfg.pairs; p++) {
      const used = new Set<number>();
      for (let k = 0; k < perPair[p]; k++) {
        let e = rng.int(cfg.exchanges);
        while (used.has(e)) e = (e + 1) % cfg.exchanges;
        used.add(e);
        const [b, q] = this.pairs[p];
        const bias = rng.next() < 0.02 ? 1 + (rng.next() < 0.5 ? -1 : 1) * (0.01 + rng.next() * 0.03) : 1 + rng.normal() * 0.0005;
        this.markets.push({
          symbol: `${this.exchanges[e]}_SPOT_${this.assets[b]}_${this.assets[q]}`,
          pair: p,
          exchange: e,
          bias,
          live: rng.next() > 0.03,
        });
      }
    }
  }

  /** The fair price of market m's pair. */
  private fair(m: number): number {
    const [b, q] = this.pairs[this.markets[m].pair];
    return this.usd[b] / this.usd[q];
  }

  /** Moves every asset's USD price one step of a random walk. */
  step(): void {
    for (let i = 4; i < this.usd.length; i++) this.usd[i] *= 1 + this.rng.normal() * 0.0002;
    this.usd[2] *= 1 + this.rng.normal() * 0.0001;
  }

  quote(m: number, time: number): QuoteEvent {
    const mk = this.markets[m];
    const mid = this.fair(m) * mk.bias;
    const half = mid * (0.00005 + this.rng.next() * 0.0015);
    return {
      type: 'quote',
      time,
      symbolId: mk.symbol,
      bidPrice: dec(mid - half),
      askPrice: dec(mid + half),
      bidSize: dec(0.1 + this.rng.next() * 10, 4),
      askSize: dec(0.1 + this.rng.next() * 10, 4),
    };
  }

  trade(m: number, time: number): TradeEvent {
    return {
      type: 'trade',
      time,
      symbolId: this.markets[m].symbol,
      price: dec(this.fair(m) * this.markets[m].bias),
      size: dec(0.01 + this.rng.next() * 5, 4),
    };
  }

  /**
   * Events that make every market eligible and quoting at the first tick: exchange events
   * (ranks 0-2, 2% not legitimate), one trade per market before T0, then a quote per market.
   * `start` must be a whole second; T0 = start + 1 s.
   */
  warmup(start: number): XrateEvent[] {
    const out: XrateEvent[] = [];
    for (const [i, x] of this.exchanges.entries()) {
      out.push({
        type: 'exchange',
        time: start + 100_000,
        exchangeId: x,
        legitimate: i % 50 !== 49,
        rank: i % 3 === 0 ? 2 : i % 3 === 1 ? 1 : 0,
      });
    }
    for (let m = 0; m < this.markets.length; m++) out.push(this.trade(m, start + 200_000));
    for (let m = 0; m < this.markets.length; m++) out.push(this.quote(m, start + 300_000 + (m % 500_000)));
    return out;
  }

  /** Quote updates for the second before `tick`: a `fraction` of the live markets, times in (tick - 1 s, tick). */
  secondOfQuotes(tick: number, fraction: number): QuoteEvent[] {
    this.step();
    const out: QuoteEvent[] = [];
    const n = this.markets.length;
    const k = Math.round(n * fraction);
    for (let i = 0; i < k; i++) {
      const m = this.rng.int(n);
      if (!this.markets[m].live) continue;
      out.push(this.quote(m, tick - 1_000_000 + 1 + Math.floor((i / k) * 999_998)));
    }
    return out;
  }

  /** `count` metric data points (a decimal per market, funding-rate like) for the second before `tick`. */
  secondOfMetrics(tick: number, count: number): MetricEvent[] {
    const out: MetricEvent[] = [];
    for (let i = 0; i < count; i++) {
      const m = this.markets[this.rng.int(this.markets.length)];
      const text = (this.rng.int(2000) / 1e6).toFixed(6);
      out.push({
        type: 'metric',
        time: tick - 1_000_000 + 1 + Math.floor((i / count) * 999_998),
        metricId: 'FUNDING_RATE',
        exchangeId: this.exchanges[m.exchange],
        symbolId: m.symbol,
        value: { kind: 'decimal', dec: { value: Number(text), text } },
      });
    }
    return out;
  }

  /** Trades for the second before `tick`. */
  secondOfTrades(tick: number, count: number): TradeEvent[] {
    const out: TradeEvent[] = [];
    for (let i = 0; i < count; i++)
      out.push(this.trade(this.rng.int(this.markets.length), tick - 1_000_000 + 1 + Math.floor((i / count) * 999_998)));
    return out;
  }
}
