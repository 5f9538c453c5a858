/**
 * memory/L, run by bench/run.ts in a fresh process: the heap and array buffers an engine of size L
 * holds after a 24-hour warm-up (every market trading about six times a day, ~100 quotes a
 * second, every market quoting in the last 5 minutes, 1,000 tracked pairs), in MB, printed as JSON.
 * Needs `node --expose-gc`.
 */
import { createEngine } from '../src/core/engine.js';
import { SIZES, Universe } from './universe.js';

const S = 1_000_000;
const START = 1_709_251_200 * S;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('bench/memory.ts needs node --expose-gc');

const u = new Universe('L', 42);
gc();
const before = process.memoryUsage();
const engine = createEngine();
for (const ev of u.warmup(START)) engine.apply(ev);
engine.advanceTo(START + S);
for (const p of engine.pairs().slice(0, 1_000)) engine.track(p.base, p.quote, ['1SEC', '1MIN', '1HRS', '1DAY']);
const markets = SIZES.L.markets;
const day = 86_400;
for (let sec = 2; sec <= day; sec++) {
  const T = START + sec * S;
  const qs = sec > day - 300 ? Math.ceil(markets / 300) : 100;
  for (const q of u.secondOfQuotes(T, qs / markets)) engine.apply(q);
  for (const t of u.secondOfTrades(T, 3)) engine.apply(t);
  engine.advanceTo(T);
}
gc();
const after = process.memoryUsage();
const mb = (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / (1024 * 1024);
console.log(JSON.stringify({ mb, ticks: engine.getStats().ticks, pairs: engine.pairs().length }));
