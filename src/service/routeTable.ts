/**
 * A family of GET routes as a table, served two ways: registered on the HTTP service, and answered
 * without HTTP for the CLI commands that mirror the routes (`xrate metrics`, `xrate symbols`), so
 * both give the same answer for the same path and query. An answer may carry its JSON written
 * straight from the route's data (a metric history, metricHistory.ts): JSON answers are then
 * sent from it, a long one a slice at a time (slices.ts), the same bytes as `JSON.stringify`.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { checkRequired, registerDeclared } from '../http/declare.js';
import { tableRouteDecl } from './api/tableRoutes.js';
import type { OutputFormat, PayloadKind } from '../http/format/index.js';
import { CONTENT_TYPES, render } from '../http/format/index.js';
import { STREAM_MIN_ITEMS } from './history.js';
import type { Right } from '../http/keys.js';
import { HISTORY_MAX_LIMIT } from '../replay/query.js';
import { matchPath, Query } from '../http/params.js';
import type { RequestLimits } from './requestLimits.js';
import { type SlicedBody, slicedArrayBody } from './slices.js';
import { XrateError } from '../core/errors.js';

/**
 * An array answer's JSON written a run of items at a time (a long answer, without an object per
 * item): `[`, the runs, `]` are the bytes of `JSON.stringify` of the array.
 */
export interface JsonItems {
  /** Number of items. */
  readonly length: number;
  /** The JSON of items [from, to), each preceded by a comma but the array's first (ASCII bytes). */
  json(from: number, to: number): Buffer;
}

/** What a route answers: a payload (an array, or an object such as a grouped result) and its cost (and, for a long array, its JSON written without `value`). */
export interface Answer {
  kind: PayloadKind;
  value: unknown;
  cost: number;
  /** The JSON of `value`, written straight from the route's data: what JSON answers send when present. */
  json?: JsonItems;
}

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

/**
 * The body of an answer in `format`, and its Content-Type: as {@link render} renders it, but the
 * JSON of an answer with {@link Answer.json} is written from it, a slice at a time when it has more
 * than STREAM_MIN_ITEMS items (slices.ts), the same bytes.
 *
 * @example
 * ```ts
 * const { body, type } = answerBody(answer, { kind: 'json' });
 * ```
 */
export function answerBody(a: Answer, format: OutputFormat): { body: string | Buffer | SlicedBody; type: string } {
  const items = a.json;
  if (format.kind !== 'json' || items === undefined) return render(a.kind, a.value, format);
  if (items.length <= STREAM_MIN_ITEMS)
    return { body: Buffer.concat([OPEN, items.json(0, items.length), CLOSE]), type: CONTENT_TYPES.json };
  const body = slicedArrayBody({ head: OPEN, tail: CLOSE }, items.length, (from, to) => items.json(from, to));
  return { body, type: CONTENT_TYPES.json };
}

/**
 * The JSON text of an answer, `JSON.stringify(a.value)` (written from {@link Answer.json} when present).
 *
 * @example
 * ```ts
 * io.out(`${answerJson(answer)}\n`);
 * ```
 */
export function answerJson(a: Answer): string {
  const items = a.json;
  if (items === undefined) return JSON.stringify(a.value);
  return `[${items.json(0, items.length).toString('latin1')}]`;
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
 * Answers a timeseries route of a table on a worker thread: its path (parameters filled in), the
 * request's query and format; the finished body, its Content-Type and cost (heavyPool.ts).
 */
export type Offload = (
  path: string,
  query: Record<string, string>,
  format: OutputFormat,
) => Promise<{ body: Buffer; type: string; cost: number }>;

/**
 * Registers every route of `routes` (right `right`), each from its declaration (api/tableRoutes.ts:
 * a route without one, or of another right, throws): query and format negotiated, declared-required
 * parameters checked, heavy requests held, the answer's cost charged, the payload rendered in the
 * format asked for.
 *
 * @example
 * ```ts
 * registerRouteTable(app, ROUTES, source, 'metrics', limits);
 * ```
 */
export function registerRouteTable<S>(
  app: FastifyInstance,
  routes: readonly TableRoute<S>[],
  source: S,
  right: Right,
  limits: RequestLimits,
  offload?: Offload,
): void {
  for (const r of routes) {
    const decl = tableRouteDecl(r.path);
    if (decl.right !== right)
      throw new XrateError('internal', `the route ${r.path} is declared with the right ${decl.right}, not ${right}`);
    registerDeclared(app, decl, async (req, reply, q, fmt) => {
      if (r.timeseries) limits.holdHeavy(req, reply, q.int('limit', 1, HISTORY_MAX_LIMIT, 100));
      if (r.timeseries && offload) {
        // Answered on a worker thread (heavyPool.ts), the same bytes.
        const path = r.path.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(req.params[name]));
        const done = await offload(path, req.query as Record<string, string>, fmt);
        limits.charge(req, reply, done.cost);
        return reply.header('content-type', done.type).send(done.body);
      }
      const a = r.answer(source, q, req.params);
      limits.charge(req, reply, a.cost);
      const { body, type } = answerBody(a, fmt);
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
    if (!params) continue;
    const q = new Query(query);
    checkRequired(tableRouteDecl(r.path), q);
    return r.answer(source, q, params);
  }
  return undefined;
}
