/**
 * The spill of an engine's older trade bins (src/core/engine/coldBins.ts `ChunkSpill`): their
 * chunks written to temporary files and read back, each once, about a day later, when the bins
 * leave the day's volume. A replay's driver gives its engine one (`Engine.spillBins`), so a day of
 * bins at a busy venue's density (65 MB for the 279 markets of the 100 M event log) takes a few
 * chunks of memory.
 *
 * The chunks go to segment files of {@link SEGMENT_BYTES} in the temporary directory
 * (os.tmpdir(), `TMPDIR`), each opened at its first chunk and unlinked at once: the file lives
 * while its descriptor does, and no crash or kill leaves it behind. A segment is closed, which
 * frees its space, once every chunk in it has been taken and a newer one is being written; the
 * descriptors left are closed when the spill is collected. Nothing is opened before the first
 * chunk: a short replay writes no file.
 *
 * @module
 */
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChunkSpill } from '../core/engine.js';
import { XrateError } from '../core/errors.js';

/** Bytes of a segment file, about (a chunk is never split). */
export const SEGMENT_BYTES = 64 << 20;

interface Segment {
  fd: number;
  bytes: number;
  /** Chunks in it not yet taken. */
  live: number;
}

/** Closes the descriptors a spill left open when it is collected. */
const closer = new FinalizationRegistry<Set<number>>((fds) => {
  for (const fd of fds) closeSync(fd);
});
let made = 0;

/**
 * A {@link ChunkSpill} on temporary files (see the module description).
 *
 * @example
 * ```ts
 * const spill = new FileSpill();
 * engine.spillBins(spill);
 * // ... the replay; at the end, or when the engine is let go:
 * spill.close();
 * ```
 */
export class FileSpill implements ChunkSpill {
  private readonly segments: Segment[] = [];
  /** Per key: its segment (-1: taken), offset and length. */
  private readonly seg: number[] = [];
  private readonly off: number[] = [];
  private readonly len: number[] = [];
  private readonly fds = new Set<number>();

  constructor(private readonly dir = tmpdir()) {
    closer.register(this, this.fds, this);
  }

  /** Chunks written and bytes of the segments open (for tests and memory figures). */
  get stats(): { chunks: number; segmentsOpen: number; bytesOnDisk: number } {
    let bytesOnDisk = 0;
    for (const s of this.segments) if (this.fds.has(s.fd)) bytesOnDisk += s.bytes;
    return { chunks: this.seg.length, segmentsOpen: this.fds.size, bytesOnDisk };
  }

  put(bytes: Uint8Array): number {
    let s = this.segments.at(-1);
    if (s === undefined || s.bytes + bytes.length > SEGMENT_BYTES) s = this.open();
    let at = 0;
    try {
      while (at < bytes.length) at += writeSync(s.fd, bytes, at, bytes.length - at, s.bytes + at);
    } catch (e) {
      throw new XrateError('failed', `cannot write the trade bins' spill file in ${this.dir}: ${(e as Error).message}`);
    }
    this.seg.push(this.segments.length - 1);
    this.off.push(s.bytes);
    this.len.push(bytes.length);
    s.bytes += bytes.length;
    s.live++;
    return this.seg.length - 1;
  }

  take(key: number, into: Uint8Array | undefined): Uint8Array {
    const out = this.read(key, into);
    const i = this.seg[key];
    this.seg[key] = -1;
    const s = this.segments[i];
    if (--s.live === 0 && i < this.segments.length - 1) this.closeSegment(s);
    return out;
  }

  read(key: number, into: Uint8Array | undefined): Uint8Array {
    const i = this.seg[key];
    if (i === undefined || i < 0) throw new Error(`FileSpill: chunk ${key} is not kept`);
    const n = this.len[key];
    const out = into !== undefined && into.length >= n ? into : new Uint8Array(n);
    const fd = this.segments[i].fd;
    let at = 0;
    try {
      while (at < n) {
        const r = readSync(fd, out, at, n - at, this.off[key] + at);
        if (r === 0) throw new Error('the file is shorter than written');
        at += r;
      }
    } catch (e) {
      throw new XrateError('failed', `cannot read the trade bins' spill file in ${this.dir}: ${(e as Error).message}`);
    }
    return out;
  }

  /** Closes every segment (the spill is not used after). */
  close(): void {
    for (const s of this.segments) this.closeSegment(s);
    closer.unregister(this);
  }

  private open(): Segment {
    const path = join(this.dir, `xrate-bins-${process.pid}-${made++}-${this.segments.length}.tmp`);
    let fd: number;
    try {
      fd = openSync(path, 'wx+', 0o600);
    } catch (e) {
      throw new XrateError('failed', `cannot create the trade bins' spill file in ${this.dir}: ${(e as Error).message}`);
    }
    // Gone from the directory at once: it lives as long as its descriptor.
    unlinkSync(path);
    this.fds.add(fd);
    const s = { fd, bytes: 0, live: 0 };
    this.segments.push(s);
    // A segment all taken while it was the newest closes once a newer one is open.
    const prev = this.segments.at(-2);
    if (prev !== undefined && prev.live === 0) this.closeSegment(prev);
    return s;
  }

  private closeSegment(s: Segment): void {
    if (!this.fds.delete(s.fd)) return;
    closeSync(s.fd);
  }
}
