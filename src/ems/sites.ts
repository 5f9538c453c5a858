/**
 * The management data of the EMS gateway (docs/ems.md): the server site locations and the API
 * endpoints of a subscription, read from the `--sites FILE.json` given at start and answered by
 * `GET /v1/locations` and `GET /v1/endpoints`.
 *
 * The file is one object: `{"locations": [Location...], "endpoints": [AccountEndpoint...]}`, with
 * the interface's field names. Every endpoint names a location of the list, and an exchange or
 * account id (docs/methodology.md section 11 for the separator rules).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { accountMatches } from '../core/positions/book.js';
import { splitAccount } from '../core/positions/events.js';
import { XrateError } from '../core/errors.js';

/**
 * A server site location (the interface's field order).
 *
 * @example
 * ```ts
 * const l: Location = { location_id: 'aws-eu-central-1', region_name: 'eu-central-1', provider_name: 'aws' };
 * ```
 */
export interface Location {
  location_id: string;
  region_name: string;
  provider_name: string;
}

/**
 * An API endpoint of an account at a location (the interface's AccountEndpoint, field order).
 *
 * @example
 * ```ts
 * const e: AccountEndpoint = { exchange_id: 'BINANCE~hedge', location_id: 'aws-eu-central-1', endpoint_schema: 'https',
 *   endpoint_host: 'ems.example.com', endpoint_url: 'https://ems.example.com/' };
 * ```
 */
export interface AccountEndpoint {
  exchange_id: string;
  location_id: string;
  endpoint_schema: string;
  endpoint_host: string;
  endpoint_url: string;
}

/** The sites of a subscription. */
export interface Sites {
  locations: Location[];
  endpoints: AccountEndpoint[];
}

const LOCATION_FIELDS = ['location_id', 'region_name', 'provider_name'] as const;
const ENDPOINT_FIELDS = ['exchange_id', 'location_id', 'endpoint_schema', 'endpoint_host', 'endpoint_url'] as const;

function fields<const F extends readonly string[]>(item: unknown, names: F, where: string): { [K in F[number]]: string } {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new Error(`${where} must be an object`);
  const rec = item as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const n of names) {
    const v = rec[n];
    if (typeof v !== 'string' || v.trim() === '') throw new Error(`${where}: "${n}" must be a non-empty string`);
    out[n] = v.trim();
  }
  const extra = Object.keys(rec).filter((k) => !names.includes(k));
  if (extra.length > 0) throw new Error(`${where}: unknown field${extra.length > 1 ? 's' : ''} ${extra.map((k) => `"${k}"`).join(', ')}`);
  return out as { [K in F[number]]: string };
}

/**
 * Checks the parsed contents of a sites file: both lists present, every item with its fields as
 * non-empty strings and no others, location ids unique, every endpoint's location listed and its
 * exchange_id a valid exchange or account id.
 *
 * @throws Error naming the first item at fault
 *
 * @example
 * ```ts
 * parseSites({ locations: [], endpoints: [] }); // { locations: [], endpoints: [] }
 * ```
 */
export function parseSites(json: unknown): Sites {
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new Error('the file must hold one JSON object {"locations": [...], "endpoints": [...]}');
  const j = json as Record<string, unknown>;
  for (const k of ['locations', 'endpoints']) if (!Array.isArray(j[k])) throw new Error(`"${k}" must be an array`);
  const locations = (j.locations as unknown[]).map((l, i) => fields(l, LOCATION_FIELDS, `locations[${i}]`));
  const ids = new Set<string>();
  for (const [i, l] of locations.entries()) {
    if (ids.has(l.location_id)) throw new Error(`locations[${i}]: location_id "${l.location_id}" is listed twice`);
    ids.add(l.location_id);
  }
  const endpoints = (j.endpoints as unknown[]).map((e, i) => {
    const ep = fields(e, ENDPOINT_FIELDS, `endpoints[${i}]`);
    const a = splitAccount(ep.exchange_id);
    if (typeof a === 'string') throw new Error(`endpoints[${i}]: exchange_id "${ep.exchange_id}" is not an exchange or account id: ${a}`);
    if (!ids.has(ep.location_id)) throw new Error(`endpoints[${i}]: location_id "${ep.location_id}" is not in "locations"`);
    return ep;
  });
  return { locations, endpoints };
}

/**
 * Reads a sites file ({@link parseSites}).
 *
 * @throws XrateError naming the file and what is wrong
 *
 * @example
 * ```ts
 * const sites = loadSites('sites.json');
 * ```
 */
export function loadSites(path: string): Sites {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new XrateError('input', `cannot read the sites file "${path}": ${(e as Error).message}`);
  }
  try {
    return parseSites(JSON.parse(text) as unknown);
  } catch (e) {
    throw new XrateError('input', `the sites file "${path}" is not valid: ${(e as Error).message}`);
  }
}

/**
 * The endpoints `filter` selects: those of each account it names, or of every account of a bare
 * exchange id (all without a filter), in the file's order.
 *
 * @example
 * ```ts
 * endpointsOf(sites, ['BINANCE', 'KRAKEN~main']); // BINANCE's, BINANCE~hedge's, ... and KRAKEN~main's endpoints
 * ```
 */
export function endpointsOf(sites: Sites, filter: readonly string[] | undefined): AccountEndpoint[] {
  return filter === undefined ? sites.endpoints : sites.endpoints.filter((e) => filter.some((f) => accountMatches(e.exchange_id, f)));
}
