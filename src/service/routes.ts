/**
 * The exchange-rate routes (all GET):
 *
 * | route | right | answer |
 * |---|---|---|
 * | `/v1/exchangerate/{asset_id_base}/{asset_id_quote}` | rate | ExchangeRate (`time` optional) |
 * | `/v1/exchangerate/{asset_id_base}` | rates | `{asset_id_base, rates: [{time, asset_id_quote, rate}]}` (`filter_asset_id`, `invert`, `time`) |
 * | `/v1/exchangerate/history/periods` | periods | the 33 TimeseriesPeriod records |
 * | `/v1/exchangerate/{asset_id_base}/{asset_id_quote}/history` | history | ExchangeRatesTimeseriesItem[] (`period_id`, `time_start`, `time_end`, `limit`) |
 * | `/v1/exchangerate/{asset_id_base}/{asset_id_quote}/explain` | explain | provenance (extension, `time` optional) |
 *
 * A history is read and, when long, written a slice at a time (history.ts), so that a long one
 * never holds up the other requests; a history with a `limit` above HEAVY_LIMIT is heavy
 * (limits.ts: a few per key at once). A client that goes away stops the reading and the writing.
 *
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { EXCHANGE_RATE_PERIODS, exchangeRatePeriod } from '../core/periods.js';
import { HISTORY_MAX_LIMIT } from '../replay/query.js';
import { EXPLAIN_ROUTE, HISTORY_ROUTE, PERIODS_ROUTE, RATE_ROUTE, RATES_ROUTE } from './api/rateRoutes.js';
import { registerDeclared } from '../http/declare.js';
import { badParam } from '../http/errors.js';
import { CONTENT_TYPES, render, type OutputFormat, type PayloadKind } from '../http/format/index.js';
import { historyBody, readHistory } from './history.js';
import { shown, splitList } from '../http/params.js';
import type { RateProvider } from '../answers/index.js';
import type { RequestLimits } from './requestLimits.js';
import type { Right } from '../http/keys.js';

/** Route config: the right a key needs. */
export interface RouteConfig {
  right: Right;
}

type PairParams = { asset_id_base: string; asset_id_quote: string };

const PERIODS_JSON = JSON.stringify(EXCHANGE_RATE_PERIODS);

/** Registers the routes on `app` (the onRequest hook of server.ts has authenticated the key). */
export function registerRoutes(app: FastifyInstance, provider: RateProvider, limits: RequestLimits): void {
  const charge = (req: FastifyRequest, reply: FastifyReply, cost: number): void => limits.charge(req, reply, cost);

  const send = (reply: FastifyReply, kind: PayloadKind, value: unknown, fmt: OutputFormat, json?: string): FastifyReply => {
    if (fmt.kind === 'json') return reply.header('content-type', CONTENT_TYPES.json).send(json ?? JSON.stringify(value));
    const { body, type } = render(kind, value, fmt);
    return reply.header('content-type', type).send(body);
  };

  registerDeclared<PairParams>(app, RATE_ROUTE, (req, reply, q, fmt) => {
    const r = provider.rate(req.params.asset_id_base, req.params.asset_id_quote, q.time('time'));
    charge(req, reply, 1);
    return send(reply, 'rate', r.value, fmt, r.json);
  });

  registerDeclared<{ asset_id_base: string }>(app, RATES_ROUTE, (req, reply, q, fmt) => {
    const invert = q.bool('invert', false);
    const at = q.time('time');
    const filter = splitList(q.str('filter_asset_id'));
    const v = provider.rates(req.params.asset_id_base, { at, filter, invert });
    charge(req, reply, 1);
    return send(reply, 'rates', v, fmt);
  });

  registerDeclared(app, PERIODS_ROUTE, (req, reply, _q, fmt) => {
    charge(req, reply, 1);
    return send(reply, 'periods', EXCHANGE_RATE_PERIODS, fmt, PERIODS_JSON);
  });

  // period_id and time_start are declared required: their absence is answered before this runs.
  registerDeclared<PairParams>(app, HISTORY_ROUTE, async (req, reply, q, fmt) => {
    const pid = q.text('period_id')!;
    const period = exchangeRatePeriod(pid);
    if (!period)
      throw badParam(
        'period_id',
        `${shown(pid)} is not an exchange-rate period (one of ${EXCHANGE_RATE_PERIODS.map((p) => p.period_id).join(', ')})`,
      );
    const from = q.time('time_start')!;
    // Required (declared in api/rateRoutes.ts, checked before the handler).
    const to = q.time('time_end')!;
    if (!(to > from)) throw badParam('time_end', 'must be after time_start');
    const limitGiven = q.text('limit') !== undefined;
    const limit = q.int('limit', 1, HISTORY_MAX_LIMIT, 100);
    limits.holdHeavy(req, reply, limit);
    let gone = false;
    reply.raw.once('close', () => {
      gone = true;
    });
    const data = await readHistory(provider, req.params.asset_id_base, req.params.asset_id_quote, { period, from, to, limit }, () => gone);
    // With `limit`, every 100 data points returned cost one request (at least 1).
    charge(req, reply, limitGiven ? Math.max(1, Math.ceil(data.length / 100)) : 1);
    const { body, type } = historyBody(data, fmt);
    return reply.header('content-type', type).send(body);
  });

  registerDeclared<PairParams>(app, EXPLAIN_ROUTE, async (req, reply, q, fmt) => {
    const e = await provider.explain(req.params.asset_id_base, req.params.asset_id_quote, q.time('time'));
    charge(req, reply, 1);
    return send(reply, 'explain', e, fmt);
  });
}
