/**
 * Arbitraries of NDJSON quote and trade lines of every shape, valid and not (numbers, times,
 * symbol ids, sides, types): the inputs of the NDJSON fast paths' properties.
 */
import fc from 'fast-check';

export const num = fc.oneof(
  fc.double({ min: -1e6, max: 1e9, noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
  fc.constantFrom(
    '0',
    '-0',
    '1.50',
    '100.0',
    '1e-7',
    '2.5E+3',
    '0.30000000000000004',
    '123456789012345678',
    '0.000001',
    '1e400',
    '-1',
    '01',
    '1.',
    '.5',
  ),
  fc.integer({ min: 0, max: 1_000_000 }).map((n) => `"${(n / 1000).toFixed(4)}"`),
  fc.constantFrom('"1.5"', '" 2"', '"-0"', '"abc"', '""', 'null', 'true', '"1e-8"', '{}', '[1]'),
);
export const time = fc.oneof(
  fc.integer({ min: 1_600_000_000_000_000, max: 1_800_000_000_000_000 }).map((us) => {
    const iso = new Date(Math.floor(us / 1000)).toISOString().slice(0, 19);
    const frac = String(us % 1_000_000).padStart(6, '0');
    return `"${iso}.${frac}${us % 3 === 0 ? '7' : ''}Z"`;
  }),
  fc.constantFrom(
    '"2024-03-01T00:00:00Z"',
    '"2024-03-01T00:00:00.1Z"',
    '"2024-03-01 00:00:00Z"',
    '"2024-03-01T00:00:00.12345678Z"',
    '"2024-02-30T00:00:00Z"',
    '" 2024-03-01T00:00:00Z"',
    '"2024-03-01"',
    '123',
    '"2024-03-01T00:00:00.5+01:00"',
  ),
);
const str = fc.constantFrom('"K_SPOT_BTC_USD"', '"A_SPOT_ETH_BTC"', '" X_SPOT_A_B"', '""', '"a\\"b"', '"tab\tin"', '42', 'null');
const side = fc.constantFrom(undefined, '"BUY"', '"sell"', '"UNKNOWN"', '""', 'null', '"X"', 'true');
const type = fc.constantFrom('"quote"', '"trade"', '"Quote"', '"exchange"', '"x"', '1');

/** Quote lines of every shape, their numbers from `n`. */
export function quoteLineWith(n: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .record({ type, time, sym: str, b: n, bs: n, a: n, as: n, extra: fc.boolean(), ws: fc.boolean(), dup: fc.boolean() })
    .map((r) => {
      const sep = r.ws ? ', ' : ',';
      const parts = [
        `"type":${r.type}`,
        `"time":${r.time}`,
        `"symbol_id":${r.sym}`,
        `"bid_price":${r.b}`,
        `"bid_size":${r.bs}`,
        `"ask_price":${r.a}`,
        `"ask_size":${r.as}`,
      ];
      if (r.extra) parts.splice(2, 0, `"exchange":"K","n":[1,2]`);
      if (r.dup) parts.push(`"bid_price":${r.a}`);
      return `{${parts.join(sep)}}`;
    });
}

/** Trade lines of every shape, their numbers from `n`. */
export function tradeLineWith(n: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.record({ type, time, sym: str, p: n, s: n, side, ws: fc.boolean() }).map((r) => {
    const parts = [`"type":${r.type}`, `"time":${r.time}`, `"symbol_id":${r.sym}`, `"price":${r.p}`, `"size":${r.s}`];
    if (r.side !== undefined) parts.push(`"taker_side":${r.side}`);
    return `{${parts.join(r.ws ? ' , ' : ',')}}`;
  });
}

/** Quote and trade lines of every shape (the fast paths' inputs). */
export const quoteLine = quoteLineWith(num);
export const tradeLine = tradeLineWith(num);
