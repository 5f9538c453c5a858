/**
 * The SVG of several pairs compared (`xrate plot --pair A/B --pair C/D ...`): each pair's rate as
 * its % change from its first value (its first point with a rate), all on one axis, so pairs of any
 * price level compare; the legend says so. No markets, candles or weight shares (svg.ts draws those
 * of one pair). Deterministic, like svg.ts.
 *
 * @module
 */
import type { ChartData } from '../../replay/chart.js';
import { linearScale, niceTicks, timeTicks } from './scale.js';
import { esc, linePath, PALETTE, r2, type SvgOptions, svgStart } from './svg.js';

/**
 * Each value of `rate` as its % change from the first non-null one (null stays null).
 *
 * @example
 * ```ts
 * percentChange([null, 50, 55, null, 45]); // [null, 0, 10, null, -10]
 * ```
 */
export function percentChange(rate: readonly (number | null)[]): (number | null)[] {
  const first = rate.find((v) => v !== null && Number.isFinite(v) && v !== 0);
  if (first === undefined || first === null) return rate.map(() => null);
  return rate.map((v) => (v === null ? null : (v / first - 1) * 100));
}

/**
 * The SVG document comparing `charts` (same range; see the module description).
 *
 * @example
 * ```ts
 * writeFileSync('cmp.svg', renderCompareSvg([btcUsd, ethUsd], { width: 960 }));
 * ```
 */
export function renderCompareSvg(charts: readonly ChartData[], opts: SvgOptions = {}): string {
  const W = opts.width ?? 960;
  const H = opts.height ?? 540;
  const series = charts.map((c) => ({ c, pct: percentChange(c.rate) }));
  const itemW = 320;
  const perRow = Math.max(1, Math.floor((W - 80) / itemW));
  const rows = Math.ceil(series.length / perRow);
  const M = { left: 86, right: 24, top: 46, bottom: 56 + rows * 20 };
  const px0 = M.left;
  const px1 = W - M.right;
  const py0 = M.top;
  const py1 = H - M.bottom;
  let t0 = Number.POSITIVE_INFINITY;
  let t1 = Number.NEGATIVE_INFINITY;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const { c, pct } of series) {
    if (c.ticks.length > 0) {
      t0 = Math.min(t0, c.ticks[0]);
      t1 = Math.max(t1, c.ticks[c.ticks.length - 1]);
    }
    for (const v of pct) {
      if (v === null) continue;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  }
  if (lo > hi) [lo, hi] = [0, 1];
  if (t0 > t1) [t0, t1] = [0, 1];
  const yt = niceTicks(lo, hi, 6);
  const xt = timeTicks(t0, t1, 7);
  const fx = linearScale(t0, t1, px0, px1);
  const fy = linearScale(yt.lo, yt.hi, py1, py0);
  const out = svgStart(W, H);
  const first = charts[0];
  const by = [...new Set(charts.map((c) => c.resolution))].map((r) => (r === 'tick' ? 'ticks' : `${r} buckets`)).join(', ');
  const title = `${charts.map((c) => `${c.asset_id_base}/${c.asset_id_quote}`).join(', ')}: % change`;
  const range = `${first.time_start.slice(0, 19).replace('T', ' ')} to ${first.time_end.slice(0, 19).replace('T', ' ')} UTC, ${by}`;
  out.push(`<text x="${px0}" y="22" font-size="16" font-weight="bold">${esc(title)}</text>`);
  out.push(`<text x="${px0}" y="38" font-size="11" fill="#333">${esc(range)}</text>`);
  out.push('<g stroke="#e3e3e3" stroke-width="1">');
  for (const v of yt.ticks) out.push(`<path d="M${px0} ${r2(fy(v))}H${px1}"/>`);
  for (const t of xt.ticks) out.push(`<path d="M${r2(fx(t))} ${py0}V${py1}"/>`);
  out.push('</g>');
  out.push(`<rect x="${px0}" y="${py0}" width="${px1 - px0}" height="${py1 - py0}" fill="none" stroke="#555"/>`);
  out.push('<g text-anchor="end" fill="#333">');
  for (const v of yt.ticks) out.push(`<text x="${px0 - 6}" y="${r2(fy(v) + 4)}">${v.toFixed(yt.decimals)} %</text>`);
  out.push('</g>');
  out.push('<g text-anchor="middle" fill="#333">');
  xt.ticks.forEach((t, i) => {
    out.push(`<path d="M${r2(fx(t))} ${py1}v5" stroke="#555"/><text x="${r2(fx(t))}" y="${py1 + 18}">${xt.labels[i]}</text>`);
  });
  out.push('</g>');
  out.push(`<text x="${(px0 + px1) / 2}" y="${py1 + 36}" text-anchor="middle" fill="#333">time (UTC)</text>`);
  out.push(
    `<text transform="translate(16 ${r2((py0 + py1) / 2)}) rotate(-90)" text-anchor="middle" fill="#333">% change from the first value</text>`,
  );
  out.push(`<clipPath id="plot"><rect x="${px0}" y="${py0}" width="${px1 - px0}" height="${py1 - py0}"/></clipPath>`);
  out.push('<g clip-path="url(#plot)">');
  series.forEach(({ c, pct }, i) => {
    const d = linePath(c.ticks, pct, fx, fy);
    if (d) out.push(`<path d="${d}" fill="none" stroke="${PALETTE[i % PALETTE.length]}" stroke-width="2" stroke-linejoin="round"/>`);
  });
  out.push('</g>');
  series.forEach(({ c }, i) => {
    const x = px0 + (i % perRow) * itemW;
    const y = py1 + 56 + Math.floor(i / perRow) * 20;
    const label = `${c.asset_id_base}/${c.asset_id_quote} (% change from its first value)`;
    out.push(
      `<path d="M${x} ${y}h22" stroke="${PALETTE[i % PALETTE.length]}" stroke-width="2"/><text x="${x + 28}" y="${y + 4}">${esc(label)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
