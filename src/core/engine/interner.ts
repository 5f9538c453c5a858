/**
 * String interning for the engine's tables: asset, exchange and symbol ids become dense integer
 * ids at the edges, so the hot state can live in typed-array columns indexed by them.
 *
 * @module
 */

/**
 * Dense ids for strings, in order of first sight (id i is `names[i]`). Ids are never reused, so
 * the order is part of the engine's state and of its snapshot.
 */
export class Interner {
  /** Name -> id. */
  readonly ids = new Map<string, number>();
  /** Id -> name. */
  readonly names: string[] = [];

  /** The id of `name`, or undefined when it was never interned. */
  get(name: string): number | undefined {
    return this.ids.get(name);
  }

  /** The id of `name`, assigning the next id on first sight. */
  intern(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.names.length;
      this.ids.set(name, id);
      this.names.push(name);
    }
    return id;
  }

  /** Number of ids assigned. */
  get size(): number {
    return this.names.length;
  }
}
