/**
 * Helpers of the tests of the served OpenAPI descriptions (openapi.test.ts, openapiClient.test.ts):
 * the operations of a document, sample parameter values, and response validation against an
 * operation's schemas with ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1).
 */
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { replay } from '../../src/replay/replay.js';
import { ROOT } from './helpers.js';

/** An OpenAPI document, as far as the tests read it. */
export interface Doc {
  openapi: string;
  info: { title: string; description: string };
  paths: Record<string, { get: Operation }>;
  components: {
    schemas: Record<string, unknown>;
    securitySchemes?: Record<string, { type: string; in?: string; name?: string; scheme?: string }>;
  };
}

/** An operation of a document. */
export interface Operation {
  operationId: string;
  parameters?: ({ name: string; in: string; required: boolean; schema: Record<string, unknown> } | { $ref: string })[];
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
  security: Record<string, string[]>[];
  'x-xrate-right'?: string;
}

/** Every operation of `doc`, with its path. */
export function operations(doc: Doc): { path: string; op: Operation }[] {
  return Object.entries(doc.paths).map(([path, item]) => ({ path, op: item.get }));
}

/** The declared (not shared) parameters of an operation. */
export function ownParams(op: Operation): { name: string; in: string; required: boolean; schema: Record<string, unknown> }[] {
  return (op.parameters ?? []).filter((p): p is Exclude<typeof p, { $ref: string }> => !('$ref' in p));
}

/** Values of the parameters, by name, that the demo database answers (own metrics included). */
export const SAMPLE: Record<string, string> = {
  asset_id_base: 'BTC',
  asset_id_quote: 'USD',
  period_id: '1MIN',
  time_start: '2024-03-01T05:00:00Z',
  time_end: '2024-03-01T05:05:00Z',
  metric_id: 'XRATE_EXCHANGE_RANK',
  exchange_id: 'BINANCE',
  symbol_id: 'BINANCE_SPOT_BTC_USDT',
  asset_id: 'BTC',
  groupby: 'exchange_id',
  limit: '5',
};

/** `path` with its `{name}` parameters replaced by `values` (else the samples). */
export function fillPath(path: string, values: Record<string, string> = {}): string {
  return path.replace(/\{([a-z_]+)\}/g, (_m, n: string) => encodeURIComponent(values[n] ?? SAMPLE[n]));
}

/** Replays the bundled demo log with xrate's own metrics into `dir/demo.sqlite` (a few seconds). */
export async function demoDbWithMetrics(dir: string): Promise<string> {
  const db = join(dir, 'demo.sqlite');
  await replay({ inputs: [join(ROOT, 'fixtures', 'demo', 'demo.ndjson.gz')], db, ownMetrics: true });
  return db;
}

/** Replays the EMS worked example (docs/ems.md) into `dir/ems.sqlite`: KRAKEN is unreachable at its end. */
export async function emsDb(dir: string): Promise<string> {
  const db = join(dir, 'ems.sqlite');
  await replay({ inputs: [join(ROOT, 'fixtures', 'ems', 'positions.ndjson')], db });
  return db;
}

/** The sites of the EMS tests. */
export const SITES = {
  locations: [{ location_id: 'aws-eu-central-1', region_name: 'eu-central-1', provider_name: 'aws' }],
  endpoints: [
    {
      exchange_id: 'BINANCE~hedge',
      location_id: 'aws-eu-central-1',
      endpoint_schema: 'https',
      endpoint_host: 'ems.example.com',
      endpoint_url: 'https://ems.example.com/',
    },
  ],
};

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * A validator of the answers of `doc`'s operations: `check(path, status, media, body)` throws with
 * ajv's errors when `body` does not match the schema of that response.
 */
export function answerChecker(doc: Doc): (path: string, status: number, media: string, body: unknown) => void {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const f of ['double', 'float', 'int32', 'int64']) ajv.addFormat(f, true);
  ajv.addSchema({ $id: 'doc.json', components: doc.components });
  const compiled = new Map<string, ValidateFunction>();
  return (path, status, media, body) => {
    const id = `${path} ${status} ${media}`;
    let v = compiled.get(id);
    if (!v) {
      const schema = doc.paths[path]?.get.responses[status]?.content?.[media]?.schema;
      if (schema === undefined) throw new Error(`no schema for ${id}`);
      v = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc.json#/components/')) as object);
      compiled.set(id, v);
    }
    if (!v(body)) throw new Error(`${id}: ${ajv.errorsText(v.errors?.slice(0, 6))}\n${JSON.stringify(body).slice(0, 600)}`);
  };
}
