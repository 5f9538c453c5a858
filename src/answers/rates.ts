/**
 * The rate routes' answers from a {@link RateSource} (a pair table of the database, or an
 * engine's state): one rate, or every rate of an asset, with asset ids resolved as
 * {@link AssetResolver.resolve} does, and a {@link noDataError} naming why a rate is missing.
 *
 * @module
 */
import { formatTime } from '../core/time.js';
import { wireNumber } from '../core/wire.js';
import { AssetResolver } from './assets.js';
import { noDataError } from './noData.js';
import type { CachedRate, ExchangeRates, ExchangeRatesRate, RateSource, RatesQuery } from './types.js';

/** The resolver of each source's assets, made at its first question (sources are cached by tick). */
const resolvers = new WeakMap<RateSource, AssetResolver>();

/** The asset resolver of `src`'s assets. */
function resolverOf(src: RateSource): AssetResolver {
  let r = resolvers.get(src);
  if (r === undefined) {
    r = new AssetResolver(src.assets());
    resolvers.set(src, r);
  }
  return r;
}

function missing(src: RateSource, base: string, quote: string, rb: string | undefined, rq: string | undefined): string {
  const at = formatTime(src.tick);
  // Why there is none is the explain route's answer (engine.whyNoRate): rule 8's warm-up, staleness, ...
  const why = `the explain route, /v1/exchangerate/${base}/${quote}/explain, names the first reason: not yet eligible, stale, spread, rank or no path`;
  if (rb === undefined) return `no rate for ${base}/${quote} at ${at}: unknown asset "${base}" (no pair with a rate involves it; ${why})`;
  if (rq === undefined) return `no rate for ${base}/${quote} at ${at}: unknown asset "${quote}" (no pair with a rate involves it; ${why})`;
  return `no rate for ${base}/${quote} at ${at}: no path from ${rb} to ${rq} in the graph of pairs with a rate (${why})`;
}

/** rate(base, quote) from a rate source, or a no-data error naming why there is none. */
export function rateFrom(src: RateSource, base: string, quote: string): CachedRate {
  const assets = resolverOf(src);
  const rb = assets.resolve(base);
  const rq = assets.resolve(quote);
  const r = rb !== undefined && rq !== undefined ? src.rate(rb, rq) : undefined;
  if (!r) throw noDataError(missing(src, base, quote, rb, rq));
  return r;
}

/** Every rate of `base` from a rate source (see {@link RateProvider.rates}). */
export function ratesFrom(src: RateSource, base: string, q: RatesQuery): ExchangeRates {
  const assets = resolverOf(src);
  const rb = assets.resolve(base);
  if (rb === undefined)
    throw noDataError(`no rates of ${base} at ${formatTime(src.tick)}: unknown asset "${base}" (no pair with a rate involves it)`);
  let targets: string[];
  if (q.filter && q.filter.length > 0) {
    const set = new Set<string>();
    for (const f of q.filter) {
      const r = assets.resolve(f);
      if (r !== undefined) set.add(r);
    }
    targets = [...set].sort();
  } else targets = src.assets().filter((a) => a !== rb);
  const rates: ExchangeRatesRate[] = [];
  for (const t of targets) {
    const r = src.rate(rb, t);
    if (!r) continue;
    rates.push({ time: r.value.time, asset_id_quote: t, rate: q.invert ? wireNumber(1 / r.raw) : r.value.rate });
  }
  return { asset_id_base: rb, rates };
}
