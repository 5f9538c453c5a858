/**
 * The chart page's pure helpers (ui/chart.js): numbers with the precision their axis needs, UTC
 * times fitting the span, counts with their noun, each market's colour and each reason's marker.
 * A plain script that sets `globalThis.xrateHelpers` (no DOM, no clock), so that a unit test can
 * run it too (test/unit/ui/helpers.test.ts).
 */
(() => {
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const UNIT = { SEC: 1, MIN: 60, HRS: 3600, DAY: 86400 };
  /** Market colours: distinct, none black (the rate) nor the candles' green and red. */
  const PALETTE = ['#1f77b4', '#ff7f0e', '#9467bd', '#17becf', '#8c564b', '#e377c2', '#bcbd22', '#00695c', '#b5179e', '#6b6ecf'];
  /** The marker of each reason a market is left out: an SVG path about (0, 0), radius about 1. */
  const MARKERS = {
    stale: 'M1,0A1,1 0 1 1 -1,0A1,1 0 1 1 1,0Z',
    spread: 'M-.85,-.85H.85V.85H-.85Z',
    rank: 'M0,-1.2L1.2,0L0,1.2L-1.2,0Z',
    outlier: 'M0,-1.2L1.1,.9H-1.1Z',
    not_eligible: 'M0,1.2L1.1,-.9H-1.1Z',
    not_legitimate: 'M-1,-1L1,1M1,-1L-1,1',
    not_spot: 'M-1,0H1M0,-1V1',
    no_quote: 'M-1,0H1M-1,.5H1',
  };

  /** The marker path of a reason (a dash for one not listed). */
  function markerPath(reason) {
    return MARKERS[reason] ?? 'M-1,0H1';
  }

  /**
   * The colour of market `symbol` given the colours `taken` by others: the palette slot its id
   * hashes to, else the next free one (the same id, among the same others, always the same colour).
   */
  function colorFor(symbol, taken) {
    let h = 0;
    for (const c of symbol) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
    const used = new Set(taken);
    let slot = h % PALETTE.length;
    for (let k = 0; k < PALETTE.length && used.has(PALETTE[slot]); k++) slot = (slot + 1) % PALETTE.length;
    return PALETTE[slot];
  }

  /** Unix seconds as `YYYY-MM-DD HH:MM:SS` (UTC). */
  function utc(t) {
    return new Date(t * 1000).toISOString().slice(0, 19).replace('T', ' ');
  }

  /** Unix seconds as the ISO time of an address: `2024-03-01T04:20:00Z` (milliseconds when not whole). */
  function iso(t) {
    return new Date(Math.round(t * 1000)).toISOString().replace('.000Z', 'Z');
  }

  /** A rate or price to ten significant digits, `-` for none. */
  function num(v) {
    return v === null || v === undefined ? '-' : String(Number(v.toPrecision(10)));
  }

  /** `1 market`, `2 markets`, `1,201 ticks`. */
  function plural(n, noun) {
    return `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
  }

  /** A duration in words: `20 minutes`, `3 days`, `1.5 years`. */
  function span(seconds) {
    const round = (v) => String(Math.round(v * 10) / 10);
    const units = [
      [2 * 365 * 86400, 365.25 * 86400, 'year'],
      [2 * 86400, 86400, 'day'],
      [2 * 3600, 3600, 'hour'],
      [120, 60, 'minute'],
      [0, 1, 'second'],
    ];
    const [, len, name] = units.find(([from]) => seconds >= from);
    const v = round(seconds / len);
    return `${v} ${name}${v === '1' ? '' : 's'}`;
  }

  /** Seconds of an exchange-rate period id (`5MIN`: 300), 0 when not one. */
  function periodSeconds(id) {
    const m = /^(\d+)(SEC|MIN|HRS|DAY)$/.exec(id ?? '');
    return m ? Number(m[1]) * UNIT[m[2]] : 0;
  }

  /** Decimals that write every multiple of `incr` exactly (0.0001: 4; 0.00025: 5; 50: 0). */
  function decimalsOf(incr) {
    for (let d = 0; d < 20; d++) {
      const x = incr * 10 ** d;
      if (Math.abs(x - Math.round(x)) <= 1e-6 * x) return d;
    }
    return 20;
  }

  /**
   * The labels of a value axis whose splits are `incr` apart: as many decimals as `incr` needs,
   * so adjacent labels always differ (ETH/BTC 0.0561, 0.0562; BTC/USD 62,400, 62,450).
   */
  function numLabels(splits, incr) {
    let d = incr > 0 ? decimalsOf(incr) : 0;
    const write = (v) =>
      v === null || v === undefined
        ? ''
        : (v === 0 ? 0 : v).toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
    let out = splits.map(write);
    while (d < 20 && out.some((s, i) => i > 0 && s !== '' && s === out[i - 1])) {
      d++;
      out = splits.map(write);
    }
    return out;
  }

  /**
   * The labels of a time axis (unix seconds, UTC) whose splits are `incr` seconds apart: seconds,
   * minutes, days or months as the step needs, with the date (or year) under the first label and
   * wherever it changes.
   */
  function timeLabels(splits, incr) {
    let prev = null;
    return splits.map((t) => {
      if (t === null || t === undefined) return '';
      const d = new Date(t * 1000);
      const s = d.toISOString();
      const day = s.slice(0, 10);
      const year = s.slice(0, 4);
      let main;
      let under;
      if (incr < 86400) {
        main = s.slice(11, incr < 60 ? 19 : 16);
        under = day;
      } else if (incr < 28 * 86400) {
        main = `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
        under = year;
      } else {
        main = MONTHS[d.getUTCMonth()];
        under = year;
      }
      const label = under === prev ? main : `${main}\n${under}`;
      prev = under;
      return label;
    });
  }

  /**
   * Width in CSS pixels of a value axis labelling `values` (nulls ignored): for the longest label
   * its range may get (the decimals of a tenth of the power of ten under an eighth of the range).
   */
  function axisWidth(values) {
    const vals = values.filter((v) => v !== null && v !== undefined);
    if (!vals.length) return 64;
    const lo = Math.min(...vals);
    const hi = Math.max(...vals);
    const step = 10 ** Math.floor(Math.log10((hi - lo) / 8 || Math.abs(hi) * 1e-4 || 1));
    const labels = numLabels([lo, hi], step / 10);
    return Math.max(64, 24 + 7 * Math.max(...labels.map((l) => l.length)));
  }

  /** The chart asked for by an address: `pair`, `from`, `to`, `period` (or `time_start`, `time_end`, `period_id`). */
  function queryOf(url) {
    const p = url.searchParams;
    const pair = (p.get('pair') ?? '').split('/');
    return {
      base: pair.length === 2 && pair[0] ? pair[0] : 'BTC',
      quote: pair.length === 2 && pair[1] ? pair[1] : 'USD',
      from: p.get('from') ?? p.get('time_start') ?? '',
      to: p.get('to') ?? p.get('time_end') ?? '',
      period: (p.get('period') ?? p.get('period_id') ?? '').toUpperCase(),
    };
  }

  globalThis.xrateHelpers = {
    axisWidth,
    queryOf,
    utc,
    iso,
    num,
    plural,
    span,
    periodSeconds,
    numLabels,
    timeLabels,
    colorFor,
    markerPath,
    PALETTE,
    MARKERS,
  };
})();
