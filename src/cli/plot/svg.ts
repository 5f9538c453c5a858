/**
 * The SVG of a rate chart ({@link ChartData}): a title, the rate as a thick line, each
 * contributing market's price as a thin coloured line, markets left out as markers whose shape
 * and colour say the reason, optional OHLC candles behind, value and UTC time axes with nice
 * ticks, and a legend. A chart drawn by period (a long range) has its buckets' closes as the line,
 * its candles when there are few enough to see (at least {@link CANDLE_PX} px each), and under it
 * the panel of the markets' weight shares and the count of markets used (shares.ts). Several
 * pairs are compared on one axis, each as its % change from its first value
 * ({@link renderCompareSvg}). Deterministic: the same data gives the same bytes (coordinates
 * rounded to hundredths, no clock, no randomness).
 *
 * @module
 */
import type { ExclusionReason } from '../../core/eligibility.js';
import type { ChartData } from '../../replay/chart.js';
import { linearScale, niceTicks, timeTicks } from './scale.js';
import { sharesPanel } from './shares.js';

/** Size of the chart, px. */
export interface SvgOptions {
  width?: number;
  height?: number;
}

/** Narrowest candle drawn at a period resolution, px: with more candles than fit, the close line alone. */
export const CANDLE_PX = 4;

/** Line colours of the markets, in turn. */
export const PALETTE = ['#1f77b4', '#2ca02c', '#9467bd', '#8c564b', '#17becf', '#e377c2', '#aec7e8', '#98df8a', '#c5b0d5', '#c49c94'];

/** Marker of each exclusion reason: its colour and shape. */
const REASON_STYLE: Record<ExclusionReason, { color: string; shape: 'circle' | 'square' | 'triangle' | 'diamond' | 'cross' | 'plus' }> = {
  stale: { color: '#7f7f7f', shape: 'circle' },
  spread: { color: '#bcbd22', shape: 'triangle' },
  rank: { color: '#ff7f0e', shape: 'square' },
  outlier: { color: '#d62728', shape: 'cross' },
  not_eligible: { color: '#9467bd', shape: 'diamond' },
  not_legitimate: { color: '#e377c2', shape: 'plus' },
  not_spot: { color: '#8c564b', shape: 'diamond' },
  no_quote: { color: '#000', shape: 'circle' },
};

const REASON_ORDER: ExclusionReason[] = ['stale', 'spread', 'rank', 'outlier', 'not_eligible', 'not_legitimate', 'not_spot', 'no_quote'];

/** A coordinate rounded to hundredths, as written. */
export function r2(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/** `s` escaped for SVG text and attributes. */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function marker(shape: (typeof REASON_STYLE)[ExclusionReason]['shape'], x: number, y: number, color: string, s = 3.5): string {
  const X = r2(x);
  const Y = r2(y);
  switch (shape) {
    case 'circle':
      return `<circle cx="${X}" cy="${Y}" r="${s}" fill="none" stroke="${color}"/>`;
    case 'square':
      return `<rect x="${r2(x - s)}" y="${r2(y - s)}" width="${2 * s}" height="${2 * s}" fill="none" stroke="${color}"/>`;
    case 'triangle':
      return `<path d="M${X} ${r2(y - s)}L${r2(x + s)} ${r2(y + s)}L${r2(x - s)} ${r2(y + s)}Z" fill="none" stroke="${color}"/>`;
    case 'diamond':
      return `<path d="M${X} ${r2(y - s)}L${r2(x + s)} ${Y}L${X} ${r2(y + s)}L${r2(x - s)} ${Y}Z" fill="none" stroke="${color}"/>`;
    case 'cross':
      return `<path d="M${r2(x - s)} ${r2(y - s)}L${r2(x + s)} ${r2(y + s)}M${r2(x - s)} ${r2(y + s)}L${r2(x + s)} ${r2(y - s)}" stroke="${color}"/>`;
    case 'plus':
      return `<path d="M${r2(x - s)} ${Y}L${r2(x + s)} ${Y}M${X} ${r2(y - s)}L${X} ${r2(y + s)}" stroke="${color}"/>`;
  }
}

/** `text` cut into lines of at most `max` characters, at spaces (a longer word stands alone). */
function wrap(text: string, max: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const w of text.split(' ')) {
    if (line && line.length + 1 + w.length > max) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines;
}

/** The opening of a chart's SVG document of W x H pixels: the root element and its white background. */
export function svgStart(W: number, H: number): string[] {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
  ];
}

/** A polyline path through the non-null points, broken at nulls. */
export function linePath(
  xs: readonly number[],
  ys: readonly (number | null)[],
  fx: (v: number) => number,
  fy: (v: number) => number,
): string {
  let d = '';
  let pen = false;
  for (let i = 0; i < xs.length; i++) {
    const y = ys[i];
    if (y === null || !Number.isFinite(y)) {
      pen = false;
      continue;
    }
    d += `${pen ? 'L' : 'M'}${r2(fx(xs[i]))} ${r2(fy(y))}`;
    pen = true;
  }
  return d;
}

/** The value range of everything drawn. */
function valueRange(c: ChartData): [number, number] {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  const see = (v: number | null): void => {
    if (v === null || !Number.isFinite(v)) return;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  };
  for (const v of c.rate) see(v);
  for (const m of c.markets) for (const v of m.price) see(v);
  for (const e of c.exclusions) see(e.price);
  for (const k of c.candles ?? []) {
    see(k.rate_low);
    see(k.rate_high);
  }
  if (lo > hi) return [0, 1];
  return [lo, hi];
}

/**
 * The SVG document of chart `c` (see the module description).
 *
 * @example
 * ```ts
 * writeFileSync('btc.svg', renderSvg(await chartData(src, query)));
 * ```
 */
export function renderSvg(c: ChartData, opts: SvgOptions = {}): string {
  const W = opts.width ?? 960;
  const H = opts.height ?? 540;
  const byPeriod = c.resolution !== 'tick';
  // By period: candles only when each gets CANDLE_PX; the panel of weight shares when the data holds them.
  const shares = byPeriod && c.weight_share && c.weight_share.length > 0 ? c.weight_share : undefined;
  if (byPeriod && c.candles && c.candles.length * CANDLE_PX > W - 110) c = { ...c, candles: null };
  const reasons = REASON_ORDER.filter((r) => c.exclusions.some((e) => e.reason === r));
  const legend: { label: string; draw: (x: number, y: number) => string }[] = [
    { label: `${c.asset_id_base}/${c.asset_id_quote} rate`, draw: (x, y) => `<path d="M${x} ${y}h22" stroke="#000" stroke-width="2.5"/>` },
  ];
  c.markets.forEach((m, i) => {
    const color = PALETTE[i % PALETTE.length];
    legend.push({ label: m.symbol_id, draw: (x, y) => `<path d="M${x} ${y}h22" stroke="${color}" stroke-width="1.2"/>` });
  });
  for (const r of reasons) {
    const st = REASON_STYLE[r];
    legend.push({ label: `left out: ${r}`, draw: (x, y) => marker(st.shape, x + 11, y, st.color) });
  }
  if (c.candles && c.candles.length > 0) {
    legend.push({
      label: `${c.period_id} candles`,
      draw: (x, y) => `<rect x="${x + 6}" y="${y - 6}" width="10" height="12" fill="#2ca02c" fill-opacity="0.25" stroke="#2ca02c"/>`,
    });
  }
  shares?.forEach((m, i) => {
    const color = PALETTE[i % PALETTE.length];
    legend.push({
      label: `${m.symbol_id} share`,
      draw: (x, y) => `<rect x="${x + 4}" y="${y - 6}" width="14" height="12" fill="${color}" fill-opacity="0.55"/>`,
    });
  });
  if (shares) legend.push({ label: 'markets used (right)', draw: (x, y) => `<path d="M${x} ${y}h22" stroke="#000" stroke-width="1.2"/>` });
  // Legend rows: as many items per row as fit.
  // By period, wide enough for the longest label (the markets' shares); else 200 px.
  const itemW = byPeriod ? Math.max(200, 40 + 7 * Math.max(...legend.map((l) => l.label.length))) : 200;
  const perRow = Math.max(1, Math.floor((W - 80) / itemW));
  const rows = Math.ceil(legend.length / perRow);
  const noteLines = c.note ? wrap(`Note: ${c.note}`, Math.max(20, Math.floor((W - 110) / 6))) : [];
  const noteH = noteLines.length * 14;
  const M = { left: 86, right: 24, top: 46 + noteH, bottom: 56 + rows * 20 };
  const px0 = M.left;
  const px1 = W - M.right;
  const py0 = M.top;
  const bottom = H - M.bottom;
  // With the panel: the rate above, the panel (a third of the height) below, the time axis under both.
  const py1 = shares ? py0 + Math.round(((bottom - py0) * 2) / 3) - 8 : bottom;

  const t0 = c.ticks[0];
  const t1 = c.ticks[c.ticks.length - 1];
  const [vmin, vmax] = valueRange(c);
  const yt = niceTicks(vmin, vmax, 6);
  const xt = timeTicks(t0, t1, 7);
  const fx = linearScale(t0, t1, px0, px1);
  const fy = linearScale(yt.lo, yt.hi, py1, py0);

  const out = svgStart(W, H);
  const day = (s: string): string => s.slice(0, 10);
  const hms = (s: string): string => s.slice(11, 19);
  const range =
    day(c.time_start) === day(c.time_end)
      ? `${day(c.time_start)} ${hms(c.time_start)} to ${hms(c.time_end)} UTC`
      : `${day(c.time_start)} ${hms(c.time_start)} to ${day(c.time_end)} ${hms(c.time_end)} UTC`;
  const by = byPeriod ? `, ${c.resolution} buckets` : '';
  out.push(
    `<text x="${px0}" y="24" font-size="16" font-weight="bold">${esc(`${c.asset_id_base}/${c.asset_id_quote}, ${range}${by}`)}</text>`,
  );
  noteLines.forEach((line, i) => {
    out.push(`<text x="${px0}" y="${42 + i * 14}" font-size="11" fill="#a33">${esc(line)}</text>`);
  });

  // Grid and axes.
  out.push('<g stroke="#e3e3e3" stroke-width="1">');
  for (const v of yt.ticks) out.push(`<path d="M${px0} ${r2(fy(v))}H${px1}"/>`);
  for (const t of xt.ticks) out.push(`<path d="M${r2(fx(t))} ${py0}V${py1}"/>`);
  out.push('</g>');
  out.push(`<rect x="${px0}" y="${py0}" width="${px1 - px0}" height="${py1 - py0}" fill="none" stroke="#555"/>`);
  out.push('<g text-anchor="end" fill="#333">');
  for (const v of yt.ticks) out.push(`<text x="${px0 - 6}" y="${r2(fy(v) + 4)}">${v.toFixed(yt.decimals)}</text>`);
  out.push('</g>');
  out.push('<g text-anchor="middle" fill="#333">');
  xt.ticks.forEach((t, i) => {
    out.push(`<path d="M${r2(fx(t))} ${bottom}v5" stroke="#555"/><text x="${r2(fx(t))}" y="${bottom + 18}">${xt.labels[i]}</text>`);
  });
  out.push('</g>');
  out.push(`<text x="${(px0 + px1) / 2}" y="${bottom + 36}" text-anchor="middle" fill="#333">time (UTC)</text>`);
  out.push(
    `<text transform="translate(16 ${r2((py0 + py1) / 2)}) rotate(-90)" text-anchor="middle" fill="#333">${esc(`${c.asset_id_quote} per ${c.asset_id_base}`)}</text>`,
  );

  out.push(`<clipPath id="plot"><rect x="${px0}" y="${py0}" width="${px1 - px0}" height="${py1 - py0}"/></clipPath>`);
  out.push('<g clip-path="url(#plot)">');
  // Candles behind the lines.
  for (const k of c.candles ?? []) {
    if (k.rate_open === null || k.rate_close === null || k.rate_high === null || k.rate_low === null) continue;
    const a = Date.parse(k.time_period_start) / 1000;
    const b = Date.parse(k.time_period_end) / 1000;
    const xa = fx(a);
    const xb = fx(b);
    const w = Math.max(1, (xb - xa) * 0.7);
    const xm = (xa + xb) / 2;
    const up = k.rate_close >= k.rate_open;
    const color = up ? '#2ca02c' : '#d62728';
    const top = fy(Math.max(k.rate_open, k.rate_close));
    const bot = fy(Math.min(k.rate_open, k.rate_close));
    out.push(
      `<path d="M${r2(xm)} ${r2(fy(k.rate_high))}V${r2(fy(k.rate_low))}" stroke="${color}"/>` +
        `<rect x="${r2(xm - w / 2)}" y="${r2(top)}" width="${r2(w)}" height="${r2(Math.max(1, bot - top))}" fill="${color}" fill-opacity="0.25" stroke="${color}"/>`,
    );
  }
  c.markets.forEach((m, i) => {
    const d = linePath(c.ticks, m.price, fx, fy);
    if (d) out.push(`<path d="${d}" fill="none" stroke="${PALETTE[i % PALETTE.length]}" stroke-width="1.2" stroke-opacity="0.85"/>`);
  });
  for (const r of reasons) {
    const st = REASON_STYLE[r];
    out.push(
      `<g>${c.exclusions
        .filter((e) => e.reason === r)
        .map((e) => marker(st.shape, fx(e.t), fy(e.price), st.color, 2))
        .join('')}</g>`,
    );
  }
  const rd = linePath(c.ticks, c.rate, fx, fy);
  if (rd) out.push(`<path d="${rd}" fill="none" stroke="#000" stroke-width="2.5" stroke-linejoin="round"/>`);
  out.push('</g>');
  if (shares) out.push(...sharesPanel(c, { x0: px0, x1: px1, y0: py1 + 16, y1: bottom }, fx, PALETTE));

  // Legend.
  const ly = bottom + 56;
  legend.forEach((item, i) => {
    const x = px0 + (i % perRow) * itemW;
    const y = ly + Math.floor(i / perRow) * 20;
    out.push(`${item.draw(x, y)}<text x="${x + 28}" y="${y + 4}">${esc(item.label)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
