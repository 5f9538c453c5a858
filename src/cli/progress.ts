/**
 * Terminal rendering for replays: a one-line progress bar (redrawn in place) and the summary
 * table printed at the end.
 *
 * @module
 */
import { formatTime } from '../core/time.js';
import { wireText } from '../core/wire.js';
import type { ParallelProgress } from '../replay/parallel.js';
import type { ReplayProgress, ReplaySummary } from '../replay/replay.js';

/**
 * `n` rounded, with a comma between each group of three digits, as `toLocaleString('en-US')`
 * writes it: without the locale's number formatting, whose first use loads it (about 20 ms of
 * every command that printed a summary).
 */
export function fmtInt(n: number): string {
  const r = Math.round(n);
  // Not finite, or past where String() writes every digit: the locale's own formatting.
  if (!(Math.abs(r) < 1e21)) return r.toLocaleString('en-US');
  const digits = String(Math.abs(r));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let k = out.length; k < digits.length; k += 3) out += `,${digits.slice(k, k + 3)}`;
  return r < 0 || Object.is(r, -0) ? `-${out}` : out;
}

function fmtDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '--';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(sec).padStart(2, '0')}s` : `${sec}s`;
}

/**
 * One progress line: bar over bytes read, events read, events/s, event time reached, ETA.
 *
 * @example
 * progressLine(p, 80) // "[#######.....] 58% 1,204,331 ev 812,000 ev/s 2024-03-01T05:12:09Z ETA 2s (1/1)"
 */
export function progressLine(p: ReplayProgress, width = 80): string {
  const frac = p.totalBytes > 0 ? Math.min(1, p.bytesRead / p.totalBytes) : 0;
  const rate = p.elapsedMs > 0 ? (p.eventsRead / p.elapsedMs) * 1000 : 0;
  const eta = frac > 0 ? (p.elapsedMs * (1 - frac)) / frac : NaN;
  const time = p.eventTime !== undefined ? `${formatTime(p.eventTime).slice(0, 19)}Z` : '--';
  const tail = ` ${Math.floor(frac * 100)}% ${fmtInt(p.eventsRead)} ev ${fmtInt(rate)} ev/s ${time} ETA ${fmtDuration(eta)}${p.inputs > 1 ? ` (${p.input + 1}/${p.inputs})` : ''}`;
  const barWidth = Math.max(10, width - tail.length - 2);
  const filled = Math.round(frac * barWidth);
  return `[${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}]${tail}`;
}

/**
 * One progress line of a partitioned replay: the stage, a bar over the records the partitions
 * read of what the pre-scan counted for them, partitions done, ETA.
 *
 * @example
 * parallelProgressLine(p, 80) // "[#####......] 41% 712,000 ev 502,113 ev/s partitions 0/2 ETA 3s"
 */
export function parallelProgressLine(p: ParallelProgress, width = 80): string {
  if (p.stage === 'prescan' || p.stage === 'merge') {
    const what = p.stage === 'prescan' ? 'reading the inputs to plan the partitions' : 'merging the partitions';
    return `${what}... ${fmtDuration(p.elapsedMs)}`.padEnd(Math.min(width, 60));
  }
  const frac = p.eventsToRead > 0 ? Math.min(1, p.eventsRead / p.eventsToRead) : 0;
  const rate = p.stageElapsedMs > 0 ? (p.eventsRead / p.stageElapsedMs) * 1000 : 0;
  const eta = frac > 0 ? (p.stageElapsedMs * (1 - frac)) / frac : NaN;
  const stage =
    p.stage === 'retrack'
      ? 'partitions run again to track more pairs'
      : p.stage === 'recarry'
        ? 'partitions run again with the state carried in'
        : 'partitions';
  const tail = ` ${Math.floor(frac * 100)}% ${fmtInt(p.eventsRead)} ev ${fmtInt(rate)} ev/s ${stage} ${p.done}/${p.partitions} ETA ${fmtDuration(eta)}`;
  const barWidth = Math.max(10, width - tail.length - 2);
  const filled = Math.round(frac * barWidth);
  return `[${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}]${tail}`;
}

/** The end-of-replay summary as an aligned two-column table. */
export function summaryTable(s: ReplaySummary): string {
  const rows: [string, string][] = [
    ['events read', fmtInt(s.eventsRead)],
    ['accepted', fmtInt(s.eventsAccepted)],
    ['rejected', fmtInt(s.eventsRejected)],
  ];
  for (const [reason, n] of Object.entries(s.rejectsByReason).sort()) rows.push([`  ${reason}`, fmtInt(n ?? 0)]);
  rows.push(
    ['quotes discarded (spread)', fmtInt(s.quotesDiscarded)],
    ['ticks', fmtInt(s.ticks)],
    ['first tick', s.firstTick !== undefined ? formatTime(s.firstTick) : '--'],
    ['last tick', s.lastTick !== undefined ? formatTime(s.lastTick) : '--'],
    ['pairs with a rate', fmtInt(s.pairsWithRate)],
    ['rate changes written', fmtInt(s.rateChanges)],
    ['OHLC buckets written', fmtInt(s.buckets)],
    ['time taken', `${(s.durationMs / 1000).toFixed(2)} s`],
    ['events/s', fmtInt(s.eventsPerSecond)],
    ['peak memory (RSS)', `${fmtInt(s.peakRssMb)} MB`],
  );
  const w = Math.max(...rows.map((r) => r[0].length));
  const v = Math.max(...rows.map((r) => r[1].length));
  return rows.map(([k, val]) => `${k.padEnd(w)}  ${val.padStart(v)}`).join('\n');
}

/** A table of current pair rates (for `npm start`), each as written everywhere (wireText). */
export function ratesTable(rows: { pair: string; rate: number; time: number; used: number; fresh: boolean }[]): string {
  const head = ['pair', 'rate', 'time', 'markets', 'fresh'];
  const body = rows.map((r) => [r.pair, wireText(r.rate), formatTime(r.time), String(r.used), r.fresh ? 'yes' : 'no']);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 1 || i === 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}
