import { describe, expect, it } from 'vitest';
import { EventRows, KIND_QUOTE, KIND_TRADE, LazyColumn } from '../../../src/io/parquetRows.js';
import { EVENT_COLUMNS } from '../../../src/io/parquetSchema.js';

const col = (cols: LazyColumn[], name: string): unknown[] => cols[EVENT_COLUMNS.findIndex((c) => c.name === name)].slice(0, cols[0].length);

describe('EventRows (the row group being filled, src/io/parquetRows.ts)', () => {
  it('gives its rows as the columns hyparquet-writer takes, nulls where a row has no cell', () => {
    const r = new EventRows(4);
    let i = r.add(7, 0);
    r.kind[i] = KIND_QUOTE;
    r.setTime(i, 1_709_251_200_000_000);
    r.setSymbol(i, 'K_SPOT_BTC_USD');
    for (let k = 0; k < 4; k++) r.dec[k][i] = k + 0.5;
    r.rawForm[i] = 1;
    i = r.add(9, 1);
    r.kind[i] = KIND_TRADE;
    r.setTime(i, 5);
    r.setSymbol(i, 'K_SPOT_BTC_USD');
    r.dec[4][i] = 2;
    r.dec[5][i] = 3;
    r.set('taker_side', i, 'SELL');
    i = r.add(10, 1);
    r.set('type', i, 'exchange');
    r.set('other', i, { record: { type: 'exchange' } });
    r.set('raw', i, '{"type":"exchange"}');
    const cols = r.columns();
    expect(cols).toHaveLength(EVENT_COLUMNS.length);
    expect(col(cols, 'line')).toEqual([7, 9, 10]);
    expect(col(cols, 'input')).toEqual([0, 1, 1]);
    expect(col(cols, 'type')).toEqual(['quote', 'trade', 'exchange']);
    expect(col(cols, 'time')).toEqual([1_709_251_200_000_000, 5, null]);
    expect(col(cols, 'symbol_id')).toEqual(['K_SPOT_BTC_USD', 'K_SPOT_BTC_USD', null]);
    expect(col(cols, 'bid_price')).toEqual([0.5, null, null]);
    expect(col(cols, 'ask_size')).toEqual([3.5, null, null]);
    expect(col(cols, 'price')).toEqual([null, 2, null]);
    expect(col(cols, 'size')).toEqual([null, 3, null]);
    expect(col(cols, 'taker_side')).toEqual([null, 'SELL', null]);
    expect(col(cols, 'other')).toEqual([null, null, { record: { type: 'exchange' } }]);
    expect(col(cols, 'raw_form')).toEqual([1, 0, 0]);
    expect(col(cols, 'raw')).toEqual([null, null, '{"type":"exchange"}']);
    expect(cols[0].slice(1, 3)).toEqual([9, 10]);
  });

  it('keeps its arrays from one row group to the next and leaves nothing of the last one in them', () => {
    const r = new EventRows(2);
    const { line, dec } = r;
    let i = r.add(1, 0);
    r.kind[i] = KIND_TRADE;
    r.setTime(i, 1);
    r.setSymbol(i, 'A');
    r.set('taker_side', i, 'BUY');
    r.set('raw', i, 'x');
    r.add(2, 0);
    r.clear();
    expect(r.n).toBe(0);
    i = r.add(3, 0);
    expect(r.line).toBe(line);
    expect(r.dec).toBe(dec);
    const cols = r.columns();
    for (const c of cols) expect(c.length).toBe(1);
    expect(col(cols, 'line')).toEqual([3]);
    for (const name of ['type', 'time', 'symbol_id', 'price', 'size', 'taker_side', 'raw']) expect(col(cols, name), name).toEqual([null]);
  });

  it('makes a column only when it is read', () => {
    let made = 0;
    const c = new LazyColumn(3, () => {
      made++;
      return [1, 2, 3];
    });
    expect(made).toBe(0);
    expect(c.length).toBe(3);
    expect(c.slice(0, 3)).toEqual([1, 2, 3]);
    expect(c.slice(1, 2)).toEqual([2]);
    expect(made).toBe(2);
  });
});
