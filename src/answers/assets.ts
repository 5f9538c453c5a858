/**
 * The one lookup of an asset id as the routes take it: the id exactly as known, else the known id
 * equal to it ignoring case (`btc` finds `BTC`). The rate routes and the explain route take the id
 * equal ignoring case only when exactly one is ({@link AssetResolver.resolve}); the history route
 * takes the first in the order the ids were given ({@link AssetResolver.resolveFirst}).
 *
 * @module
 */

/** The known ids of one upper-cased spelling: the first given, and whether another differs from it. */
interface Spelling {
  first: string;
  ambiguous: boolean;
}

/**
 * Resolves asset ids against a fixed set of known ids (see the module description).
 *
 * @example
 * ```ts
 * const r = new AssetResolver(['BTC', 'USD', 'eth', 'ETH']);
 * r.resolve('btc'); // 'BTC'
 * r.resolve('Eth'); // undefined: eth and ETH both match
 * r.resolveFirst('Eth'); // 'eth'
 * ```
 */
export class AssetResolver {
  private readonly exact = new Set<string>();
  private readonly upper = new Map<string, Spelling>();

  /** @param ids - the known asset ids, in the order {@link resolveFirst} prefers them */
  constructor(ids: Iterable<string>) {
    for (const id of ids) {
      if (this.exact.has(id)) continue;
      this.exact.add(id);
      const u = id.toUpperCase();
      const s = this.upper.get(u);
      if (s === undefined) this.upper.set(u, { first: id, ambiguous: false });
      else s.ambiguous = true;
    }
  }

  /** `asset` when it is known, else the one known id equal to it ignoring case, else undefined. */
  resolve(asset: string): string | undefined {
    if (this.exact.has(asset)) return asset;
    const s = this.upper.get(asset.toUpperCase());
    return s === undefined || s.ambiguous ? undefined : s.first;
  }

  /** `asset` when it is known, else the first known id equal to it ignoring case, else undefined. */
  resolveFirst(asset: string): string | undefined {
    if (this.exact.has(asset)) return asset;
    return this.upper.get(asset.toUpperCase())?.first;
  }
}
