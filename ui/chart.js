/**
 * The page at `/` of `xrate serve`: asks `GET /v1/exchangerate/{base}/{quote}/chart` (with the key
 * of `?apikey=` in the page's address, else the one kept in sessionStorage, else one it prompts
 * for) and draws the answer with uPlot: the rate (a period's close at a period resolution), each
 * market's price, the markets left out (markers in the market's colour, shaped by the reason),
 * candles when few enough, and below it each market's weight share, stacked, with how many markets
 * had one. The address holds `pair`, `from`, `to` and `period` and follows every draw (a chart is
 * a link; back and forward redraw). Drag across the chart, the wheel, the buttons or the keys
 * (+ - arrows 0) zoom and pan, each asking the route again with `points` = the chart's width.
 * Hovering a point shows its provenance. `window.xrateChart` exposes what is drawn (for the
 * browser tests). The labels of numbers and times are ui/helpers.js's.
 */
(() => {
  const KEY = 'xrate-apikey';
  const fmt = window.xrateHelpers;
  const panel = window.xratePanel;
  const MIN_SPAN = 60;

  /** What is drawn: the API's answer, uPlot's data, the hovered point and the provenance shown. */
  const state = {
    ready: false,
    error: null,
    draws: 0,
    data: null,
    plotted: null,
    plot: null,
    shares: null,
    hoverIndex: null,
    shown: null,
    query: null,
    points: null,
    colors: {},
    markers: [],
    candlesDrawn: false,
  };
  window.xrateChart = state;
  let first = null;
  let seq = 0;
  let inflight = null;

  const $ = (id) => document.getElementById(id);

  function setStatus(text, kind) {
    const e = $('status');
    e.textContent = text;
    e.className = kind ?? '';
  }

  function askKey() {
    const k = window.prompt('API key of this xrate service (sent as the X-CoinAPI-Key header):');
    if (!k?.trim()) return null;
    sessionStorage.setItem(KEY, k.trim());
    return k.trim();
  }

  /** The key kept for this tab, else one prompted for. */
  function apiKey() {
    return sessionStorage.getItem(KEY) ?? askKey();
  }

  const el = (tag, text, attrs) => panel.el(tag, text, attrs);

  /** The colour of a market, kept for the page's life: a market keeps its colour from draw to draw. */
  function colorOf(symbol) {
    state.colors[symbol] ??= fmt.colorFor(symbol, Object.values(state.colors));
    return state.colors[symbol];
  }

  /** The main plot's series: the rate and each market's price (markers are drawn by a hook). */
  function seriesOf(d) {
    const series = [{ label: 'time (UTC)', value: (_u, v) => (v === null ? '-' : fmt.utc(v)) }];
    const data = [d.ticks];
    const rateLabel = d.resolution === 'tick' ? 'rate' : `${d.resolution} close`;
    // At a period a bucket without a rate change has no close: the rate in force goes on, so the line spans it.
    series.push({
      label: `${d.asset_id_base}/${d.asset_id_quote} ${rateLabel}`,
      stroke: '#000',
      width: 2.5,
      spanGaps: d.resolution !== 'tick',
      value: (_u, v) => fmt.num(v),
    });
    data.push(d.rate);
    for (const m of d.markets) {
      series.push({ label: m.symbol_id, stroke: colorOf(m.symbol_id), width: 1.5, value: (_u, v) => fmt.num(v) });
      data.push(m.price);
    }
    return { series, data };
  }

  /** Whether the candles of `d` are few enough to draw on `width` CSS pixels (4 pixels each at least). */
  function candlesFit(d, width) {
    return Boolean(d?.candles?.length) && d.candles.length <= width / 4;
  }

  /** Candles behind the series, in the plot area, when at least 4 pixels wide each. */
  function drawCandles(u) {
    const candles = state.data?.candles;
    if (!candlesFit(state.data, u.bbox.width / window.devicePixelRatio)) return;
    const ctx = u.ctx;
    const { left, top, width, height } = u.bbox;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    for (const k of candles) {
      if (k.rate_open === null) continue;
      const x0 = u.valToPos(Date.parse(k.time_period_start) / 1000, 'x', true);
      const x1 = u.valToPos(Date.parse(k.time_period_end) / 1000, 'x', true);
      const xm = (x0 + x1) / 2;
      const w = Math.max(1, (x1 - x0) * 0.7);
      const color = k.rate_close >= k.rate_open ? '44,160,44' : '214,39,40';
      const yo = u.valToPos(k.rate_open, 'y', true);
      const yc = u.valToPos(k.rate_close, 'y', true);
      ctx.strokeStyle = `rgb(${color})`;
      ctx.fillStyle = `rgba(${color},0.25)`;
      ctx.beginPath();
      ctx.moveTo(xm, u.valToPos(k.rate_high, 'y', true));
      ctx.lineTo(xm, u.valToPos(k.rate_low, 'y', true));
      ctx.stroke();
      ctx.fillRect(xm - w / 2, Math.min(yo, yc), w, Math.max(1, Math.abs(yc - yo)));
      ctx.strokeRect(xm - w / 2, Math.min(yo, yc), w, Math.max(1, Math.abs(yc - yo)));
    }
    ctx.restore();
  }

  /** The markets left out: a marker at the quote's midpoint, in the market's colour, shaped by the reason. */
  function drawMarkers(u) {
    const ctx = u.ctx;
    const { left, top, width, height } = u.bbox;
    const r = 4 * window.devicePixelRatio;
    const paths = {};
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    ctx.lineWidth = 1.5 / 4;
    for (const m of state.markers) {
      paths[m.reason] ??= new Path2D(fmt.markerPath(m.reason));
      ctx.setTransform(r, 0, 0, r, u.valToPos(m.t, 'x', true), u.valToPos(m.price, 'y', true));
      ctx.strokeStyle = m.color;
      ctx.stroke(paths[m.reason]);
    }
    ctx.restore();
  }

  /** The second panel: each market's weight share stacked (areas), and how many markets had one (a step line). */
  function sharesOf(d) {
    const n = d.ticks.length;
    const markets = d.weight_share;
    const cum = [];
    let below = new Array(n).fill(0);
    for (const m of markets) {
      const top = below.map((b, i) => b + (m.share[i] ?? 0));
      cum.push(top);
      below = top;
    }
    const none = (i) => markets.every((m) => m.share[i] === null || m.share[i] === undefined);
    const series = [{ label: 'time (UTC)', value: (_u, v) => (v === null ? '-' : fmt.utc(v)) }];
    const data = [d.ticks];
    // Drawn top of the stack first, so each lower market's area covers the rest of the one above.
    for (let k = markets.length - 1; k >= 0; k--) {
      const m = markets[k];
      const color = colorOf(m.symbol_id);
      series.push({
        label: `${m.symbol_id} share`,
        stroke: color,
        fill: color,
        width: 1,
        scale: 'share',
        value: (_u, _v, _s, i) => (i === null || m.share[i] === null ? '-' : `${(m.share[i] * 100).toFixed(1)} %`),
      });
      data.push(cum[k].map((v, i) => (none(i) ? null : v)));
    }
    series.push({
      label: 'markets used',
      stroke: '#000',
      width: 1.5,
      scale: 'n',
      paths: window.uPlot.paths.stepped({ align: 1 }),
      value: (_u, v) => (v === null ? '-' : String(v)),
    });
    data.push(d.markets_used ?? new Array(n).fill(null));
    return { series, data };
  }

  function timeAxis(label) {
    return { label, values: (_u, splits, _a, _s, incr) => fmt.timeLabels(splits, incr), space: 70 };
  }

  function valueAxis(label, scale, side = 3) {
    return {
      label,
      scale,
      side,
      values: (_u, splits, _a, _s, incr) => fmt.numLabels(splits, incr),
      size: (_u, values) => Math.max(64, 24 + 7 * Math.max(0, ...(values ?? []).map((v) => v.length))),
    };
  }

  /** Width of the axis at the right of both panels (markets used). */
  const RIGHT = 56;

  /** The plots' width in CSS pixels: the width `points` asks for. */
  function plotWidth() {
    return Math.max(280, Math.floor($('plots').clientWidth));
  }

  function render(d) {
    const { series, data } = seriesOf(d);
    state.plot?.destroy();
    state.shares?.destroy();
    state.plot = null;
    state.shares = null;
    state.markers = d.exclusions.map((x) => ({
      t: x.t,
      price: x.price,
      reason: x.reason,
      symbol_id: x.symbol_id,
      color: colorOf(x.symbol_id),
    }));
    for (const m of d.weight_share ?? []) colorOf(m.symbol_id);
    const width = plotWidth();
    // the left axes of both panels as wide as the rate's longest label, so that their plots line up
    const left = fmt.axisWidth([...d.rate, ...(d.candles ?? []).flatMap((k) => [k.rate_low, k.rate_high])]);
    const t0 = Date.parse(d.time_start) / 1000;
    const t1 = Date.parse(d.time_end) / 1000;
    const small = window.innerWidth < 820;
    const sync = window.uPlot.sync('xrate');
    const cursor = {
      points: { size: 8 },
      drag: { x: true, y: false, setScale: false },
      sync: { key: sync.key, setSeries: false },
    };
    const opts = {
      title: `${d.asset_id_base}/${d.asset_id_quote}, ${fmt.utc(t0)} to ${fmt.utc(t1)} UTC`,
      width,
      height: small ? 300 : Math.max(300, Math.min(520, window.innerHeight - 360)),
      tzDate: (ts) => window.uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      series,
      scales: {
        x: { time: true },
        y: {
          range: (_u, lo, hi) => {
            let a = lo;
            let b = hi;
            for (const k of d.candles ?? []) {
              if (k.rate_low !== null && k.rate_low < a) a = k.rate_low;
              if (k.rate_high !== null && k.rate_high > b) b = k.rate_high;
            }
            if (a === null || b === null) return [0, 1];
            const pad = (b - a) * 0.03 || Math.abs(b) * 1e-4 || 1;
            return [a - pad, b + pad];
          },
        },
      },
      axes: [
        timeAxis('time (UTC)'),
        { ...valueAxis(`${d.asset_id_quote} per ${d.asset_id_base}`, 'y'), size: left },
        // room for the shares panel's right axis, so that the two plots line up
        ...(d.weight_share
          ? [
              {
                side: 1,
                scale: 'y',
                size: RIGHT,
                label: ' ',
                values: (_u, splits) => splits.map(() => ''),
                grid: { show: false },
                ticks: { show: false },
              },
            ]
          : []),
      ],
      cursor,
      hooks: {
        drawClear: [drawCandles],
        draw: [drawMarkers],
        setSelect: [onSelect],
        setCursor: [
          (u) => {
            const i = u.cursor.idx;
            if (i !== null && i !== undefined && i !== state.hoverIndex) panel.showPoint(state, i);
          },
        ],
      },
    };
    const box = $('chart');
    box.replaceChildren();
    state.plot = new window.uPlot(opts, data, box);
    state.candlesDrawn = candlesFit(d, state.plot.bbox.width / window.devicePixelRatio);
    state.plot.setScale('x', { min: t0, max: t1 });
    state.plotted = data;
    attachGestures(state.plot);
    const note = $('shares-note');
    $('shares').replaceChildren();
    if (d.weight_share) {
      note.textContent = '';
      const s = sharesOf(d);
      const sopts = {
        width,
        height: small ? 150 : 170,
        tzDate: opts.tzDate,
        series: s.series,
        scales: {
          x: { time: true },
          share: { range: [0, 1] },
          n: { range: (_u, _lo, hi) => [0, Math.max(1, hi ?? 1)] },
        },
        axes: [
          timeAxis(''),
          { ...valueAxis('weight share', 'share'), size: left, values: (_u, splits) => splits.map((v) => `${Math.round(v * 100)} %`) },
          { ...valueAxis('markets used', 'n', 1), size: RIGHT, grid: { show: false }, incrs: [1, 2, 5, 10, 20, 50] },
        ],
        cursor,
        legend: { show: false },
        hooks: { setSelect: [onSelect] },
      };
      state.shares = new window.uPlot(sopts, s.data, $('shares'));
      state.shares.setScale('x', { min: t0, max: t1 });
      attachGestures(state.shares);
    } else {
      note.textContent = `No weight shares: ${d.note ?? 'the answer has none'}`;
    }
    panel.renderLegend(d, colorOf);
  }

  // --- the query, the address and the route --------------------------------------------------

  function addressOf(q) {
    const url = new URL(window.location.href);
    for (const k of ['pair', 'from', 'to', 'period', 'time_start', 'time_end', 'period_id']) url.searchParams.delete(k);
    url.searchParams.set('pair', `${q.base}/${q.quote}`);
    if (q.from) url.searchParams.set('from', q.from);
    if (q.to) url.searchParams.set('to', q.to);
    if (q.period) url.searchParams.set('period', q.period);
    return url.toString().replaceAll('%2F', '/').replaceAll('%3A', ':');
  }

  function fillInputs(q) {
    $('base').value = q.base;
    $('quote').value = q.quote;
    $('from').value = q.from;
    $('to').value = q.to;
    const sel = $('period');
    if (q.period && ![...sel.options].some((o) => o.value === q.period)) sel.appendChild(el('option', q.period));
    sel.value = q.period;
  }

  function inputsQuery() {
    return {
      base: $('base').value.trim(),
      quote: $('quote').value.trim(),
      from: $('from').value.trim(),
      to: $('to').value.trim(),
      period: $('period').value,
    };
  }

  /** Draws query `q`; `how`: `push` (a new entry of the tab's history), `replace` or `none` (back/forward). */
  async function draw(q, how) {
    const my = ++seq;
    inflight?.abort();
    inflight = new AbortController();
    state.ready = false;
    state.error = null;
    state.query = q;
    fillInputs(q);
    if (how === 'push') window.history.pushState(null, '', addressOf(q));
    else if (how === 'replace') window.history.replaceState(null, '', addressOf(q));
    const key = apiKey();
    if (!key) {
      state.error = 'no API key';
      setStatus('No API key: open this page with ?apikey=KEY, or press "API key…".', 'error');
      return;
    }
    const params = new URLSearchParams();
    if (q.from) params.set('time_start', q.from);
    if (q.to) params.set('time_end', q.to);
    if (q.period) params.set('period_id', q.period);
    state.points = Math.max(50, Math.min(5000, plotWidth()));
    params.set('points', String(state.points));
    setStatus('Loading…');
    let res;
    let body;
    try {
      res = await fetch(`/v1/exchangerate/${encodeURIComponent(q.base)}/${encodeURIComponent(q.quote)}/chart?${params}`, {
        headers: { 'X-CoinAPI-Key': key },
        signal: inflight.signal,
      });
      body = await res.json();
    } catch (e) {
      if (my !== seq) return;
      state.error = String(e);
      setStatus(`The request failed: ${e}`, 'error');
      return;
    }
    if (my !== seq) return;
    if (!res.ok) {
      if (res.status === 401 || res.status === 403) sessionStorage.removeItem(KEY);
      state.error = body?.message ?? res.statusText;
      setStatus(`${res.status}: ${state.error}`, 'error');
      return;
    }
    body.resolution ??= 'tick';
    body.weight_share ??= null;
    body.markets_used ??= null;
    state.data = body;
    state.hoverIndex = null;
    state.shown = null;
    // The range drawn, in the address: the link draws the same chart later.
    const drawn = { ...q, from: fmt.iso(Date.parse(body.time_start) / 1000), to: fmt.iso(Date.parse(body.time_end) / 1000) };
    state.query = drawn;
    first ??= drawn;
    fillInputs(drawn);
    window.history.replaceState(null, '', addressOf(drawn));
    render(body);
    const span = Date.parse(body.time_end) / 1000 - Date.parse(body.time_start) / 1000;
    const n = body.ticks.length;
    $('resolution').textContent =
      body.resolution === 'tick'
        ? `Resolution: tick (1 s), ${fmt.span(span)}`
        : `Resolution: ${body.resolution}, ${fmt.span(span)} in ${fmt.plural(n, 'point')}`;
    $('resolution').dataset.resolution = body.resolution;
    const markets = body.markets.length || (body.weight_share ?? []).length;
    const parts = [
      body.resolution === 'tick' ? fmt.plural(n, 'tick') : fmt.plural(n, `${body.resolution} point`),
      fmt.plural(markets, 'market'),
      `${fmt.plural(body.exclusions.length, 'point')} left out`,
    ];
    if (body.candles)
      parts.push(fmt.plural(body.candles.length, 'candle') + (state.candlesDrawn ? '' : ' (too many to draw: the close line only)'));
    setStatus(body.note ? `${parts.join(', ')}. Note: ${body.note}` : `${parts.join(', ')}.`, body.note ? 'note' : '');
    state.ready = true;
    state.draws++;
    void offerAssets(body.asset_id_base, key);
  }

  /** Offers the assets of the pair drawn (every asset with a rate from `base`) in the pair's inputs. */
  async function offerAssets(base, key) {
    try {
      const res = await fetch(`/v1/exchangerate/${encodeURIComponent(base)}`, { headers: { 'X-CoinAPI-Key': key } });
      if (!res.ok) return;
      const body = await res.json();
      const ids = [body.asset_id_base, ...body.rates.map((r) => r.asset_id_quote)].sort();
      $('assets').replaceChildren(...ids.map((a) => el('option', undefined, { value: a })));
    } catch {
      // a convenience only: the inputs take any id
    }
  }

  // --- zoom and pan ---------------------------------------------------------------------------

  /** The x range shown now (unix seconds). */
  function shown() {
    const x = state.plot?.scales.x;
    if (x && x.min !== undefined && x.max !== undefined) return [x.min, x.max];
    if (!state.data) return null;
    return [Date.parse(state.data.time_start) / 1000, Date.parse(state.data.time_end) / 1000];
  }

  /** Shows [a, b] at once (from the data at hand), then asks the route for it. */
  function goTo(a, b, now) {
    let lo = Math.round(a);
    let hi = Math.round(b);
    if (hi - lo < MIN_SPAN) {
      const c = (lo + hi) / 2;
      lo = Math.round(c - MIN_SPAN / 2);
      hi = lo + MIN_SPAN;
    }
    for (const u of [state.plot, state.shares]) u?.setScale('x', { min: lo, max: hi });
    const q = { ...state.query, from: fmt.iso(lo), to: fmt.iso(hi) };
    // A chosen period is kept while it still fits the range (at least two, at most `points` of them).
    const len = fmt.periodSeconds(q.period);
    if (len && ((hi - lo) / len > state.points || (hi - lo) / len < 2)) q.period = '';
    clearTimeout(goTo.timer);
    if (now) void draw(q, 'push');
    else goTo.timer = setTimeout(() => void draw(q, 'push'), 350);
  }

  function zoom(factor, centre, now = true) {
    const r = shown();
    if (!r) return;
    const c = centre ?? (r[0] + r[1]) / 2;
    goTo(c - (c - r[0]) * factor, c + (r[1] - c) * factor, now);
  }

  function pan(fraction, now = true) {
    const r = shown();
    if (!r) return;
    const d = (r[1] - r[0]) * fraction;
    goTo(r[0] + d, r[1] + d, now);
  }

  /** A drag across a plot: zoom to the span selected. */
  function onSelect(u) {
    const s = u.select;
    if (s.width < 5) return;
    const a = u.posToVal(s.left, 'x');
    const b = u.posToVal(s.left + s.width, 'x');
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    goTo(a, b, true);
  }

  /** The wheel zooms about the pointer (a sideways wheel or shift pans); shift-drag pans. */
  function attachGestures(u) {
    u.over.addEventListener(
      'wheel',
      (e) => {
        e.preventDefault();
        const sideways = Math.abs(e.deltaX) > Math.abs(e.deltaY);
        if (sideways || e.shiftKey) pan(Math.sign(sideways ? e.deltaX : e.deltaY) * 0.1, false);
        else zoom(e.deltaY > 0 ? 1.25 : 0.8, u.posToVal(e.offsetX, 'x'), false);
      },
      { passive: false },
    );
    u.root.addEventListener(
      'mousedown',
      (e) => {
        if (!e.shiftKey || e.button !== 0) return;
        e.stopPropagation();
        e.preventDefault();
        const r = shown();
        const x0 = e.clientX;
        const w = u.over.clientWidth;
        let last = r;
        const move = (m) => {
          const d = ((x0 - m.clientX) / w) * (r[1] - r[0]);
          last = [r[0] + d, r[1] + d];
          for (const p of [state.plot, state.shares]) p?.setScale('x', { min: last[0], max: last[1] });
        };
        const up = () => {
          window.removeEventListener('mousemove', move);
          window.removeEventListener('mouseup', up);
          if (last !== r) goTo(last[0], last[1], true);
        };
        window.addEventListener('mousemove', move);
        window.addEventListener('mouseup', up);
      },
      true,
    );
  }

  const reset = () => first && void draw({ ...first }, 'push');

  document.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.ctrlKey || e.metaKey || e.altKey) return;
    const act = {
      '+': () => zoom(0.5),
      '=': () => zoom(0.5),
      '-': () => zoom(2),
      _: () => zoom(2),
      ArrowLeft: () => pan(-0.25),
      ArrowRight: () => pan(0.25),
      0: reset,
      Home: reset,
    }[e.key];
    if (!act) return;
    e.preventDefault();
    act();
  });
  $('zoom-in').addEventListener('click', () => zoom(0.5));
  $('zoom-out').addEventListener('click', () => zoom(2));
  $('pan-left').addEventListener('click', () => pan(-0.25));
  $('pan-right').addEventListener('click', () => pan(0.25));
  $('reset').addEventListener('click', reset);

  let resized;
  window.addEventListener('resize', () => {
    clearTimeout(resized);
    resized = setTimeout(() => {
      if (state.data && state.ready) render(state.data);
    }, 150);
  });

  // A key given in the address is kept for the tab, and taken out of the address (and its history).
  const address = new URL(window.location.href);
  const given = address.searchParams.get('apikey');
  if (given) {
    sessionStorage.setItem(KEY, given);
    address.searchParams.delete('apikey');
    window.history.replaceState(null, '', address);
  }
  $('query').addEventListener('submit', (ev) => {
    ev.preventDefault();
    void draw(inputsQuery(), 'push');
  });
  $('change-key').addEventListener('click', () => {
    if (askKey()) void draw(inputsQuery(), 'replace');
  });
  window.addEventListener('popstate', () => void draw(fmt.queryOf(new URL(window.location.href)), 'none'));
  void draw(fmt.queryOf(address), 'replace');
})();
