/**
 * What the rate service's description says beyond its routes: title, the text of its rules, its
 * schemas and its authentication.
 *
 * @module
 */
import { VERSION } from '../../version.js';
import type { DocumentAbout } from '../../http/openapi.js';
import { SERVICE_SCHEMAS } from './schemas.js';
import { KEY_REQUIREMENTS, KEY_SCHEMES, PATH_KEY_TEXT } from '../../http/security.js';

const DESCRIPTION = [
  'The exchange-rate, metrics and symbols endpoints of the market-data REST interface, and xrate’s extensions ' +
    '(marked `x-xrate-extension`), as this server answers them: generated from its routes.',
  '',
  `- **Keys.** Every route with security needs an API key, by any one of the schemes; \`x-xrate-right\` names the right the key needs (403 without it). ${PATH_KEY_TEXT}`,
  '- **Errors.** Every answer other than 200 is JSON `{"message": "..."}`; a 400 names the parameter at fault.',
  '- **Limits.** A request costs 1; with `limit`, one per 100 items returned (at least 1). Past the key’s 24-hour limit ' +
    '(without overage) or its concurrency limit: 429. The limit headers come with every answer to a key.',
  '- **Formats.** JSON by default; `output_format=xml|csv` with the `csv_*` options, or MessagePack when `Accept` asks for ' +
    '`application/x-msgpack` first; gzip or deflate by `Accept-Encoding`. Times are UTC with 7 fractional digits; rates are JSON numbers.',
  '- **Parameters.** Names and enumerated values are matched ignoring case; booleans are true, false, 1 or 0; ' +
    'a parameter given twice with different values is a 400; unknown parameters are ignored.',
  '- Every route also answers HEAD.',
].join('\n');

/** The rate service's description (see the module description). */
export const SERVICE_ABOUT: DocumentAbout = {
  title: 'xrate rate service',
  version: VERSION,
  description: DESCRIPTION,
  schemas: SERVICE_SCHEMAS,
  securitySchemes: KEY_SCHEMES,
  security: KEY_REQUIREMENTS,
  keyed: (r) => r.right !== undefined,
  limitHeaders: true,
  keyedErrors: [
    {
      status: 503,
      description:
        'Unavailable: the keys and limits store (Redis, with --redis) is unreachable, the service is shutting down, ' +
        'or (charts, long metric timeseries) its budget of heavy work is full',
    },
  ],
};
