/**
 * A family of GET routes as a table, served two ways: registered on the HTTP service, and answered
 * without HTTP for the CLI commands that mirror the routes (`xrate metrics`, `xrate symbols`), so
 * both give the same answer for the same path and query.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { PayloadKind } from './format/index.js';
import { negotiate, render } from './format/index.js';
import type { Right } from './keys.js';
import { HISTORY_MAX_LIMIT } from '../replay/query.js';
import type { Limiter } from './limits.js';
import { matchPath, Query } from './params.js';
import { charger, holdHeavy } from './routes.js';

/** What a route answers: a payload and its cost. */
export interface Answer {
  kind: PayloadKind;
  value: unknown[];
  cost: number;
}

/**
 * One route: its path (fastify syntax, `:name` for a parameter), whether it is a timeseries (heavy
 * above HEAVY_LIMIT items, as the exchange-rate history), and its answer from the family's source.
 */
export interface TableRoute<S> {
  path: string;
  timeseries?: boolean;
  answer(source: S, q: Query, params: Record<string, string>): Answer;
}

/**
 * Registers every route of `routes` (right `right`): query and format negotiated, heavy requests
 * held, the answer's cost charged, the payload rendered in the format asked for.
 *
 * @example
 * ```ts
 * registerRouteTable(app, ROUTES, source, 'metrics', limiter);
 * ```
 */
export function registerRouteTable<S>(
  app: FastifyInstance,
  routes: readonly TableRoute<S>[],
  source: S,
  right: Right,
  limiter: Limiter,
): void {
  const charge = charger(limiter);
  for (const r of routes) {
    app.get<{ Params: Record<string, string> }>(r.path, { config: { right } }, (req, reply) => {
      const q = new Query(req.query);
      const fmt = negotiate(q, req.headers.accept);
      if (r.timeseries) holdHeavy(limiter, req, reply, q.int('limit', 1, HISTORY_MAX_LIMIT, 100));
      const a = r.answer(source, q, req.params);
      charge(req, reply, a.cost);
      const { body, type } = render(a.kind, a.value, fmt);
      return reply.header('content-type', type).send(body);
    });
  }
}

/**
 * The answer of the route of `routes` whose path matches `path`, to `query`, as the service gives
 * it; undefined when none matches. A bad parameter throws the service's error (status, message).
 *
 * @example
 * ```ts
 * answerFromTable(ROUTES, source, '/v1/metrics/listing', {})?.value;
 * ```
 */
export function answerFromTable<S>(
  routes: readonly TableRoute<S>[],
  source: S,
  path: string,
  query: Record<string, string>,
): Answer | undefined {
  for (const r of routes) {
    const params = matchPath(r.path, path);
    if (params) return r.answer(source, new Query(query), params);
  }
  return undefined;
}
