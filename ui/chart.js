/**
 * The page at `/` of `xrate serve`: asks `GET /v1/exchangerate/{base}/{quote}/chart` (with the key
 * of `?apikey=` in the page's address, else the one kept in sessionStorage, else one it prompts
 * for) and draws the answer with uPlot: the rate, each market's price, the markets left out
 * (markers coloured by reason) and, with a period, the OHLC candles; times in UTC. Hovering a
 * point shows its provenance. `window.xrateChart` exposes what is drawn (for the browser tests).
 */
(() => {
  const KEY = 'xrate-apikey';
  const PALETTE = ['#1f77b4', '#2ca02c', '#9467bd', '#8c564b', '#17becf', '#e377c2', '#aec7e8', '#98df8a', '#c5b0d5', '#c49c94'];
  const REASON_COLOR = {
    stale: '#7f7f7f',
    spread: '#bcbd22',
    rank: '#ff7f0e',
    outlier: '#d62728',
    not_eligible: '#9467bd',
    not_legitimate: '#e377c2',
    not_spot: '#8c564b',
    no_quote: '#000000',
  };

  /** What is drawn: the API's answer, uPlot's data, the hovered point and the provenance shown. */
  const state = { ready: false, error: null, data: null, plotted: null, plot: null, hoverIndex: null, shown: null };
  window.xrateChart = state;

  const $ = (id) => document.getElementById(id);

  function setStatus(text, kind) {
    const el = $('status');
    el.textContent = text;
    el.className = kind ?? '';
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

  /** Unix seconds as `YYYY-MM-DD HH:MM:SS` (UTC). */
  function utc(t) {
    return new Date(t * 1000).toISOString().slice(0, 19).replace('T', ' ');
  }

  function num(v) {
    return v === null || v === undefined ? '-' : String(Number(v.toPrecision(10)));
  }

  function el(tag, text, attrs) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    for (const [k, v] of Object.entries(attrs ?? {})) e.setAttribute(k, v);
    return e;
  }

  function table(head, rows) {
    const t = el('table');
    const tr = el('tr');
    for (const h of head) tr.appendChild(el('th', h));
    t.appendChild(tr);
    for (const r of rows) {
      const row = el('tr');
      for (const c of r) row.appendChild(el('td', c));
      t.appendChild(row);
    }
    return t;
  }

  /** Shows the provenance of point i in the side panel. */
  function showProvenance(i) {
    const d = state.data;
    const panel = $('provenance');
    state.hoverIndex = i;
    panel.replaceChildren();
    panel.dataset.index = String(i);
    panel.dataset.tick = utc(d.ticks[i]);
    const p = d.point_provenance[i];
    const pair = `${d.asset_id_base}/${d.asset_id_quote}`;
    panel.appendChild(el('h2', `${pair} at ${utc(d.ticks[i])} UTC: ${num(d.rate[i])}`));
    if (p < 0) {
      state.shown = null;
      panel.appendChild(el('p', d.markets_detail ? 'No rate at this tick.' : `No provenance: ${d.note}`, { class: 'hint' }));
      return;
    }
    const e = d.provenance[p];
    state.shown = e;
    panel.appendChild(
      el('p', `${e.kind} rate ${num(e.rate)}, ${e.fresh ? 'fresh' : 'carried'}, path ${e.path.join(' → ')}, as of tick ${e.tick}`),
    );
    for (const leg of e.legs) {
      const x = leg.explanation;
      panel.appendChild(
        el('h3', `${leg.pair}${leg.inverted ? ' (inverted)' : ''}: ${num(leg.rate)}, rank ${leg.rank}, ${leg.fresh ? 'fresh' : 'carried'}`),
      );
      const age = (m) => (m.quote_time ? `${(d.ticks[i] - Date.parse(m.quote_time) / 1000).toFixed(1)} s` : '-');
      panel.appendChild(el('p', `Used (${x.used.length}), ${x.weighting} weights`));
      panel.appendChild(
        table(
          ['market', 'price', 'weight', 'quote age'],
          x.used.map((m) => [
            m.symbol_id,
            num(m.price),
            m.weight_share === undefined ? '-' : `${(m.weight_share * 100).toFixed(1)} %`,
            age(m),
          ]),
        ),
      );
      panel.appendChild(el('p', `Left out (${x.excluded.length})`));
      panel.appendChild(
        table(
          ['market', 'reason', 'detail'],
          x.excluded.map((m) => [m.symbol_id, m.reason ?? '', m.detail ?? '']),
        ),
      );
      if (x.outliers)
        panel.appendChild(el('p', `Outliers: ${x.outliers.method}, centre ${num(x.outliers.centre)}, dropped ${x.outliers.dropped}`));
    }
  }

  /** The series drawn: rate, markets, and one marker series per reason and market left out. */
  function seriesOf(d) {
    const n = d.ticks.length;
    const series = [{ label: 'time (UTC)', value: (_u, v) => (v === null ? '-' : utc(v)) }];
    const data = [d.ticks];
    series.push({ label: `${d.asset_id_base}/${d.asset_id_quote} rate`, stroke: '#000', width: 2.5, value: (_u, v) => num(v) });
    data.push(d.rate);
    d.markets.forEach((m, i) => {
      series.push({ label: m.symbol_id, stroke: PALETTE[i % PALETTE.length], width: 1.2, value: (_u, v) => num(v) });
      data.push(m.price);
    });
    const groups = new Map();
    for (const x of d.exclusions) {
      const k = `${x.reason}\u0000${x.symbol_id}`;
      let g = groups.get(k);
      if (!g) {
        g = { reason: x.reason, symbol: x.symbol_id, values: new Array(n).fill(null) };
        groups.set(k, g);
      }
      g.values[x.t - d.ticks[0]] = x.price;
    }
    for (const k of [...groups.keys()].sort()) {
      const g = groups.get(k);
      const color = REASON_COLOR[g.reason] ?? '#000';
      series.push({
        label: `left out (${g.reason}): ${g.symbol}`,
        stroke: color,
        width: 1,
        paths: () => null,
        points: { show: true, size: 6, width: 1, stroke: color, fill: 'rgba(255,255,255,0)' },
        value: (_u, v) => num(v),
      });
      data.push(g.values);
    }
    return { series, data };
  }

  /** Candles behind the series, in the plot area. */
  function drawCandles(u) {
    const candles = state.data?.candles;
    if (!candles) return;
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
      const up = k.rate_close >= k.rate_open;
      const color = up ? '44,160,44' : '214,39,40';
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

  function render(d) {
    const { series, data } = seriesOf(d);
    state.plot?.destroy();
    const box = $('chart');
    box.replaceChildren();
    const width = Math.max(480, Math.min(1100, window.innerWidth - 420));
    const opts = {
      title: `${d.asset_id_base}/${d.asset_id_quote}, ${utc(d.ticks[0])} to ${utc(d.ticks[d.ticks.length - 1])} UTC`,
      width,
      height: 560,
      tzDate: (ts) => window.uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      series,
      scales: {
        y: {
          range: (_u, lo, hi) => {
            let a = lo;
            let b = hi;
            for (const k of d.candles ?? []) {
              if (k.rate_low !== null && k.rate_low < a) a = k.rate_low;
              if (k.rate_high !== null && k.rate_high > b) b = k.rate_high;
            }
            const pad = (b - a) * 0.03 || Math.abs(b) * 1e-4 || 1;
            return [a - pad, b + pad];
          },
        },
      },
      axes: [
        {
          label: 'time (UTC)',
          // HH:MM, or HH:MM:SS when ticks are under a minute apart; the date when a day or more.
          values: (_u, splits, _axis, _space, incr) =>
            splits.map((v) => (incr >= 86400 ? utc(v).slice(0, 10) : utc(v).slice(11, incr < 60 ? 19 : 16))),
        },
        { label: `${d.asset_id_quote} per ${d.asset_id_base}`, size: 80 },
      ],
      cursor: { points: { size: 8 } },
      hooks: {
        drawClear: [drawCandles],
        setCursor: [
          (u) => {
            const i = u.cursor.idx;
            if (i !== null && i !== undefined && i !== state.hoverIndex) showProvenance(i);
          },
        ],
      },
    };
    state.plot = new window.uPlot(opts, data, box);
    state.plotted = data;
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

  async function draw() {
    state.ready = false;
    state.error = null;
    const key = apiKey();
    if (!key) {
      state.error = 'no API key';
      setStatus('No API key: open this page with ?apikey=KEY, or press "API key…".', 'error');
      return;
    }
    const base = $('base').value.trim();
    const quote = $('quote').value.trim();
    const params = new URLSearchParams();
    if ($('from').value.trim()) params.set('time_start', $('from').value.trim());
    if ($('to').value.trim()) params.set('time_end', $('to').value.trim());
    if ($('period').value) params.set('period_id', $('period').value);
    setStatus('Loading…');
    let res;
    let body;
    try {
      res = await fetch(`/v1/exchangerate/${encodeURIComponent(base)}/${encodeURIComponent(quote)}/chart?${params}`, {
        headers: { 'X-CoinAPI-Key': key },
      });
      body = await res.json();
    } catch (e) {
      state.error = String(e);
      setStatus(`The request failed: ${e}`, 'error');
      return;
    }
    if (!res.ok) {
      if (res.status === 401 || res.status === 403) sessionStorage.removeItem(KEY);
      state.error = body?.message ?? res.statusText;
      setStatus(`${res.status}: ${state.error}`, 'error');
      return;
    }
    state.data = body;
    state.hoverIndex = null;
    state.shown = null;
    $('from').value = body.time_start;
    $('to').value = body.time_end;
    render(body);
    const url = new URL(window.location.href);
    url.searchParams.set('pair', `${base}/${quote}`);
    url.searchParams.set('time_start', body.time_start);
    url.searchParams.set('time_end', body.time_end);
    if (body.period_id) url.searchParams.set('period_id', body.period_id);
    else url.searchParams.delete('period_id');
    window.history.replaceState(null, '', url);
    const what = `${body.ticks.length} ticks, ${body.markets.length} markets, ${body.exclusions.length} points left out${body.candles ? `, ${body.candles.length} candles` : ''}`;
    setStatus(body.note ? `${what}. Note: ${body.note}` : `${what}.`, body.note ? 'note' : '');
    state.ready = true;
    void offerAssets(body.asset_id_base, key);
  }

  // A key given in the address is kept for the tab, and taken out of the address (and its history).
  const address = new URL(window.location.href);
  const given = address.searchParams.get('apikey');
  if (given) {
    sessionStorage.setItem(KEY, given);
    address.searchParams.delete('apikey');
    window.history.replaceState(null, '', address);
  }
  const params = address.searchParams;
  const pair = params.get('pair')?.split('/');
  if (pair?.length === 2) {
    $('base').value = pair[0];
    $('quote').value = pair[1];
  }
  if (params.get('time_start')) $('from').value = params.get('time_start');
  if (params.get('time_end')) $('to').value = params.get('time_end');
  if (params.get('period_id')) $('period').value = params.get('period_id');
  $('query').addEventListener('submit', (ev) => {
    ev.preventDefault();
    void draw();
  });
  $('change-key').addEventListener('click', () => {
    if (askKey()) void draw();
  });
  void draw();
})();
