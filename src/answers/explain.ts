/**
 * The explain route's answer from an engine's current state.
 *
 * @module
 */
import type { Engine } from '../core/engine.js';
import type { RateExplanation } from '../core/provenance.js';
import { formatTime } from '../core/time.js';
import { wireExplanation } from '../core/wire.js';
import { AssetResolver } from './assets.js';
import { noDataError } from './noData.js';
import { floorSecond } from '../core/time.js';

/** Explains with an engine's current state (its rates as written); no data when it has no rate or `at` is before its last tick. */
export function explainWith(engine: Engine, base: string, quote: string, at: number | undefined): RateExplanation {
  const last = engine.lastTickTime;
  if (at !== undefined && last !== undefined && floorSecond(at) < last) {
    throw noDataError(
      `provenance is kept for the latest tick ${formatTime(last)} only, not for ${formatTime(at)} (use "xrate explain LOG --at TIME")`,
    );
  }
  const assets = new AssetResolver(engine.assetIds());
  const e = engine.explain(assets.resolve(base) ?? base, assets.resolve(quote) ?? quote);
  if (e.kind === 'none') throw noDataError(`no rate for ${base}/${quote}${e.tick ? ` at ${e.tick}` : ''}: ${e.message ?? 'none'}`);
  return wireExplanation(e);
}
