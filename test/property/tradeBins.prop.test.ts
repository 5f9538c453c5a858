/**
 * The symbol records' running volumes (src/core/engine/tradeBins.ts): whatever the trades (sizes
 * of few or many digits, mantissas past 2^53, bins opened out of time order before the first
 * advance, several bins of one market and second), at every query second k, never going back,
 * the hour and day totals equal the exact sum of the sizes of the bins in (k - 1 h, k] and
 * (k - 24 h, k]; a snapshot taken anywhere restores to the same answers and the same snapshot; a
 * snapshot in the earlier per-market chain form restores to the same answers; and the bins older
 * than an hour are held packed, in chunks of any size (a bin never across two), whose snapshot
 * bytes do not depend on it; restored, a day of them goes back into chunks, not into the ring.
 * With a spill file (src/io/binSpill.ts) holding all but a few chunks, every answer and snapshot
 * is the same, and a day of bins takes a few chunks of memory.
 */
import fc from 'fast-check';
import { PackedBytes } from '../../src/core/packedBytes.js';
import { describe, expect, it } from 'vitest';
import { ExactDecimal } from '../../src/core/decimal.js';
import { type ChunkSpill, ColdBins, HOLD } from '../../src/core/engine/coldBins.js';
import { DAY_SECONDS, HOUR_SECONDS, type LegacyTradeBinsJSON, TradeBins, type TradeBinsJSON } from '../../src/core/engine/tradeBins.js';
import { decimalToScaled } from '../../src/core/volumeWindow.js';
import { FileSpill } from '../../src/io/binSpill.js';

const MARKETS = 3;

const sizeText = fc.oneof(
  fc.integer({ min: 1, max: 10_000_000 }).map((n) => String(n / 1000)),
  fc.bigInt({ min: 1n, max: 10n ** 22n }).map((m) => `${m}`),
  fc.constantFrom('0', '1e-8', '0.1', '0.2', '9007199254740993', '2.5E3'),
);

interface Trade {
  m: number;
  b: number;
  text: string;
}

function exactSum(trades: Trade[], m: number, from: number, to: number): string {
  let total = new ExactDecimal(0);
  for (const t of trades) if (t.m === m && t.b > from && t.b <= to) total = total.plus(new ExactDecimal(t.text));
  return total.toString();
}

/** The same bins as chains by market (the snapshot form before the running totals). */
function legacy(trades: Trade[], k: number): (LegacyTradeBinsJSON | null)[] {
  return Array.from({ length: MARKETS }, (_, m) => {
    const by = new Map<number, bigint[]>();
    for (const t of trades.filter((x) => x.m === m && x.b > k - DAY_SECONDS)) {
      const [mant, exp] = decimalToScaled(t.text);
      by.set(t.b, [...(by.get(t.b) ?? []), mant * 10n ** BigInt(exp + 30)]);
    }
    const secs = [...by.keys()].sort((a, b) => a - b);
    if (secs.length === 0) return null;
    return {
      sec: secs,
      sums: { mant: secs.map((s) => String(by.get(s)!.reduce((a, b) => a + b, 0n))), exp: secs.map(() => -30) },
    };
  });
}

/**
 * The bytes of base64 `text` as {@link PackedBytes} made a part at a time, of the lengths `cuts`
 * gives in turn, each in one buffer reused (valid until the next), as a reading from disk makes them.
 */
function partsCut(text: string, cuts: number[]): PackedBytes {
  const bytes = Buffer.from(text, 'base64');
  const buf = new Uint8Array(Math.max(...cuts));
  return new PackedBytes(
    {
      *[Symbol.iterator]() {
        for (let at = 0, i = 0; at < bytes.length; i++) {
          const n = Math.min(cuts[i % cuts.length], bytes.length - at);
          buf.fill(0xff);
          buf.set(bytes.subarray(at, at + n));
          yield buf.subarray(0, n);
          at += n;
        }
      },
    },
    bytes.length,
  );
}

describe('TradeBins running hour and day totals', () => {
  it('equal the exact sums of their windows at every second, through snapshots in either form', () => {
    fc.assert(
      fc.property(
        // Before the first advance: a few bins in any order within a day before k0.
        fc.array(fc.tuple(fc.integer({ min: 0, max: MARKETS - 1 }), fc.integer({ min: -DAY_SECONDS + 1, max: 0 }), sizeText), {
          maxLength: 12,
        }),
        // Then steps: each advances k by a drawn number of seconds and trades in (k, k + 1].
        fc.array(
          fc.tuple(
            fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 1000, max: 40_000 })),
            fc.array(fc.tuple(fc.integer({ min: 0, max: MARKETS - 1 }), sizeText), { maxLength: 4 }),
          ),
          { maxLength: 30 },
        ),
        fc.integer({ min: 0, max: 30 }),
        // Bytes of a chunk of the packed bins: small ones put most bins at a chunk's end.
        fc.constantFrom(64, 80, 128, 1 << 16),
        fc.constantFrom(64, 80, 128, 1 << 16),
        // Seconds before the snapshot's at which it is also restored.
        fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2 * HOUR_SECONDS })),
        // Written chunks held in memory with a spill file (none: no spill).
        fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
        // Lengths the packed bytes are cut into, in turn, when read a part at a time.
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }),
        (early, steps, snapAt, chunk, restoredChunk, back0, hold, cuts) => {
          const k0 = 1_700_000_000;
          const spilled = (b: TradeBins): TradeBins => {
            if (hold !== undefined) b.useSpill(new FileSpill(), hold);
            return b;
          };
          let bins = spilled(new TradeBins(chunk));
          const trades: Trade[] = [];
          for (const [m, d, text] of early) {
            trades.push({ m, b: k0 + d, text });
            bins.add(m, k0 + d, text, k0);
          }
          let k = k0;
          let step = 0;
          const check = () => {
            for (let m = 0; m < MARKETS; m++) {
              expect(new ExactDecimal(bins.hourText(m, k)).toString()).toBe(exactSum(trades, m, k - HOUR_SECONDS, k));
              expect(new ExactDecimal(bins.dayText(m, k)).toString()).toBe(exactSum(trades, m, k - DAY_SECONDS, k));
            }
          };
          check();
          for (const [dk, ts] of steps) {
            k += dk;
            check();
            for (const [m, text] of ts) {
              trades.push({ m, b: k + 1, text });
              bins.add(m, k + 1, text, k);
            }
            if (++step === snapAt) {
              const snap = JSON.parse(JSON.stringify(bins.toJSON(k))) as TradeBinsJSON;
              const back = spilled(TradeBins.fromJSON(snap, k, restoredChunk));
              expect(JSON.stringify(back.toJSON(k))).toBe(JSON.stringify(snap));
              // Packed (as the replay database's snapshots are taken): the same bytes, restored the same.
              const packed = bins.toJSON(k, true);
              expect({ hot: (packed.hot as PackedBytes).base64(), cold: (packed.cold as PackedBytes).base64() }).toEqual(snap);
              expect(JSON.stringify(TradeBins.fromJSON(packed, k, chunk).toJSON(k))).toBe(JSON.stringify(snap));
              // Read a part at a time, cut anywhere (as a snapshot's bins kept on disk are): the same.
              const cut = { hot: partsCut(snap.hot as string, cuts), cold: partsCut(snap.cold as string, cuts) };
              expect(JSON.stringify(spilled(TradeBins.fromJSON(cut, k, restoredChunk)).toJSON(k))).toBe(JSON.stringify(snap));
              const old = TradeBins.fromJSON(legacy(trades, k), k);
              for (let m = 0; m < MARKETS; m++) {
                expect(new ExactDecimal(old.dayText(m, k)).toString()).toBe(exactSum(trades, m, k - DAY_SECONDS, k));
                expect(new ExactDecimal(old.hourText(m, k)).toString()).toBe(exactSum(trades, m, k - HOUR_SECONDS, k));
              }
              // Restored at an earlier second, where its cold bins may be within the hour (the
              // bins are then put in the ring): the answers of that second, of the bins it holds.
              const kb = k - back0;
              const before = TradeBins.fromJSON(snap, kb, restoredChunk);
              const beforeCut = TradeBins.fromJSON(cut, kb, restoredChunk);
              for (let m = 0; m < MARKETS; m++) {
                expect(beforeCut.dayText(m, kb)).toBe(before.dayText(m, kb));
                expect(beforeCut.hourText(m, kb)).toBe(before.hourText(m, kb));
                expect(new ExactDecimal(before.hourText(m, kb)).toString()).toBe(exactSum(trades, m, kb - HOUR_SECONDS, kb));
                expect(new ExactDecimal(before.dayText(m, kb)).toString()).toBe(exactSum(trades, m, k - DAY_SECONDS, kb));
              }
              bins = back;
              check();
            }
          }
          k += 1;
          check();
          // Nothing older than an hour is held as columns.
          bins.advance(k);
          expect(bins.hotBins).toBeLessThanOrEqual(trades.filter((x) => x.b > k - HOUR_SECONDS).length);
        },
      ),
      { seed: 20261128, numRuns: 300 },
    );
  });

  it('packs a day of bins in a few bytes each', () => {
    const bins = new TradeBins();
    const k0 = 1_700_000_000;
    for (let s = 0; s < DAY_SECONDS; s++) for (let m = 0; m < 10; m++) bins.add(m, k0 + s + 1, String((s % 977) / 1000 + 0.001), k0 + s);
    bins.advance(k0 + DAY_SECONDS);
    const cold = 10 * (DAY_SECONDS - HOUR_SECONDS);
    expect(bins.coldBytes).toBeLessThan(6 * cold);
    expect(bins.hotBins).toBe(10 * HOUR_SECONDS);
    // Held in chunks: the bytes and at most three chunks (read from, appended to, a spare).
    expect(bins.coldHeldBytes).toBeLessThanOrEqual(bins.coldBytes + 3 * (1 << 16));
    // Restored from its snapshot, it holds what it held: the older bins packed in chunks, the
    // ring no larger than the hour needs.
    const back = TradeBins.fromJSON(bins.toJSON(k0 + DAY_SECONDS, true), k0 + DAY_SECONDS);
    expect(back.coldBytes).toBe(bins.coldBytes);
    expect(back.coldHeldBytes).toBeLessThanOrEqual(bins.coldBytes + 3 * (1 << 16));
    expect(back.ringSlots).toBeLessThanOrEqual(2 * 10 * HOUR_SECONDS);
    for (let m = 0; m < 10; m++) expect(back.dayText(m, k0 + DAY_SECONDS)).toBe(bins.dayText(m, k0 + DAY_SECONDS));
    // A second day: the bins leaving let their chunks go.
    for (let s = DAY_SECONDS; s < 2 * DAY_SECONDS; s++) bins.add(s % 10, k0 + s + 1, '0.5', k0 + s);
    bins.advance(k0 + 2 * DAY_SECONDS);
    expect(bins.coldBytes).toBeLessThan(6 * (DAY_SECONDS - HOUR_SECONDS));
    expect(bins.coldHeldBytes).toBeLessThanOrEqual(bins.coldBytes + 3 * (1 << 16));
  });

  it('reads packed bins, whole or in parts cut anywhere, as they were pushed, and fails on bytes cut within a bin', () => {
    const bin = fc.record({
      market: fc.integer({ min: 0, max: 300 }),
      dsec: fc.integer({ min: 0, max: 100_000 }),
      // Mantissas of up to 150 digits: bins longer than the bytes near a part's end that are checked before a bin is decoded.
      mant: fc.oneof(
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.bigInt({ min: 2n ** 53n, max: 10n ** 30n }),
        fc.bigInt({ min: 10n ** 60n, max: 10n ** 150n }),
      ),
      exp: fc.integer({ min: -40, max: 10 }),
    });
    fc.assert(
      fc.property(
        fc.array(bin, { minLength: 1, maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 6 }),
        (bs, cuts) => {
          const q = new ColdBins(64);
          let sec = 1_700_000_000;
          for (const b of bs) {
            sec += b.dsec;
            q.push(b.market, sec, b.mant, b.exp);
          }
          const bytes = q.canonical().bytes();
          const whole = [...q];
          expect(whole).toHaveLength(bs.length);
          expect([...ColdBins.read([bytes])]).toEqual(whole);
          expect([...ColdBins.read(partsCut(Buffer.from(bytes).toString('base64'), cuts).parts)]).toEqual(whole);
          // Cut within its last bin: an error, not fewer bins.
          expect(() => [...ColdBins.read([bytes.subarray(0, bytes.length - 1)])]).toThrow(/within a bin/);
        },
      ),
      { seed: 20261129, numRuns: 200 },
    );
  });

  it('holds a day of bins in a few chunks with a spill file, with the same answers and snapshot', () => {
    const plain = new TradeBins();
    const bins = new TradeBins();
    const spill = new FileSpill();
    bins.useSpill(spill);
    const k0 = 1_700_000_000;
    const day = (from: number, to: number) => {
      for (let s = from; s < to; s++)
        for (let m = 0; m < 10; m++) for (const b of [plain, bins]) b.add(m, k0 + s + 1, String(((s + m) % 977) / 1000 + 0.001), k0 + s);
    };
    day(0, DAY_SECONDS);
    for (const b of [plain, bins]) b.advance(k0 + DAY_SECONDS);
    expect(bins.coldBytes).toBe(plain.coldBytes);
    // The chunk read, the one appended to, those held, a spare and a chunk read for a snapshot.
    const few = (HOLD + 4) * (1 << 16);
    expect(bins.coldHeldBytes).toBeLessThanOrEqual(few);
    expect(spill.stats.bytesOnDisk).toBeGreaterThan(plain.coldBytes - few);
    const k = k0 + DAY_SECONDS;
    const snap = (b: TradeBins) => JSON.stringify(b.toJSON(k));
    expect(snap(bins)).toBe(snap(plain));
    const packed = bins.toJSON(k, true);
    expect((packed.cold as PackedBytes).base64()).toBe((plain.toJSON(k, true).cold as PackedBytes).base64());
    expect(bins.coldHeldBytes).toBeLessThanOrEqual(few);
    // Restored and spilled again: the same answers.
    const back = TradeBins.fromJSON(packed, k);
    back.useSpill(new FileSpill());
    expect(back.coldHeldBytes).toBeLessThanOrEqual(few);
    // Restored with the spill given: its chunks go to it as they are restored, the same snapshot.
    const puts: number[] = [];
    const into = new FileSpill();
    const counted: ChunkSpill = {
      put: (bytes) => {
        puts.push(bytes.length);
        return into.put(bytes);
      },
      take: (key, buf) => into.take(key, buf),
      read: (key, buf) => into.read(key, buf),
    };
    const direct = TradeBins.fromJSON(packed, k, undefined, counted);
    expect(puts.reduce((a, b) => a + b, 0)).toBeGreaterThan(plain.coldBytes - few);
    expect(direct.coldHeldBytes).toBeLessThanOrEqual(few);
    expect(snap(direct)).toBe(snap(plain));
    into.close();
    // A second day: the first day's bins come back and leave, their files closed as they are read.
    day(DAY_SECONDS, 2 * DAY_SECONDS);
    for (const b of [plain, bins, back]) b.advance(k0 + 2 * DAY_SECONDS);
    for (let m = 0; m < 10; m++) {
      expect(bins.dayText(m, k0 + 2 * DAY_SECONDS)).toBe(plain.dayText(m, k0 + 2 * DAY_SECONDS));
      expect(bins.hourText(m, k0 + 2 * DAY_SECONDS)).toBe(plain.hourText(m, k0 + 2 * DAY_SECONDS));
    }
    expect(bins.coldHeldBytes).toBeLessThanOrEqual(few);
    expect(spill.stats.bytesOnDisk).toBeLessThan(2 * plain.coldBytes);
    expect(snap(bins)).toBe(snap(plain));
    spill.close();
    expect(spill.stats.segmentsOpen).toBe(0);
  });
});
