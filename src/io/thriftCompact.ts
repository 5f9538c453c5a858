/**
 * The Thrift compact protocol, read: what Parquet's page headers (parquetColumns.ts) and footer
 * (parquetFooter.ts) are written in.
 *
 * @module
 */

const UTF8 = new TextDecoder();

/**
 * A reader of the Thrift compact protocol over bytes (what Parquet's page headers and footer are
 * written in): each value read where it lies, no object made for what is skipped. A read past the
 * end throws an Error naming what was read (`what`) and within what (`within`).
 */
export class Compact {
  constructor(
    readonly b: Uint8Array,
    public pos: number,
    private readonly what = 'parquet page header',
    private readonly within = 'its column chunk',
  ) {}

  byte(): number {
    if (this.pos >= this.b.length) throw new Error(`${this.what} runs past ${this.within}`);
    return this.b[this.pos++];
  }

  varint(): number {
    let r = 0;
    let mul = 1;
    for (;;) {
      const x = this.byte();
      r += (x & 0x7f) * mul;
      if (x < 0x80) return r;
      mul *= 128;
    }
  }

  zigzag(): number {
    const z = this.varint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  /** Moves past `n` bytes; throws where they run past the end. */
  private advance(n: number): void {
    if (this.pos + n > this.b.length) throw new Error(`${this.what} runs past ${this.within}`);
    this.pos += n;
  }

  /**
   * Skips a value of compact type `t`. In a struct a boolean is in its field's header (nothing to
   * skip); in a list, set or map (`element`) it is a byte. Every skip reads or checks each byte it
   * passes, so a damaged length fails at the end of the bytes, not after counting to it.
   */
  skip(t: number, element = false): void {
    switch (t) {
      case 1:
      case 2:
        if (element) this.byte();
        return;
      case 3:
        this.byte();
        return;
      case 4:
      case 5:
      case 6:
        this.varint();
        return;
      case 7:
        this.advance(8);
        return;
      case 8:
        this.advance(this.varint());
        return;
      case 9:
      case 10:
        this.list((et) => this.skip(et, true));
        return;
      case 11: {
        const n = this.varint();
        if (n === 0) return;
        const kv = this.byte();
        for (let i = 0; i < n; i++) {
          this.skip(kv >> 4, true);
          this.skip(kv & 0x0f, true);
        }
        return;
      }
      case 12:
        this.struct(() => false);
        return;
      default:
        throw new Error(`${this.what}: unknown thrift type ${t}`);
    }
  }

  /** A binary or string value's bytes (a view of them). */
  binary(): Uint8Array {
    const n = this.varint();
    const at = this.pos;
    this.advance(n);
    return this.b.subarray(at, at + n);
  }

  /** A string value. */
  string(): string {
    return UTF8.decode(this.binary());
  }

  /** Reads a list or set: `elem(type)` is called for each element, with their compact type. */
  list(elem: (type: number) => void): void {
    const h = this.byte();
    const n = h >> 4 === 15 ? this.varint() : h >> 4;
    for (let i = 0; i < n; i++) elem(h & 0x0f);
  }

  /** Reads a struct: `field(id, type)` reads the field and returns true, or returns false to skip it. */
  struct(field: (id: number, type: number) => boolean): void {
    let id = 0;
    for (;;) {
      const h = this.byte();
      const t = h & 0x0f;
      if (t === 0) return;
      id = h >> 4 === 0 ? this.zigzag() : id + (h >> 4);
      if (!field(id, t)) this.skip(t);
    }
  }
}
