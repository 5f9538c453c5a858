/**
 * Route declarations: one {@link RouteDecl} per route (path, summary, the key right it needs, its
 * parameters with their types, bounds, defaults and enums, its result schema, its errors), read
 * by the handler's registration ({@link registerDeclared}) and by the OpenAPI generator
 * (openapi.ts), so the description served at `/openapi.json` is that of the routes registered.
 *
 * - {@link registerDeclared} registers a GET route from its declaration: the query read, the output
 *   format negotiated when the route has formats, and every declared-required query parameter that
 *   is absent (or empty) answered 400 naming it, before the handler runs.
 * - {@link describeRoutes} collects the declarations of every route registered on an app (a route
 *   without one stops the app at registration) and serves them as `GET /openapi.json`.
 *
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { missingOneOf, missingParam } from './errors.js';
import { CONTENT_TYPES, negotiate, type OutputFormat } from './format/index.js';
import type { Right } from './rights.js';
import { Query } from './params.js';
import { XrateError } from '../core/errors.js';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1). */
export type JsonSchema = { readonly [k: string]: unknown };

/**
 * How a parameter's value is read: a string, an integer, a boolean (true/false/1/0), an ISO 8601
 * time, or a list of strings (the parameter repeated, each value `,`- or `;`-separated).
 */
export type ParamType = 'string' | 'integer' | 'boolean' | 'time' | 'list';

/** One parameter of a route. */
export interface ParamDecl {
  readonly name: string;
  readonly in: 'path' | 'query';
  readonly type: ParamType;
  readonly description: string;
  /** Path parameters always are. */
  readonly required?: boolean;
  readonly enum?: readonly string[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: string | number | boolean;
  /** The detail of the 400 when a required query parameter is absent (default: its enum's values). */
  readonly missing?: string;
  /**
   * The name of a group of query parameters at least one of which must be given (none: a 400
   * naming them all, checked where the group's last member is declared).
   */
  readonly oneOf?: string;
  /** Not part of the interface: an xrate extension. */
  readonly extension?: boolean;
}

/** An error answer of a route: its status, and a description and schema other than the default ones. */
export interface ErrorDecl {
  readonly status: number;
  readonly description?: string;
  readonly schema?: JsonSchema;
}

/** A GET route, as registered and as described. */
export interface RouteDecl {
  /** fastify's syntax (`:name` for a path parameter). */
  readonly path: string;
  readonly operationId: string;
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  /** The rate service: the right a key needs (none: no key). */
  readonly right?: Right;
  /** No key, whatever the server's authentication (operations, the chart page, this description). */
  readonly open?: boolean;
  /** Not part of the interface: an xrate extension. */
  readonly extension?: boolean;
  readonly params?: readonly ParamDecl[];
  /** The answer is rendered in the format asked for (`output_format`, `csv_*`, MessagePack by `Accept`). */
  readonly formats?: boolean;
  /** The 200 answer: its media type (default JSON) and schema. */
  readonly ok: { readonly description: string; readonly media?: string; readonly schema: JsonSchema };
  /** The error answers (a status alone: the common description and `{message}` body). */
  readonly errors: readonly (number | ErrorDecl)[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The right a key needs (the rate service's routes that need one). */
    right?: Right;
    /** The route's declaration (set by {@link registerDeclared}). */
    api?: RouteDecl;
  }
}

/**
 * A path parameter.
 *
 * @example
 * ```ts
 * pathParam('exchange_id', 'Exchange identifier, e.g. BINANCE');
 * ```
 */
export function pathParam(name: string, description: string): ParamDecl {
  return { name, in: 'path', type: 'string', required: true, description };
}

/**
 * A query parameter.
 *
 * @example
 * ```ts
 * queryParam('limit', 'integer', 'Items at most', { minimum: 1, maximum: 100000, default: 100 });
 * ```
 */
export function queryParam(name: string, type: ParamType, description: string, more: Partial<ParamDecl> = {}): ParamDecl {
  return { name, in: 'query', type, description, ...more };
}

/** A schema of `components.schemas`, by name. */
export function ref(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

/** An array of `items`. */
export function arrayOf(items: JsonSchema): JsonSchema {
  return { type: 'array', items };
}

/** A handler of a declared route: the request's query read and its format negotiated. */
export type DeclaredHandler<P> = (
  req: FastifyRequest<{ Params: P }>,
  reply: FastifyReply,
  q: Query,
  fmt: OutputFormat,
) => FastifyReply | Promise<FastifyReply | string | Buffer> | string | Buffer;

const JSON_FORMAT: OutputFormat = { kind: 'json' };
const NO_QUERY = new Query(undefined);

/**
 * Registers the GET route of `decl`: reads the query (only when the route declares query
 * parameters or formats), negotiates the format (routes with formats), answers 400 for the first
 * declared requirement the query does not meet ({@link checkRequired}), then runs `handler`.
 *
 * @example
 * ```ts
 * registerDeclared(app, PERIODS_ROUTE, (req, reply, q, fmt) => reply.send(PERIODS_JSON));
 * ```
 */
export function registerDeclared<P = Record<string, string>>(app: FastifyInstance, decl: RouteDecl, handler: DeclaredHandler<P>): void {
  const reads = decl.formats === true || (decl.params ?? []).some((p) => p.in === 'query');
  const lists = new Set((decl.params ?? []).filter((p) => p.type === 'list').map((p) => p.name));
  app.get<{ Params: P }>(decl.path, { config: { right: decl.right, api: decl } }, (req, reply) => {
    if (!reads) return handler(req, reply, NO_QUERY, JSON_FORMAT);
    const q = new Query(req.query, lists.size > 0 ? lists : undefined);
    const fmt = decl.formats ? negotiate(q, req.headers.accept) : JSON_FORMAT;
    checkRequired(decl, q);
    return handler(req, reply, q, fmt);
  });
}

/** One check of {@link checkRequired}: a required parameter, or a group of which one is required. */
type Requirement = { readonly name: string; readonly detail?: string } | { readonly oneOf: readonly string[] };

const REQUIREMENTS = new WeakMap<RouteDecl, readonly Requirement[]>();

/** The requirements of a route's query, in the order of its declared parameters. */
function requirements(decl: RouteDecl): readonly Requirement[] {
  let out = REQUIREMENTS.get(decl);
  if (out !== undefined) return out;
  const query = (decl.params ?? []).filter((p) => p.in === 'query');
  const list: Requirement[] = [];
  query.forEach((p, i) => {
    if (p.required) list.push({ name: p.name, detail: p.missing ?? p.enum?.join(', ') });
    if (p.oneOf !== undefined && !query.slice(i + 1).some((o) => o.oneOf === p.oneOf))
      list.push({ oneOf: query.filter((o) => o.oneOf === p.oneOf).map((o) => o.name) });
  });
  out = list;
  REQUIREMENTS.set(decl, out);
  return out;
}

/**
 * Throws the 400 of the first requirement of `decl` that `q` does not meet, in the order of the
 * declared parameters: a required query parameter absent or empty (`Missing required parameter
 * 'name'`), or a group none of whose parameters is given (`Missing required parameter: one of 'a'
 * or 'b' must be given`). {@link registerDeclared} runs it before every handler; the answers given
 * without HTTP (the CLI's route tables) run it too.
 */
export function checkRequired(decl: RouteDecl, q: Query): void {
  for (const r of requirements(decl)) {
    if ('oneOf' in r) {
      if (r.oneOf.every((n) => q.text(n) === undefined)) throw missingOneOf(r.oneOf);
    } else if (q.text(r.name) === undefined) throw missingParam(r.name, r.detail);
  }
}

/** The declaration of `GET /openapi.json`. */
const DESCRIPTION_ROUTE: RouteDecl = {
  path: '/openapi.json',
  operationId: 'getOpenApiDescription',
  tag: 'Description',
  summary: 'This description',
  description: 'The OpenAPI 3.1 description of every route this server answers, generated from the routes as registered. No key.',
  open: true,
  extension: true,
  ok: { description: 'The OpenAPI document', schema: { type: 'object', required: ['openapi', 'info', 'paths'] } },
  errors: [],
};

/**
 * Collects the declaration of every route registered on `app` from now on (call it before
 * registering any route: a route registered without a declaration throws), and registers
 * `GET /openapi.json`, answering `describe(routes)` (made at its first request, once every route
 * is registered). fastify's HEAD twin of each GET is not listed.
 *
 * @example
 * ```ts
 * describeRoutes(app, (routes) => openApiDocument(routes, about));
 * ```
 */
export function describeRoutes(app: FastifyInstance, describe: (routes: readonly RouteDecl[]) => object): void {
  const routes: RouteDecl[] = [];
  app.addHook('onRoute', (r) => {
    if (r.method === 'HEAD') return;
    const api = r.config?.api;
    if (r.method !== 'GET' || api === undefined || api.path !== r.url)
      throw new XrateError('internal', `the route ${String(r.method)} ${r.url} has no declaration (src/service/api/declare.ts)`);
    routes.push(api);
  });
  let body: string | undefined;
  registerDeclared(app, DESCRIPTION_ROUTE, (_req, reply) => {
    body ??= JSON.stringify(describe(routes));
    return reply.header('content-type', CONTENT_TYPES.json).send(body);
  });
}
