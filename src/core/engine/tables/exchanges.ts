/**
 * The exchange table: legitimacy and rank per exchange (rules 4 and 9), committed as of the last
 * tick, plus the changes received since, which the next tick commits.
 *
 * @module
 */
import { Interner } from '../interner.js';
import { growF64, growU8 } from './columns.js';

/** Snapshot of an {@link ExchangeTable} (the `exchanges` part of the engine snapshot; key order is part of the format). */
export interface ExchangeTableJSON {
  names: string[];
  legit: number[];
  rank: number[];
  stagedLegit: number[];
  stagedRank: number[];
  staged: number[];
}

/**
 * Typed-array columns indexed by exchange id. An exchange event is staged and takes effect at the
 * next tick (docs/methodology.md section 2), so the committed columns are always "as of the last
 * tick"; an unknown exchange is legitimate with rank 0 until told otherwise.
 */
export class ExchangeTable {
  /** Exchange id strings <-> integer ids. */
  readonly index = new Interner();
  /** Committed legitimacy, 1 or 0 (rule 4). */
  legit = new Uint8Array(0);
  /** Committed rank (rule 9). */
  rank = new Float64Array(0);
  /** Legitimacy received since the last tick. */
  stagedLegit = new Uint8Array(0);
  /** Rank received since the last tick. */
  stagedRank = new Float64Array(0);
  /** 1 when the exchange is in {@link stagedList}. */
  staged = new Uint8Array(0);
  /** Exchanges with a staged change, in order of arrival. */
  readonly stagedList: number[] = [];
  /** Markets of each exchange (a legitimacy or rank change dirties their pairs). */
  readonly markets: number[][] = [];

  /** The id of exchange `name`, creating it (legitimate, rank 0) on first sight. */
  ensure(name: string): number {
    const id = this.index.intern(name);
    while (this.markets.length <= id) this.markets.push([]);
    const n = this.index.size;
    if (n > this.legit.length) {
      this.legit = growU8(this.legit, n, 1);
      this.rank = growF64(this.rank, n, 0);
      this.stagedLegit = growU8(this.stagedLegit, n, 1);
      this.stagedRank = growF64(this.stagedRank, n, 0);
      this.staged = growU8(this.staged, n, 0);
    }
    return id;
  }

  /** Stages an exchange event for the next tick (the last one before the tick wins). */
  stage(x: number, legitimate: boolean, rank: number): void {
    this.stagedLegit[x] = legitimate ? 1 : 0;
    this.stagedRank[x] = rank;
    if (!this.staged[x]) {
      this.staged[x] = 1;
      this.stagedList.push(x);
    }
  }

  /**
   * Commits the staged changes (start of a tick; rule 4's exclusions act at once). A change of
   * legitimacy or rank marks the pairs of the exchange's markets dirty in `pairDirty`.
   */
  commitStaged(marketPair: Int32Array, pairDirty: Uint8Array): void {
    for (const x of this.stagedList) {
      if (this.legit[x] !== this.stagedLegit[x] || this.rank[x] !== this.stagedRank[x]) {
        for (const m of this.markets[x]) if (marketPair[m] >= 0) pairDirty[marketPair[m]] = 1;
      }
      this.legit[x] = this.stagedLegit[x];
      this.rank[x] = this.stagedRank[x];
      this.staged[x] = 0;
    }
    // Most ticks have no exchange event: no call to truncate an empty list.
    if (this.stagedList.length > 0) this.stagedList.length = 0;
  }

  /** The table as plain JSON (see {@link ExchangeTableJSON}). */
  toJSON(): ExchangeTableJSON {
    const n = this.index.size;
    return {
      names: [...this.index.names],
      legit: Array.from(this.legit.subarray(0, n)),
      rank: Array.from(this.rank.subarray(0, n)),
      stagedLegit: Array.from(this.stagedLegit.subarray(0, n)),
      stagedRank: Array.from(this.stagedRank.subarray(0, n)),
      staged: [...this.stagedList],
    };
  }

  /** Loads {@link toJSON} output into this (empty) table. The exchanges' market lists are rebuilt as markets are defined. */
  restore(json: ExchangeTableJSON): void {
    for (const x of json.names) this.ensure(x);
    const n = json.names.length;
    for (let x = 0; x < n; x++) {
      this.legit[x] = json.legit[x];
      this.rank[x] = json.rank[x];
      this.stagedLegit[x] = json.stagedLegit[x];
      this.stagedRank[x] = json.stagedRank[x];
    }
    for (const x of json.staged) {
      this.staged[x] = 1;
      this.stagedList.push(x);
    }
  }
}
