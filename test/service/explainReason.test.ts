/**
 * With no rate, `xrate explain` (from a log and from its replay database) and the explain route
 * name the first reason: here rule 8, a log whose only market traded after the first tick's
 * eligibility refresh, with the time of the next refresh.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../e2e/helpers.js';
import { expectError, startServer, tempDir } from './helpers.js';

const tmp = tempDir('xrate-explain-reason-');
afterAll(() => tmp.remove());

const LOG = join(tmp.dir, 'hand.ndjson');
writeFileSync(
  LOG,
  [
    {
      type: 'quote',
      time: '2024-03-01T00:00:00.5Z',
      symbol_id: 'BINANCE_SPOT_BTC_USD',
      bid_price: 99,
      bid_size: 1,
      ask_price: 101,
      ask_size: 1,
    },
    { type: 'trade', time: '2024-03-01T00:00:01.2Z', symbol_id: 'BINANCE_SPOT_BTC_USD', price: 100, size: 1 },
    {
      type: 'quote',
      time: '2024-03-01T00:00:02.5Z',
      symbol_id: 'BINANCE_SPOT_BTC_USD',
      bid_price: 99,
      bid_size: 1,
      ask_price: 101,
      ask_size: 1,
    },
  ]
    .map((e) => JSON.stringify(e))
    .join('\n')
    .concat('\n'),
);

const MESSAGE =
  'BTC/USD has no eligible market yet (rule 8: a market is used only after an eligibility refresh that saw its trades): ' +
  'BINANCE_SPOT_BTC_USD traded only after the last refresh (2024-03-01T00:00:01.0000000Z); ' +
  'the next refresh is at 2024-03-01T04:00:00.0000000Z (every 4 h)';

/** The CLI run in process, its output captured (test/e2e/helpers.ts). */
const xrate = cli;

describe('explain with no rate', () => {
  it('xrate explain LOG and DB name the reason and the next refresh; the explain route answers 550 with it', async () => {
    const fromLog = await xrate('explain', LOG, '--pair', 'BTC/USD');
    expect(fromLog.code, fromLog.err).toBe(0);
    const want = {
      asset_id_base: 'BTC',
      asset_id_quote: 'USD',
      tick: '2024-03-01T00:00:03.0000000Z',
      kind: 'none',
      rate: null,
      reason: 'not_eligible',
      pair: 'BTC/USD',
      next_refresh: '2024-03-01T04:00:00.0000000Z',
      message: MESSAGE,
    };
    expect(JSON.parse(fromLog.out)).toMatchObject(want);

    const db = join(tmp.dir, 'hand.sqlite');
    expect((await xrate('replay', LOG, '--db', db, '--quiet')).code).toBe(0);
    const fromDb = await xrate('explain', db, '--pair', 'BTC/USD');
    expect(fromDb.code, fromDb.err).toBe(0);
    expect(fromDb.out).toBe(fromLog.out);

    const srv = await startServer({ db, keysPath: join(tmp.dir, 'keys.sqlite') });
    try {
      const r = await srv.get('/v1/exchangerate/BTC/USD/explain', { 'X-CoinAPI-Key': srv.key() });
      expect(expectError(r, 550)).toContain(`no rate for BTC/USD at 2024-03-01T00:00:03.0000000Z: ${MESSAGE}`);
      // The rate route's 550 points to the explain route for the reason.
      const rate = await srv.get('/v1/exchangerate/BTC/USD', { 'X-CoinAPI-Key': srv.key() });
      expect(expectError(rate, 550)).toContain('the explain route, /v1/exchangerate/BTC/USD/explain, names the first reason');
    } finally {
      await srv.close();
    }
  });
});
