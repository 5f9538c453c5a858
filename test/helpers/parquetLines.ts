/**
 * Lines of an NDJSON log for the Parquet property tests: xrate's canonical renderings, exact
 * decimal texts, odd spacing, other event types, unreadable lines and blank ones.
 */
import fc from 'fast-check';

/** A JSON number or decimal string as logs write them (also the batch property's). */
export const num = fc.oneof(
  fc.double({ min: 1e-9, max: 1e9, noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
  fc.constantFrom('0', '1.50', '100.0', '1e-7', '2.5E+3', '0.30000000000000004', '123456789012345678'),
  fc.integer({ min: 1, max: 1_000_000 }).map((n) => `"${(n / 1000).toFixed(4)}"`),
  fc.constantFrom('"1.5"', '" 2"', '"0.1000"', '"1e-8"', '"12345678901234567890.5"', '-1', 'null'),
);
/** Symbol ids, one with non-ASCII text. */
export const sym = fc.constantFrom('K_SPOT_BTC_USD', 'B_SPOT_ETH_USDT', 'C_SPOT_ÉTH_€');
const time = fc.oneof(
  // xrate's own form (7 digits, the last one 0: whole µs), a 7th digit beyond the µs, milliseconds.
  fc.integer({ min: 0, max: 999_999 }).map((us) => `"2024-03-01T00:00:01.${String(us).padStart(6, '0')}0Z"`),
  fc.integer({ min: 0, max: 9_999_999 }).map((f) => `"2024-03-01T00:00:01.${String(f).padStart(7, '0')}Z"`),
  fc.integer({ min: 0, max: 999 }).map((ms) => `"2024-03-01T00:00:01.${String(ms).padStart(3, '0')}Z"`),
);
const sp = fc.constantFrom('', ' ');
/** Lines as xrate's logs write them: the canonical renderings, decimals all numbers or all strings. */
const canonical = fc
  .tuple(
    fc.boolean(),
    fc.boolean(),
    fc.integer({ min: 0, max: 999_999 }),
    sym,
    fc.array(fc.double({ min: 1e-6, max: 1e6, noNaN: true }), { minLength: 4, maxLength: 4 }),
    fc.constantFrom('', ',"taker_side":"SELL"'),
  )
  .map(([quote, quoted, us, s, v, side]) => {
    const d = v.map((x) => (quoted ? `"${x}"` : String(x)));
    const head = `{"type":"${quote ? 'quote' : 'trade'}","time":"2024-03-01T00:00:02.${String(us).padStart(6, '0')}0Z","symbol_id":"${s}"`;
    return quote
      ? `${head},"bid_price":${d[0]},"bid_size":${d[1]},"ask_price":${d[2]},"ask_size":${d[3]}}`
      : `${head},"price":${d[0]},"size":${d[1]}${side}}`;
  });
/** A quote as logs write it, decimals in any form. */
const quoteLine = fc
  .tuple(time, sym, num, num, num, num, sp)
  .map(
    ([t, s, a, b, c, d, w]) =>
      `{"type":"quote","time":${t},"symbol_id":"${s}","bid_price":${a},"bid_size":${b},"ask_price":${c},"ask_size":${d}${w}}`,
  );
/** A trade as logs write it, with any taker side or none. */
const tradeLine = fc
  .tuple(time, sym, num, num, fc.constantFrom('', ',"taker_side":"BUY"', ',"taker_side":"sell"', ',"taker_side":null'))
  .map(([t, s, p, z, side]) => `{"type":"trade","time":${t},"symbol_id":"${s}","price":${p},"size":${z}${side}}`);
/** A line of a quote or a trade, canonical or not. */
export const marketLine = fc.oneof(canonical, quoteLine, tradeLine);
/** One line of a log (see the module description). */
export const parquetLine = fc.oneof(
  canonical,
  quoteLine,
  tradeLine,
  fc.constantFrom(
    '{"type":"exchange","time":"2024-03-01T00:00:00Z","exchange_id":"K","legitimate":true}',
    '{ "type": "trade", "time": "2024-03-01T00:00:02Z", "symbol_id": "K_SPOT_BTC_USD", "price": "1.0", "size": 2 }',
    'not json',
    '[1]',
    '',
  ),
);
