/**
 * The routes of the EMS gateway (docs/ems.md): `GET /v1/positions` (the gateway's REST API) and
 * the management operations `GET /v1/endpoints`, `GET /v1/locations` and
 * `GET /v1/certificate/pem` (the managed cloud's REST API).
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { registerDeclared } from '../http/declare.js';
import { splitAccount } from '../core/positions/events.js';
import { XrateError } from '../core/errors.js';
import { badParam } from '../http/errors.js';
import { type Query, shown } from '../http/params.js';
import type { PositionSource } from './positions.js';
import { CERTIFICATE_ROUTE, ENDPOINTS_ROUTE, LOCATIONS_ROUTE, POSITIONS_ROUTE } from './api.js';
import { endpointsOf, type Sites } from './sites.js';

/** What the routes answer from. */
export interface EmsData {
  positions: PositionSource;
  /** The locations and endpoints of `--sites` (none given: two empty lists). */
  sites: Sites;
  /** The client certificate PEM of `--client-pem`, if given. */
  clientPem?: string;
}

/** A query parameter naming an exchange or an account (400 when it is not one). */
function accountParam(q: Query, name: string): string | undefined {
  const v = q.str(name);
  if (v === undefined) return undefined;
  const t = v.trim();
  if (t === '') throw badParam(name, 'is empty (give an exchange id such as BINANCE, or an account id such as BINANCE~hedge)');
  const a = splitAccount(t);
  if (typeof a === 'string') throw badParam(name, `${shown(v)} is not an exchange or account id: ${a}`);
  return t;
}

/** A list parameter of exchange or account ids (the interface's array): each one checked as {@link accountParam} does. */
function accountList(q: Query, name: string): string[] | undefined {
  const given = q.list(name);
  if (given === undefined) return undefined;
  if (given.length === 0) throw badParam(name, 'is empty (give exchange ids such as BINANCE, or account ids such as BINANCE~hedge)');
  for (const id of given) {
    const a = splitAccount(id);
    if (typeof a === 'string') throw badParam(name, `${shown(id)} is not an exchange or account id: ${a}`);
  }
  return given;
}

/**
 * Registers the EMS routes on `app` (JSON answers; errors thrown as {@link XrateError} or the
 * positions' 490, answered by the app's error handler).
 *
 * @example
 * ```ts
 * registerEmsRoutes(app, { positions, sites: { locations: [], endpoints: [] } });
 * ```
 */
export function registerEmsRoutes(app: FastifyInstance, data: EmsData): void {
  registerDeclared(app, POSITIONS_ROUTE, async (_req, reply, q) => {
    const exchangeId = accountParam(q, 'exchange_id');
    const at = q.time('time');
    reply.header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify(data.positions.answer(exchangeId, at));
  });
  registerDeclared(app, ENDPOINTS_ROUTE, async (_req, reply, q) => {
    const filter = accountList(q, 'filter_exchange_id');
    reply.header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify(endpointsOf(data.sites, filter));
  });
  registerDeclared(app, LOCATIONS_ROUTE, async (_req, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify(data.sites.locations);
  });
  registerDeclared(app, CERTIFICATE_ROUTE, async (_req, reply) => {
    if (data.clientPem === undefined) {
      throw new XrateError('not_found', 'No client certificate is configured on this gateway (start it with --client-pem FILE)');
    }
    reply.header('content-type', 'text/plain; charset=utf-8');
    return data.clientPem;
  });
}
