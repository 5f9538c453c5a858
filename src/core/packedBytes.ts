/**
 * Bytes a snapshot holds as base64 text, kept as bytes until written: the symbol records' packed
 * trade bins (tens of megabytes for a day of a dense log). A snapshot taken for the replay
 * database (`Engine.snapshot({ packed: true })`) holds them so, and its writer (src/io/
 * snapshotBlob.ts) encodes them a piece at a time, where the text whole would be one more copy of
 * them at the end of a replay, when its memory peaks. A plain snapshot holds the base64 text.
 *
 * @module
 */

/**
 * A byte sequence made of `parts`, written as its base64 text. The parts are views, valid until
 * the state they view changes; an iterable that is not an array may make each part as it is
 * reached, valid until the next one (a state kept partly on disk), and is then given its length.
 */
export class PackedBytes {
  private readonly length: number;

  constructor(
    readonly parts: Iterable<Uint8Array>,
    byteLength?: number,
  ) {
    if (byteLength === undefined) {
      byteLength = 0;
      for (const p of parts) byteLength += p.byteLength;
    }
    this.length = byteLength;
  }

  /** Bytes in all. */
  get byteLength(): number {
    return this.length;
  }

  /** Characters of its base64 text. */
  get base64Length(): number {
    return 4 * Math.ceil(this.byteLength / 3);
  }

  /** The bytes, in one array. */
  bytes(): Uint8Array {
    if (Array.isArray(this.parts) && this.parts.length === 1) return this.parts[0];
    const out = new Uint8Array(this.byteLength);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.byteLength;
    }
    return out;
  }

  /** Its base64 text (what a plain snapshot holds). */
  base64(): string {
    const b = this.bytes();
    return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
  }
}

/** The bytes of `packed` (base64 text, as a plain snapshot holds them, or {@link PackedBytes}). */
export function packedBytesOf(packed: string | PackedBytes): Uint8Array {
  return typeof packed === 'string' ? Buffer.from(packed, 'base64') : packed.bytes();
}
