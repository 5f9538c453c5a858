/**
 * The OpenAPI 3.1 document of a server's routes, generated from their declarations (declare.ts):
 * one GET operation per route, its parameters (the output-format ones shared as
 * `components.parameters`), its 200 answer in each format it renders, its errors with their bodies,
 * the security requirements of the routes that need a key, and the schemas the answers refer to
 * (only those, with the ones they refer to in turn).
 *
 * @module
 */
import { DEFAULT_TIME_FORMAT } from './format/index.js';
import type { ErrorDecl, JsonSchema, ParamDecl, RouteDecl } from './declare.js';
import { XrateError } from '../core/errors.js';

/** What a document says beyond its routes. */
export interface DocumentAbout {
  readonly title: string;
  readonly version: string;
  readonly description: string;
  /** The schemas answers may refer to (`#/components/schemas/NAME`). */
  readonly schemas: Readonly<Record<string, JsonSchema>>;
  readonly securitySchemes: Readonly<Record<string, JsonSchema>>;
  /** The security requirements of a route that needs a key (one of them is enough). */
  readonly security: readonly Readonly<Record<string, readonly string[]>>[];
  /** Whether a route needs a key on this server. */
  keyed(route: RouteDecl): boolean;
  /** Whether a keyed route's answers carry the request-limit headers (the rate service's). */
  readonly limitHeaders?: boolean;
  /** Errors every keyed route may answer, besides its own. */
  readonly keyedErrors?: readonly ErrorDecl[];
}

/** The common description of each error status. */
const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad request: a parameter is missing or invalid (the message names it), or the request is malformed',
  401: 'Unauthorized: no API key, an unknown or revoked key, two different keys, or a missing or invalid JWT',
  403: 'Forbidden: the key has no right to this route',
  404: 'Not found',
  429: 'Too many requests: past the key’s 24-hour request limit (without overage), its concurrency limit, or its heavy requests in flight',
  490: 'Exchange unreachable: the positions asked for cannot be known (MessageReject)',
  503: 'Unavailable',
  550: 'No data: the item requested is not available (unknown asset, no rate at that time, no stored history)',
};

/** The body of every error but the positions' 490. */
const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'The body of every answer other than 200 (the positions’ 490 aside): one string field',
  properties: { message: { type: 'string', minLength: 1 } },
  required: ['message'],
  additionalProperties: false,
};

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** The output-format parameters of the routes with formats (`components.parameters`). */
const FORMAT_PARAMS: Readonly<Record<string, JsonSchema>> = {
  output_format: formatParam('output_format', 'Format of the answer (MessagePack: `Accept: application/x-msgpack`).', {
    type: 'string',
    enum: ['json', 'xml', 'csv'],
    default: 'json',
  }),
  csv_include_header: formatParam('csv_include_header', 'CSV: a header line with the field names.', { type: 'boolean', default: true }),
  csv_include_quotes: formatParam('csv_include_quotes', 'CSV: wrap every string in double quotes.', { type: 'boolean', default: false }),
  csv_exclude_col: formatParam('csv_exclude_col', 'CSV: comma-separated names of the columns to leave out.', { type: 'string' }),
  csv_set_delimiter: formatParam('csv_set_delimiter', 'CSV: column delimiter (1 to 4 characters; `tab` or `\\t` for a tab).', {
    type: 'string',
    default: ';',
  }),
  csv_set_dec_mark: formatParam('csv_set_dec_mark', 'CSV: decimal mark of numbers.', { type: 'string', default: '.' }),
  csv_set_timeformat: formatParam('csv_set_timeformat', 'CSV: time format (.NET-style custom format), or `unix`.', {
    type: 'string',
    default: DEFAULT_TIME_FORMAT,
  }),
  csv_set_newline: formatParam('csv_set_newline', 'CSV: line ending.', { type: 'string', enum: ['win', 'mac', 'unix'], default: 'unix' }),
};

function formatParam(name: string, description: string, schema: JsonSchema): JsonSchema {
  return { name, in: 'query', required: false, description, schema };
}

/** The response headers of a keyed route's answers (`components.headers`). */
const LIMIT_HEADERS: Readonly<Record<string, JsonSchema>> = {
  'X-RateLimit-Used': header('Cost of the requests of the key in the last 24 hours, this one included', 'integer'),
  'X-RateLimit-Limit': header('Requests allocated to the key per 24 hours', 'integer'),
  'X-RateLimit-Remaining': header('Requests left now (negative with overage)', 'integer'),
  'X-RateLimit-Request-Cost': header('Cost of this request (0 when nothing was charged)', 'integer'),
  'X-RateLimit-Reset': header('When the whole limit is available again if no more requests are made', 'string'),
  'X-RateLimit-Overage': { description: 'Overage mode of the key', schema: { type: 'string', enum: ['ENABLED', 'DISABLED'] } },
  'X-ConcurrencyLimit-Limit': header('Requests the key may have in flight at once', 'integer'),
  'X-ConcurrencyLimit-Remaining': header('Requests the key may still start now', 'integer'),
  'Retry-After': header('Seconds to wait before retrying', 'integer'),
};

function header(description: string, type: string): JsonSchema {
  return { description, schema: { type } };
}

function headerRefs(names: readonly string[]): Record<string, JsonSchema> {
  return Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
}

const OK_HEADERS = Object.keys(LIMIT_HEADERS).filter((h) => h !== 'Retry-After');

/** `/v1/x/:a/:b` → `/v1/x/{a}/{b}`. */
function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The parameter object of a declaration (`group`: the members of its one-of group, if any). */
function parameter(p: ParamDecl, group: readonly string[]): JsonSchema {
  const schema: Record<string, unknown> =
    p.type === 'list' ? { type: 'array', items: { type: 'string' } } : { type: p.type === 'time' ? 'string' : p.type };
  if (p.type === 'time') schema.examples = ['2024-03-01T05:00:00Z', '2024-03-01T05:00:00.1234567Z', '2024-03-01'];
  if (p.enum) schema.enum = [...p.enum];
  if (p.minimum !== undefined) schema.minimum = p.minimum;
  if (p.maximum !== undefined) schema.maximum = p.maximum;
  if (p.default !== undefined) schema.default = p.default;
  const out: Record<string, unknown> = { name: p.name, in: p.in, required: p.in === 'path' || p.required === true };
  let description =
    p.type === 'time' ? `${p.description} ISO 8601 (0 to 7 fractional digits, an offset or none = UTC, or a date).` : p.description;
  if (group.length > 1) description += ` At least one of ${group.map((n) => `\`${n}\``).join(', ')} is required.`;
  out.description = description;
  out.schema = schema;
  // A list: the parameter repeated (form style, exploded); a value may also be a `,`/`;`-separated list.
  if (p.type === 'list') Object.assign(out, { style: 'form', explode: true });
  if (p.extension) out['x-xrate-extension'] = true;
  return out;
}

/** The one-of groups of a route's parameters: their members, by group name. */
function oneOfGroups(r: RouteDecl): Record<string, string[]> {
  const groups: Record<string, string[]> = {};
  for (const p of r.params ?? []) {
    if (p.oneOf === undefined) continue;
    groups[p.oneOf] ??= [];
    groups[p.oneOf].push(p.name);
  }
  return groups;
}

/** The operation object of a route. */
function operation(r: RouteDecl, about: DocumentAbout): JsonSchema {
  const keyed = about.keyed(r);
  const limits = keyed && about.limitHeaders === true;
  const okSchema = r.ok.schema;
  const content: Record<string, unknown> = { [r.ok.media ?? 'application/json']: { schema: okSchema } };
  if (r.formats) {
    content['application/xml'] = { schema: { type: 'string', description: 'XML of the same items' } };
    content['text/csv'] = { schema: { type: 'string', description: 'CSV: one row per item, the JSON field names as the header' } };
    content['application/x-msgpack'] = { schema: okSchema };
  }
  const responses: Record<string, unknown> = {
    200: { description: r.ok.description, ...(limits && { headers: headerRefs(OK_HEADERS) }), content },
  };
  for (const e of [...r.errors, ...(keyed ? (about.keyedErrors ?? []) : [])]) {
    const d = typeof e === 'number' ? { status: e } : e;
    if (d.status === 401 && !keyed) continue;
    const headers = limits
      ? headerRefs(d.status === 429 ? ['X-RateLimit-Request-Cost', 'Retry-After'] : ['X-RateLimit-Request-Cost'])
      : undefined;
    responses[d.status] = {
      description: d.description ?? STATUS_TEXT[d.status] ?? `Status ${d.status}`,
      ...(headers && { headers }),
      content: { 'application/json': { schema: d.schema ?? ERROR_REF } },
    };
  }
  const groups = oneOfGroups(r);
  const params = (r.params ?? []).map((p) => parameter(p, p.oneOf === undefined ? [] : groups[p.oneOf]));
  if (r.formats) params.push(...Object.keys(FORMAT_PARAMS).map((n) => ({ $ref: `#/components/parameters/${n}` })));
  const op: Record<string, unknown> = { operationId: r.operationId, tags: [r.tag], summary: r.summary };
  if (r.description) op.description = r.description;
  if (params.length > 0) op.parameters = params;
  op.responses = responses;
  op.security = keyed ? about.security : [];
  if (Object.keys(groups).length > 0) op['x-xrate-required-one-of'] = Object.values(groups);
  if (r.right) op['x-xrate-right'] = r.right;
  if (r.extension) op['x-xrate-extension'] = true;
  return op;
}

/** The names of the schemas `value` refers to, directly. */
function refsIn(value: unknown, out: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) refsIn(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) out.add(v.slice(21));
      else refsIn(v, out);
    }
  }
}

/** The schemas `paths` refer to, and those they refer to in turn, in `about.schemas`' order. */
function usedSchemas(paths: unknown, schemas: Readonly<Record<string, JsonSchema>>): Record<string, JsonSchema> {
  const used = new Set<string>();
  refsIn(paths, used);
  for (const name of used) {
    const s = schemas[name];
    if (s === undefined) throw new XrateError('internal', `the schema ${name} is referred to but not defined`);
    refsIn(s, used);
  }
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
}

/**
 * The OpenAPI 3.1 document of `routes` (GET operations, in the order given).
 *
 * @example
 * ```ts
 * const doc = openApiDocument(routes, about);
 * doc.paths['/v1/exchangerate/{asset_id_base}'].get.operationId; // 'getAllCurrentRates'
 * ```
 */
export function openApiDocument(routes: readonly RouteDecl[], about: DocumentAbout): Record<string, unknown> {
  const paths: Record<string, { get: JsonSchema }> = {};
  const tags: string[] = [];
  for (const r of routes) {
    const path = openApiPath(r.path);
    if (paths[path] !== undefined) throw new XrateError('internal', `the route ${path} is declared twice`);
    paths[path] = { get: operation(r, about) };
    if (!tags.includes(r.tag)) tags.push(r.tag);
  }
  const formats = routes.some((r) => r.formats);
  const keyed = routes.some((r) => about.keyed(r));
  const components: Record<string, unknown> = { schemas: usedSchemas(paths, { ...about.schemas, Error: ERROR_SCHEMA }) };
  if (formats) components.parameters = FORMAT_PARAMS;
  if (keyed && about.limitHeaders) components.headers = LIMIT_HEADERS;
  if (keyed) components.securitySchemes = about.securitySchemes;
  return {
    openapi: '3.1.0',
    info: { title: about.title, version: about.version, description: about.description, license: { name: 'MIT', identifier: 'MIT' } },
    tags: tags.map((name) => ({ name })),
    paths,
    components,
  };
}
