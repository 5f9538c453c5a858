/**
 * Declarations of the EMS gateway's routes (routes.ts) and what its description says beyond them
 * (src/service/api/ for the declaration form and the generator): the positions of the gateway's
 * REST interface and the management operations of the managed cloud's, with the schemas of the
 * EMS OpenAPI description (`Position`, `MessageReject`) and of its documentation pages
 * (`AccountEndpoint`, `Location`).
 *
 * @module
 */
import { arrayOf, type JsonSchema, queryParam, type RouteDecl, ref } from '../http/declare.js';
import type { DocumentAbout } from '../http/openapi.js';
import { KEY_SCHEMES, PATH_KEY_TEXT } from '../http/security.js';
import { VERSION } from '../version.js';

const ACCOUNT_TEXT =
  'An account id (`BINANCE~hedge`: that account) or an exchange id (`BINANCE`: every account of the exchange); ' +
  'an id the account separator rules refuse is a 400.';

/** `GET /v1/positions`. */
export const POSITIONS_ROUTE: RouteDecl = {
  path: '/v1/positions',
  operationId: 'getOpenPositions',
  tag: 'Positions',
  summary: 'Get open positions',
  description:
    'The open positions of every account, or of those `exchange_id` selects, valued at xrate’s rates of the tick. ' +
    'An exchange asked for (without `exchange_id`: any exchange) that is unreachable at that time: 490.',
  params: [
    queryParam('exchange_id', 'string', `${ACCOUNT_TEXT} Absent: every account.`),
    queryParam(
      'time',
      'time',
      'The positions of the tick at or before this time, at its rates; absent: now (a live engine) or the last tick.',
      {
        extension: true,
      },
    ),
  ],
  ok: { description: 'The positions, accounts sorted, each one’s positions sorted by symbol_id_exchange', schema: ref('Positions') },
  errors: [
    400,
    401,
    { status: 490, description: 'Exchange unreachable: its positions cannot be known', schema: ref('MessageReject') },
    { status: 503, description: 'A replay is writing the database served (its outputs are partial)' },
    { status: 550, description: 'No data: a time the database does not cover' },
  ],
};

/** `GET /v1/endpoints`. */
export const ENDPOINTS_ROUTE: RouteDecl = {
  path: '/v1/endpoints',
  operationId: 'getApiEndpoints',
  tag: 'Management',
  summary: 'Get API endpoints',
  description: 'The EMS API endpoints of the server sites (`--sites`), in the file’s order.',
  params: [
    queryParam(
      'filter_exchange_id',
      'list',
      `${ACCOUNT_TEXT} An array: the parameter repeated, or its values separated by commas; an endpoint is listed when it matches any. Absent: every endpoint.`,
    ),
  ],
  ok: { description: 'The endpoints', schema: arrayOf(ref('AccountEndpoint')) },
  errors: [400, 401],
};

/** `GET /v1/locations`. */
export const LOCATIONS_ROUTE: RouteDecl = {
  path: '/v1/locations',
  operationId: 'getSiteLocations',
  tag: 'Management',
  summary: 'Get site locations',
  description: 'The server site locations (`--sites`).',
  ok: { description: 'The locations', schema: arrayOf(ref('Location')) },
  errors: [401],
};

/** `GET /v1/certificate/pem`. */
export const CERTIFICATE_ROUTE: RouteDecl = {
  path: '/v1/certificate/pem',
  operationId: 'getAuthenticationCertificate',
  tag: 'Management',
  summary: 'Get authentication certificate',
  description: 'The client certificate PEM (`--client-pem`) a client presents to a managed gateway.',
  ok: { description: 'The PEM file', media: 'text/plain', schema: { type: 'string' } },
  errors: [401, { status: 404, description: 'No client certificate is configured on this gateway' }],
};

function str(description: string): JsonSchema {
  return { type: 'string', description };
}
function num(description: string): JsonSchema {
  return { type: 'number', description };
}
function record(description: string, properties: Record<string, JsonSchema>, optional: readonly string[] = []): JsonSchema {
  const required = Object.keys(properties).filter((k) => !optional.includes(k));
  return { type: 'object', description, properties, required, additionalProperties: false };
}

/** The schemas of the gateway's answers. */
const EMS_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  Positions: arrayOf(ref('Position')),
  Position: record('The open positions of one account', {
    exchange_id: str('Account id, as in the log'),
    data: arrayOf(ref('PositionData')),
  }),
  PositionData: record(
    'One open position (from the latest snapshot)',
    {
      symbol_id_exchange: str('The exchange’s symbol'),
      symbol_id_coinapi: str('The position’s symbol_id, when it has one'),
      avg_entry_price: num('Average entry price'),
      quantity: num('Position size'),
      side: { type: 'string', enum: ['BUY', 'SELL'] },
      unrealized_pnl: num('Unrealized profit and loss at the tick’s rate; absent when there is no rate'),
      leverage: num('Leverage'),
      cross_margin: { type: 'boolean', description: 'Cross-margin mode' },
      liquidation_price: num('Liquidation price'),
      raw_data: { description: 'What the exchange gave on the position, as in the log' },
    },
    ['symbol_id_coinapi', 'unrealized_pnl', 'leverage', 'cross_margin', 'liquidation_price', 'raw_data'],
  ),
  MessageReject: record(
    'Why the request was refused',
    {
      type: { type: 'string', const: 'MESSAGE_REJECT' },
      reject_reason: {
        type: 'string',
        enum: [
          'OTHER',
          'EXCHANGE_UNREACHABLE',
          'EXCHANGE_RESPONSE_TIMEOUT',
          'ORDER_ID_NOT_FOUND',
          'INVALID_TYPE',
          'METHOD_NOT_SUPPORTED',
          'JSON_ERROR',
        ],
      },
      exchange_id: str('The exchange, when the reject concerns one'),
      message: str('Message text'),
      rejected_message: str('The rejected request, if available'),
    },
    ['exchange_id', 'rejected_message'],
  ),
  AccountEndpoint: record('An API endpoint of an account at a server site', {
    exchange_id: str('Exchange or account id'),
    location_id: str('Server site'),
    endpoint_schema: str('URL scheme'),
    endpoint_host: str('Host'),
    endpoint_url: str('Full URL'),
  }),
  Location: record('A server site location', {
    location_id: str('Location identifier'),
    region_name: str('Region of the location provider'),
    provider_name: str('Location provider'),
  }),
};

/** How a gateway authenticates, for its description. */
export interface EmsAuth {
  managed: boolean;
  /** Client certificates of a CA are trusted (managed, HTTPS). */
  clientCertificates: boolean;
}

/**
 * What the gateway's description says beyond its routes: self-hosted, no security; managed, an API
 * key in a header or the query (the rate service's other methods work too), or a TLS client
 * certificate when the gateway trusts a client CA.
 */
export function emsAbout(auth: EmsAuth): DocumentAbout {
  const { ApiKeyHeader, ServiceKeyHeader, ApiKeyQuery } = KEY_SCHEMES;
  const schemes: Record<string, JsonSchema> = { ApiKeyHeader, ServiceKeyHeader, ApiKeyQuery };
  const security: Record<string, string[]>[] = [{ ApiKeyHeader: [] }, { ServiceKeyHeader: [] }, { ApiKeyQuery: [] }];
  if (auth.clientCertificates) {
    schemes.MutualTls = {
      type: 'mutualTLS',
      description: 'A TLS client certificate signed by the gateway’s client CA (the one of /v1/certificate/pem).',
    };
    security.push({ MutualTls: [] });
  }
  const how = auth.managed
    ? `Managed: every route with security needs an API key by one of the schemes (the other methods of the rate service work too: Authorization, Basic, a JWT with the key) or a trusted TLS client certificate. ${PATH_KEY_TEXT} Refused: 401.`
    : 'Self-hosted: no authentication (access is controlled by where the gateway listens).';
  return {
    title: 'xrate EMS gateway',
    version: VERSION,
    description: [
      'The positions of the EMS gateway’s REST interface, valued at xrate’s own rates, and the management operations of the managed cloud’s, ' +
        'as this gateway answers them: generated from its routes. Extensions are marked `x-xrate-extension`.',
      '',
      `- **Authentication.** ${how}`,
      '- **Errors.** Every answer other than 200 is JSON `{"message": "..."}`, but the 490 of the positions (a MessageReject).',
      '- Parameter names are matched ignoring case; every route also answers HEAD.',
    ].join('\n'),
    schemas: EMS_SCHEMAS,
    securitySchemes: schemes,
    security,
    keyed: (r) => auth.managed && r.open !== true,
  };
}
