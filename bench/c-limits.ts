/**
 * The C programs some speed goals are ratios to (docs/performance.md, "Ratios to C"):
 * `ndjson_scan.c` (the least a replay must do with an NDJSON log) and `refresh.c` (one refresh of
 * an L universe: `C pair_kernel` and `C bfs1 (USD)`).
 *
 * Their sources are not part of this repository (nothing says they may be copied): they are read
 * from the directory named by `$XRATE_PERF_DIR` and built with `gcc -O2 -o X X.c -lm` into the
 * bench temporary directory at bench time. Without that variable, without gcc, or when a build or
 * run fails, the ratio is recorded as `null` with the reason.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { XrateEvent } from '../src/core/types.js';
import type { Universe } from './universe.js';

/** A built C program, or why there is none. */
export type Built = { exe: string } | { reason: string };

const built = new Map<string, Built>();

/** Builds `$XRATE_PERF_DIR/<name>.c` into `dir` once per process. */
export function buildC(name: 'ndjson_scan' | 'refresh', dir: string): Built {
  const key = `${name}\0${dir}`;
  let b = built.get(key);
  if (!b) {
    b = build(name, dir);
    built.set(key, b);
  }
  return b;
}

function build(name: string, dir: string): Built {
  const perf = process.env.XRATE_PERF_DIR;
  if (!perf) return { reason: 'XRATE_PERF_DIR is not set (the directory holding the C reference programs)' };
  const src = join(perf, `${name}.c`);
  if (!existsSync(src)) return { reason: `${src} not found` };
  const exe = join(dir, name);
  const r = spawnSync('gcc', ['-O2', '-o', exe, src, '-lm'], { encoding: 'utf8' });
  if (r.error) return { reason: `gcc not available (${r.error.message})` };
  if (r.status !== 0) return { reason: `gcc failed on ${src}: ${r.stderr.trim().split('\n')[0] ?? ''}` };
  return { exe };
}

function jsonLines(stdout: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of stdout.split('\n')) {
    const t = line.trim();
    // printf writes a non-finite double as inf or nan (refresh.c's rate_sum when a pair has no rate).
    if (t.startsWith('{')) out.push(JSON.parse(t.replace(/(?<=:)-?(inf|nan)(?=[,}])/gi, 'null')) as Record<string, unknown>);
  }
  return out;
}

/** Runs `ndjson_scan FILE` (FILE must be uncompressed NDJSON); its own timing of the scan, file read excluded. */
export function ndjsonScan(exe: string, file: string): { seconds: number; lines: number } {
  const r = spawnSync(exe, [file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ndjson_scan ${file} failed: ${r.stderr || r.error?.message}`);
  const j = jsonLines(r.stdout).pop() as { seconds: number; lines: number };
  return { seconds: j.seconds, lines: j.lines };
}

/** What `refresh` reports on one universe (median milliseconds of each of its loops). */
export interface RefreshFigures {
  pair_kernel_ms: number;
  bfs1_ms: number;
  /** Assets reached from asset 0 (USD). */
  reach: number;
}

/** Runs `refresh` on the universe.bin at `universe` and reads its `C pair_kernel` and `C bfs1 (USD)` lines. */
export function runRefresh(exe: string, universe: string): RefreshFigures {
  const r = spawnSync(exe, [], { encoding: 'utf8', env: { ...process.env, UNIVERSE: universe } });
  if (r.status !== 0) throw new Error(`refresh on ${universe} failed: ${r.stderr || r.error?.message}`);
  const lines = jsonLines(r.stdout);
  const ms = (name: string): number => {
    const l = lines.find((x) => x.name === name);
    if (!l || typeof l.median_ms !== 'number') throw new Error(`refresh printed no "${name}" line:\n${r.stdout}`);
    return l.median_ms;
  };
  const reach = lines.find((x) => typeof x.reach === 'number')?.reach as number;
  return { pair_kernel_ms: ms('C pair_kernel'), bfs1_ms: ms('C bfs1 (USD)'), reach };
}

/**
 * Writes a bench universe as it stands after `warmup` (the events bench/run.ts feeds the engine
 * before timing ticks) in the `universe.bin` layout refresh.c reads (little-endian): int32 NA, nP,
 * nS, NE2; int32 pairStart[nP+1]; int32 symRank[nS]; float64 symMid[nS]; float64 symVol[nS];
 * int32 pairBase[nP], pairQuote[nP]; then the asset graph in CSR form: int32 off[NA+1], tgt[NE2],
 * epair[NE2], edir[NE2].
 *
 * Symbols are the markets of legitimate exchanges (the others never contribute), grouped by pair;
 * a symbol's mid is its warm-up quote's, its volume its warm-up trade's size, and its rank is
 * `2 - xrate rank` (refresh.c keeps the lowest rank value, xrate the highest rank). Each pair
 * (base, quote) gives the edge base -> quote (edir 0, weight = rate) and quote -> base (edir 1,
 * weight = 1 / rate); asset 0 is USD.
 */
export function writeUniverseBin(u: Universe, warmup: XrateEvent[], path: string): void {
  const exch = new Map<string, { legitimate: boolean; rank: number }>();
  const mid = new Map<string, number>();
  const vol = new Map<string, number>();
  for (const ev of warmup) {
    if (ev.type === 'exchange') exch.set(ev.exchangeId, { legitimate: ev.legitimate, rank: ev.rank });
    else if (ev.type === 'quote') mid.set(ev.symbolId, (ev.bidPrice.value + ev.askPrice.value) / 2);
    else if (ev.type === 'trade') vol.set(ev.symbolId, (vol.get(ev.symbolId) ?? 0) + ev.size.value);
  }
  const NA = u.assets.length;
  const nP = u.pairs.length;
  const syms = u.markets.filter((m) => exch.get(u.exchanges[m.exchange])?.legitimate);
  // u.markets lists each pair's markets together, pairs in order.
  syms.sort((a, b) => a.pair - b.pair);
  const nS = syms.length;
  const NE2 = 2 * nP;
  const pairStart = new Int32Array(nP + 1);
  for (const m of syms) pairStart[m.pair + 1]++;
  for (let p = 0; p < nP; p++) pairStart[p + 1] += pairStart[p];
  const symRank = new Int32Array(nS);
  const symMid = new Float64Array(nS);
  const symVol = new Float64Array(nS);
  for (const [i, m] of syms.entries()) {
    symRank[i] = 2 - exch.get(u.exchanges[m.exchange])!.rank;
    symMid[i] = mid.get(m.symbol) ?? Number.NaN;
    symVol[i] = vol.get(m.symbol) ?? 0;
  }
  const pairBase = Int32Array.from(u.pairs, ([b]) => b);
  const pairQuote = Int32Array.from(u.pairs, ([, q]) => q);
  const off = new Int32Array(NA + 1);
  for (const [b, q] of u.pairs) {
    off[b + 1]++;
    off[q + 1]++;
  }
  for (let a = 0; a < NA; a++) off[a + 1] += off[a];
  const fill = off.slice(0, NA);
  const tgt = new Int32Array(NE2);
  const epair = new Int32Array(NE2);
  const edir = new Int32Array(NE2);
  for (const [p, [b, q]] of u.pairs.entries()) {
    let e = fill[b]++;
    tgt[e] = q;
    epair[e] = p;
    edir[e] = 0;
    e = fill[q]++;
    tgt[e] = b;
    epair[e] = p;
    edir[e] = 1;
  }
  const parts = [Int32Array.of(NA, nP, nS, NE2), pairStart, symRank, symMid, symVol, pairBase, pairQuote, off, tgt, epair, edir];
  writeFileSync(path, Buffer.concat(parts.map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength))));
}
