/**
 * One process of tick/L+own-metrics' overhead measure (run.ts starts it): a warm L engine
 * (engines.ts), plain or with a listener taking xrate's own metrics, ticked `warm` seconds untimed
 * and then `ticks` seconds timed, as tick/L times them. Prints one line of JSON: the median tick in
 * ms, the ticks timed and the own-metric points received.
 *
 * `node --expose-gc --import tsx bench/ownTicks.ts plain|own TICKS WARM`
 *
 * @module
 */
import { applySecond, received, S, tickAt, warmEngine } from './engines.js';
import { median } from './replay-db.js';

const [mode, ticksArg, warmArg] = process.argv.slice(2);
if (mode !== 'plain' && mode !== 'own') throw new Error(`ownTicks: the first argument is plain or own, not ${mode}`);
const ticks = Number(ticksArg);
const warm = Number(warmArg);
if (!(ticks > 0 && warm >= 0)) throw new Error(`ownTicks: TICKS (${ticksArg}) and WARM (${warmArg}) must be counts`);
const w = warmEngine('L', mode === 'own');
const times: number[] = [];
for (let i = 0; i < warm + ticks; i++) {
  w.tick += S;
  applySecond(w.engine, w.u, w.tick);
  const t0 = performance.now();
  tickAt(w.engine, w.tick);
  if (i >= warm) times.push(performance.now() - t0);
}
process.stdout.write(`${JSON.stringify({ mode, median_ms: median(times), ticks: times.length, own_points: received.ownPoints })}\n`);
