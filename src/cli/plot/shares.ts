/**
 * The panel under a chart drawn by period (`xrate plot` over a long range): each market's weight
 * share stacked (0 to 100 %, in the markets' colours) and the count of markets used as a black
 * step line on the right axis. Deterministic, like svg.ts.
 *
 * @module
 */
import type { ChartData } from '../../replay/chart.js';
import { linearScale } from './scale.js';

/** The panel's box, px. */
export interface PanelBox {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

function r2(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/**
 * The SVG elements of the panel of `c` in `box` (times mapped by `fx`), market k in `colors[k]`;
 * none when `c` has no weight shares.
 *
 * @example
 * ```ts
 * out.push(...sharesPanel(chart, { x0: 86, x1: 936, y0: 380, y1: 470 }, fx, PALETTE));
 * ```
 */
export function sharesPanel(c: ChartData, box: PanelBox, fx: (t: number) => number, colors: readonly string[]): string[] {
  const shares = c.weight_share;
  if (!shares || shares.length === 0) return [];
  const out: string[] = [];
  const fy = linearScale(0, 1, box.y1, box.y0);
  const n = c.ticks.length;
  out.push(`<rect x="${box.x0}" y="${r2(box.y0)}" width="${box.x1 - box.x0}" height="${r2(box.y1 - box.y0)}" fill="none" stroke="#555"/>`);
  out.push('<g text-anchor="end" fill="#333">');
  for (const v of [0, 0.5, 1]) out.push(`<text x="${box.x0 - 6}" y="${r2(fy(v) + 4)}">${v * 100} %</text>`);
  out.push('</g>');
  out.push(
    `<text transform="translate(16 ${r2((box.y0 + box.y1) / 2)}) rotate(-90)" text-anchor="middle" fill="#333" font-size="11">weight share</text>`,
  );
  // Stacked areas: market k between the sum of the shares before it and that sum plus its own.
  const below = new Array<number>(n).fill(0);
  shares.forEach((m, k) => {
    const top = below.map((b, i) => b + (m.share[i] ?? 0));
    let d = '';
    for (let i = 0; i < n; i++) d += `${i === 0 ? 'M' : 'L'}${r2(fx(c.ticks[i]))} ${r2(fy(Math.min(1, top[i])))}`;
    for (let i = n - 1; i >= 0; i--) d += `L${r2(fx(c.ticks[i]))} ${r2(fy(Math.min(1, below[i])))}`;
    if (n > 0) out.push(`<path d="${d}Z" fill="${colors[k % colors.length]}" fill-opacity="0.55" stroke="none"/>`);
    for (let i = 0; i < n; i++) below[i] = top[i];
  });
  // The count of markets used, on the right axis.
  const used = c.markets_used ?? [];
  const max = Math.max(1, ...used.map((v) => v ?? 0));
  const fc = linearScale(0, max, box.y1, box.y0);
  let d = '';
  let pen = false;
  for (let i = 0; i < n; i++) {
    const v = used[i];
    if (v === null || v === undefined) {
      pen = false;
      continue;
    }
    d += `${pen ? 'H' : `M${r2(fx(c.ticks[i]))} `}${pen ? `${r2(fx(c.ticks[i]))}V${r2(fc(v))}` : r2(fc(v))}`;
    pen = true;
  }
  if (d) out.push(`<path d="${d}" fill="none" stroke="#000" stroke-width="1.2"/>`);
  out.push(
    `<g fill="#333" font-size="11"><text x="${box.x1 + 4}" y="${r2(fc(max) + 4)}">${max}</text><text x="${box.x1 + 4}" y="${r2(fc(0) + 4)}">0</text></g>`,
  );
  return out;
}
