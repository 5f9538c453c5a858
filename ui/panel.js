/**
 * The chart page's panels (ui/chart.js draws the plots): the side panel showing what is known of
 * the hovered point (its provenance at a tick; its candle and weight shares at a period), and the
 * key under the plots (each market's colour, each reason's marker). Sets `globalThis.xratePanel`.
 */
(() => {
  const fmt = window.xrateHelpers;

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

  /** A marker of the legend: the reason's shape, as the chart draws it. */
  function markerIcon(reason) {
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('width', '14');
    svg.setAttribute('height', '14');
    svg.setAttribute('viewBox', '-1.6 -1.6 3.2 3.2');
    const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
    path.setAttribute('d', fmt.markerPath(reason));
    path.setAttribute('fill', 'none');
    path.setAttribute('stroke', '#333');
    path.setAttribute('stroke-width', '0.4');
    svg.appendChild(path);
    return svg;
  }

  function swatch(color) {
    const c = document.createElement('canvas');
    c.width = 14;
    c.height = 10;
    const ctx = c.getContext('2d');
    ctx.fillStyle = color;
    ctx.fillRect(0, 0, 14, 10);
    return c;
  }

  /** Shows what is known of point i in the side panel: its provenance, else its candle and shares. */
  function showPoint(state, i) {
    const d = state.data;
    const panel = document.getElementById('provenance');
    state.hoverIndex = i;
    panel.replaceChildren();
    panel.dataset.index = String(i);
    panel.dataset.tick = fmt.utc(d.ticks[i]);
    const pair = `${d.asset_id_base}/${d.asset_id_quote}`;
    const tick = d.resolution === 'tick';
    const when = tick ? `${fmt.utc(d.ticks[i])} UTC` : `the ${d.resolution} from ${fmt.utc(d.ticks[i])} UTC`;
    panel.appendChild(el('h2', `${pair} at ${when}: ${fmt.num(d.rate[i])}`));
    const p = d.point_provenance[i];
    if (p < 0) {
      state.shown = null;
      const why = d.markets_detail
        ? 'No rate at this tick.'
        : tick
          ? `No provenance: ${d.note}`
          : 'Provenance is kept per tick: zoom in to two hours or less to see it.';
      panel.appendChild(el('p', why, { class: 'hint' }));
      const k = d.candles?.find((c) => Date.parse(c.time_period_start) / 1000 === d.ticks[i]);
      if (k)
        panel.appendChild(
          el('p', `open ${fmt.num(k.rate_open)}, high ${fmt.num(k.rate_high)}, low ${fmt.num(k.rate_low)}, close ${fmt.num(k.rate_close)}`),
        );
      if (d.weight_share) {
        const used = d.markets_used?.[i];
        panel.appendChild(
          el(
            'p',
            `Weight shares${tick ? '' : ' at its end'}${used === null || used === undefined ? '' : `, ${fmt.plural(used, 'market')} used`}`,
          ),
        );
        const rows = d.weight_share.filter((m) => m.share[i] !== null && m.share[i] !== undefined);
        panel.appendChild(
          table(
            ['market', 'share'],
            rows.map((m) => [m.symbol_id, `${(m.share[i] * 100).toFixed(1)} %`]),
          ),
        );
      }
      return;
    }
    const e = d.provenance[p];
    state.shown = e;
    panel.appendChild(
      el('p', `${e.kind} rate ${fmt.num(e.rate)}, ${e.fresh ? 'fresh' : 'carried'}, path ${e.path.join(' → ')}, as of tick ${e.tick}`),
    );
    for (const leg of e.legs) {
      const x = leg.explanation;
      panel.appendChild(
        el(
          'h3',
          `${leg.pair}${leg.inverted ? ' (inverted)' : ''}: ${fmt.num(leg.rate)}, rank ${leg.rank}, ${leg.fresh ? 'fresh' : 'carried'}`,
        ),
      );
      const age = (m) => (m.quote_time ? `${(d.ticks[i] - Date.parse(m.quote_time) / 1000).toFixed(1)} s` : '-');
      panel.appendChild(el('p', `Used (${x.used.length}), ${x.weighting} weights`));
      const used = x.used.map((m) => [
        m.symbol_id,
        fmt.num(m.price),
        m.weight_share === undefined ? '-' : `${(m.weight_share * 100).toFixed(1)} %`,
        age(m),
      ]);
      panel.appendChild(table(['market', 'price', 'weight', 'quote age'], used));
      panel.appendChild(el('p', `Left out (${x.excluded.length})`));
      panel.appendChild(
        table(
          ['market', 'reason', 'detail'],
          x.excluded.map((m) => [m.symbol_id, m.reason ?? '', m.detail ?? '']),
        ),
      );
      if (x.outliers)
        panel.appendChild(el('p', `Outliers: ${x.outliers.method}, centre ${fmt.num(x.outliers.centre)}, dropped ${x.outliers.dropped}`));
    }
  }

  /** The key under the plots: each market's colour (`colorOf`), and each reason's marker shape. */
  function renderLegend(d, colorOf) {
    const box = document.getElementById('legend');
    box.replaceChildren();
    const symbols = [...new Set([...d.markets, ...(d.weight_share ?? []), ...d.exclusions].map((m) => m.symbol_id))].sort();
    for (const s of symbols) {
      const item = el('span', undefined, { 'data-symbol': s, 'data-color': colorOf(s) });
      item.append(swatch(colorOf(s)), s);
      box.appendChild(item);
    }
    const reasons = [...new Set(d.exclusions.map((x) => x.reason))].sort();
    if (reasons.length) box.appendChild(el('span', 'left out:'));
    for (const r of reasons) {
      const item = el('span', undefined, { 'data-reason': r });
      item.append(markerIcon(r), r);
      box.appendChild(item);
    }
  }

  globalThis.xratePanel = { el, showPoint, renderLegend };
})();
