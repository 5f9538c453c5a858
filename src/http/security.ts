/**
 * The authentication methods of the description (auth.ts): the security schemes OpenAPI can
 * express, and the words for the one it cannot (the `APIKEY-` path segment), shared by the rate
 * service's description and the EMS gateway's.
 *
 * @module
 */
import type { JsonSchema } from './declare.js';

const PATH_SEGMENT =
  'The key may also travel as an `APIKEY-<key>` path segment at the start, in the middle or at the end of the path ' +
  '(e.g. `/APIKEY-<key>/v1/exchangerate/BTC/USD`; prefix matched ignoring case), removed before the route is resolved: ' +
  'OpenAPI cannot express it as a security scheme.';

/** The schemes of the key methods (`components.securitySchemes`). */
export const KEY_SCHEMES: Readonly<Record<string, JsonSchema>> = {
  ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-CoinAPI-Key', description: `The API key in a header. ${PATH_SEGMENT}` },
  ServiceKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Service-Key', description: 'The API key in the neutral header.' },
  ApiKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'apikey',
    description: 'The API key as a query parameter (name matched ignoring case).',
  },
  AuthorizationKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'The API key alone as the Authorization header.' },
  BasicAuth: { type: 'http', scheme: 'basic', description: 'User `coinapi`, password the API key.' },
  BearerJwt: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A JWT signed with the key registered for the API key (RS256/PS256, ES256 or HS256; `nbf` and `exp` required), ' +
      'sent with the API key by header, query parameter or path segment (never in the Authorization header, which the token occupies). ' +
      'A key with a registered JWT key needs a token on every request.',
  },
};

/** Any one of the methods (a JWT goes with the key in a header or the query). */
export const KEY_REQUIREMENTS: readonly Record<string, readonly string[]>[] = [
  { ApiKeyHeader: [] },
  { ServiceKeyHeader: [] },
  { ApiKeyQuery: [] },
  { AuthorizationKey: [] },
  { BasicAuth: [] },
  { BearerJwt: [], ApiKeyHeader: [] },
  { BearerJwt: [], ServiceKeyHeader: [] },
  { BearerJwt: [], ApiKeyQuery: [] },
];

/** The words of the path-segment method, for a description's text. */
export const PATH_KEY_TEXT = PATH_SEGMENT;
