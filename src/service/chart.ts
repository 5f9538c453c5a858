/**
 * The chart of the service: the data route and the page that draws it.
 *
 * - `GET /v1/exchangerate/{base}/{quote}/chart?time_start=&time_end=&points=&period_id=`
 *   (extension, right `history`): the {@link ChartData} of `xrate plot` (src/answers/chart.ts) over
 *   the served database, at the resolution of src/answers/chartResolution.ts: up to 7200 ticks,
 *   the rate per tick, each market's price, the markets left out with their reason, each point's
 *   provenance, and candles with `period_id`; a longer range, by the buckets of a period (at most
 *   `points` of them), with each market's weight share. Without `time_end`, through the last
 *   tick; without `time_start`, the hour before `time_end` (from the first tick at the earliest).
 *   It may replay the run's logs, so it is heavy (limits.ts: a few per key at once) and costs one
 *   request per 100 points.
 * - `GET /` the page, and `GET /ui/{file}` its script, style and the uPlot library (served from the
 *   installed `uplot` package): no key, since they hold no data; the page asks the data route
 *   with the key of `?apikey=` in its address or one it prompts for (kept in sessionStorage).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { US_PER_HOUR } from '../core/time.js';
import { isXrateError } from '../core/errors.js';
import { chartData, type ChartRequest } from '../answers/chart.js';
import { CHART_POINTS } from '../answers/chartResolution.js';
import { registerDeclared } from '../http/declare.js';
import { CHART_ROUTE, pageRoute } from './api/rateRoutes.js';
import { badParam } from '../http/errors.js';
import { CONTENT_TYPES } from '../http/format/index.js';
import type { HeavyPool } from './heavyPool.js';
import type { RequestLimits } from './requestLimits.js';
import { noDataError, type RateProvider } from '../answers/index.js';

/** The page's own files, in the package's `ui/` folder. */
const UI_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'ui');

/** What `/` and `/ui/...` serve: path, file, content type. */
function assets(): { path: string; file: string; type: string }[] {
  const uplot = dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'));
  return [
    { path: '/', file: join(UI_DIR, 'index.html'), type: 'text/html; charset=utf-8' },
    { path: '/ui/chart.js', file: join(UI_DIR, 'chart.js'), type: 'text/javascript; charset=utf-8' },
    { path: '/ui/chart.css', file: join(UI_DIR, 'chart.css'), type: 'text/css; charset=utf-8' },
    { path: '/ui/uPlot.iife.min.js', file: join(uplot, 'uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
    { path: '/ui/uPlot.min.css', file: join(uplot, 'uPlot.min.css'), type: 'text/css; charset=utf-8' },
  ];
}

/**
 * Registers the chart route and the page on `app` (the onRequest hook of server.ts authenticates
 * the chart route; the page's routes have no right, so no key).
 */
export function registerChartRoutes(app: FastifyInstance, provider: RateProvider, limits: RequestLimits, pool?: HeavyPool): void {
  for (const a of assets()) {
    const body = readFileSync(a.file);
    // The page is small and names its assets without a version: revalidated at every load.
    registerDeclared(app, pageRoute(a.path, a.type), (_req, reply) =>
      reply
        .header('content-type', a.type)
        .header('cache-control', 'no-cache')
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
        .send(body),
    );
  }

  registerDeclared<{ asset_id_base: string; asset_id_quote: string }>(app, CHART_ROUTE, async (req, reply, q) => {
    const info = provider.info();
    if (info.mode === 'follow') {
      throw noDataError(
        'a chart replays the logs of a complete replay run, and under --follow the run completes only when the service stops: ' +
          'chart the log with "xrate plot LOG", or serve the database once the service has stopped',
      );
    }
    if (info.mode === 'replica') {
      throw noDataError(
        'a chart replays the logs of a complete replay run, and a replica reads a stream, not logs: ' +
          'chart the published logs with "xrate plot LOG" (the same rates, by determinism)',
      );
    }
    if (info.lastTick === undefined) throw noDataError('no tick has been computed yet');
    const to = q.time('time_end') ?? info.lastTick;
    const from = q.time('time_start') ?? Math.max(info.firstTick ?? to, to - US_PER_HOUR);
    if (!(to > from)) throw badParam('time_end', 'must be after time_start');
    const periodId = q.text('period_id')?.toUpperCase();
    const points = q.int('points', CHART_POINTS.min, CHART_POINTS.max, CHART_POINTS.default);
    // Replaying the run's logs: as heavy as a long history, whatever the range.
    limits.holdHeavy(req, reply, Number.POSITIVE_INFINITY);
    // Asset ids as the other routes match them: exactly, else ignoring case (as of the last tick).
    let { asset_id_base: base, asset_id_quote: quote } = req.params;
    try {
      ({ asset_id_base: base, asset_id_quote: quote } = provider.rate(base, quote).value);
    } catch {
      // no rate at the last tick: the ids as given
    }
    if (pool) {
      // Replayed on a worker thread (heavyPool.ts): the same bytes, the event loop free meanwhile.
      const done = await pool.run({ kind: 'chart', db: info.source, base, quote, from, to, periodId, points });
      limits.charge(req, reply, done.cost);
      return reply.header('content-type', done.type).send(done.body);
    }
    const done = await chartAnswer(info.source, { base, quote, from, to, periodId, points });
    limits.charge(req, reply, done.cost);
    return reply.header('content-type', done.type).send(done.body);
  });
}

/**
 * The chart route's answer over the replay database `db`: the JSON of {@link chartData}, its cost
 * (one request per 100 points), or the route's error (a bad range, `points` or `period_id` a 400
 * naming it, no data a 550). What the route sends, on the event loop or on a heavy-answer thread
 * (heavyWorker.ts).
 *
 * @example
 * ```ts
 * const { body, cost } = await chartAnswer('out/xrate.sqlite', { base: 'BTC', quote: 'USD', from, to });
 * ```
 */
export async function chartAnswer(db: string, q: ChartRequest): Promise<{ body: Buffer; type: string; cost: number }> {
  let data: Awaited<ReturnType<typeof chartData>>;
  try {
    data = await chartData({ inputs: [db] }, q);
  } catch (e) {
    if (isXrateError(e, 'usage')) throw badParam(e.field ?? 'time_end', e.message);
    if (isXrateError(e)) throw noDataError(e.message);
    throw e;
  }
  return { body: Buffer.from(JSON.stringify(data)), type: CONTENT_TYPES.json, cost: Math.max(1, Math.ceil(data.ticks.length / 100)) };
}
