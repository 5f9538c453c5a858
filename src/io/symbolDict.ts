/**
 * The symbol ids of the NDJSON byte reader (ndjsonBytes.ts) by their bytes: a line's id is
 * looked up, hashed and compared four bytes at a time, not decoded; each id is decoded once, and
 * its index in a batch's dictionary taken once per batch.
 *
 * @module
 */
import type { BatchBuilder } from '../core/batch.js';

const latin1 = new TextDecoder('latin1');

/** A hash of b[s, e) (`dv` a view of `b`), four bytes at a time, each word mixed in (it only picks where to search). */
function hashOf(b: Uint8Array, dv: DataView, s: number, e: number): number {
  let h = 0x811c9dc5;
  let k = s;
  for (; k + 4 <= e; k += 4) {
    h = Math.imul(h ^ dv.getInt32(k, true), 0x9e3779b1);
    h ^= h >>> 15;
  }
  for (; k < e; k++) h = Math.imul(h ^ b[k], 16777619);
  return h ^ (h >>> 13);
}

/** A symbol id of {@link SymbolDict}: its bytes (and a view of them), and its index in the batch of generation `gen`. */
interface SymbolEntry {
  bytes: Uint8Array;
  view: DataView;
  id: string;
  gen: number;
  index: number;
}

/** Symbol ids by their bytes: a line's id is looked up, not decoded. */
export class SymbolDict {
  private readonly entries: SymbolEntry[] = [];
  /** Open addressing by hash: 1 + the entry's place in `entries` (0: free), at least twice as many slots as entries. */
  private slots: Int32Array;

  /** @param slots - the table's first size (a power of two) */
  constructor(slots = 256) {
    this.slots = new Int32Array(slots);
  }

  /** The batch dictionary index of the id b[s, e) (ASCII; `dv` a view of `b`), in `bb` of generation `gen`. */
  index(b: Uint8Array, dv: DataView, s: number, e: number, bb: BatchBuilder, gen: number): number {
    const h = hashOf(b, dv, s, e);
    const n = e - s;
    const slots = this.slots;
    const mask = slots.length - 1;
    for (let at = h & mask; ; at = (at + 1) & mask) {
      const x = slots[at];
      if (x === 0) return this.add(b, s, e, bb, gen, at);
      const en = this.entries[x - 1];
      if (en.bytes.length !== n) continue;
      const w = en.view;
      let j = 0;
      while (j + 4 <= n && w.getInt32(j, true) === dv.getInt32(s + j, true)) j += 4;
      while (j < n && en.bytes[j] === b[s + j]) j++;
      if (j < n) continue;
      if (en.gen !== gen) {
        en.gen = gen;
        en.index = bb.symbolIndex(en.id);
      }
      return en.index;
    }
  }

  /** Adds the id b[s, e) at the free slot `at` (the table grown past half full). */
  private add(b: Uint8Array, s: number, e: number, bb: BatchBuilder, gen: number, at: number): number {
    const id = latin1.decode(b.subarray(s, e));
    // A copy (a Buffer's slice is a view): the reader's chunks are reused.
    const bytes = Uint8Array.prototype.slice.call(b, s, e);
    const en: SymbolEntry = { bytes, view: new DataView(bytes.buffer), id, gen, index: bb.symbolIndex(id) };
    this.entries.push(en);
    this.slots[at] = this.entries.length;
    if (2 * this.entries.length > this.slots.length) this.rehash();
    return en.index;
  }

  private rehash(): void {
    const slots = new Int32Array(2 * this.slots.length);
    const mask = slots.length - 1;
    for (let x = 0; x < this.entries.length; x++) {
      const { bytes, view } = this.entries[x];
      let at = hashOf(bytes, view, 0, bytes.length) & mask;
      while (slots[at] !== 0) at = (at + 1) & mask;
      slots[at] = x + 1;
    }
    this.slots = slots;
  }
}
