import { describe, expect, it } from 'vitest';
import { parseEvent } from '../../../src/core/events.js';
import { isReject, type XrateEvent } from '../../../src/core/types.js';
import { carriedDifferences, reportPositions, reporters } from '../../../src/replay/carried.js';

const at = (order: number, input = 0) => ({ input, line: order + 1, order });

function ev(o: Record<string, unknown>): XrateEvent {
  const e = parseEvent(o);
  if (isReject(e)) throw new Error(e.message);
  return e;
}

describe('reporters', () => {
  it('is the latest earlier partition that starts reading at or before the window', () => {
    expect(reporters([at(0), at(100), at(250)])).toEqual([-1, 0, 1]);
    // The third window starts before the second partition reads (a warm-up longer than a span).
    expect(reporters([at(0), at(300), at(250)])).toEqual([-1, 0, 0]);
    expect(reportPositions([at(0), at(300), at(250)], [-1, 0, 0], 0)).toEqual([
      { input: 0, line: 251 },
      { input: 0, line: 301 },
    ]);
    expect(reportPositions([at(0), at(300), at(250)], [-1, 0, 0], 1)).toEqual([]);
  });
});

describe('carriedDifferences', () => {
  const sym = {
    type: 'symbol',
    time: '2024-03-01T00:00:00Z',
    exchange_id: 'X',
    symbol_id: 'X_SPOT_A_B',
    symbol_type: 'SPOT',
    asset_id_base: 'A',
    asset_id_quote: 'B',
  };
  const given = { start: at(10), metadata: [ev(sym)], clockUs: 5, markets: ['X_SPOT_A_B', 'Y_SPOT_A_B'] };

  it('is empty when the serial state is the one given, whatever the key order of the events', () => {
    const reordered = ev(Object.fromEntries(Object.entries(sym).reverse()));
    expect(carriedDifferences(given, { at: at(10), metadata: [reordered], clockUs: 5, markets: ['Y_SPOT_A_B', 'X_SPOT_A_B'] }, {})).toEqual(
      [],
    );
  });

  it('names the clock, the metadata and the markets when they differ', () => {
    expect(carriedDifferences(given, { at: at(10), metadata: [ev(sym)], clockUs: 4, markets: ['X_SPOT_A_B', 'Y_SPOT_A_B'] }, {})).toEqual([
      'clock',
    ]);
    expect(carriedDifferences(given, { at: at(10), metadata: [], clockUs: 5, markets: ['X_SPOT_A_B', 'Y_SPOT_A_B'] }, {})).toEqual([
      'metadata',
    ]);
    expect(carriedDifferences(given, { at: at(10), metadata: [ev(sym)], clockUs: 5, markets: ['X_SPOT_A_B'] }, {})).toEqual(['markets']);
    expect(
      carriedDifferences({ ...given, clockUs: undefined }, { at: at(10), metadata: [ev(sym)], markets: ['X_SPOT_A_B', 'Y_SPOT_A_B'] }, {}),
    ).toEqual([]);
  });
});
