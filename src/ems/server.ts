/**
 * The EMS gateway (docs/ems.md): an HTTP or HTTPS app answering the positions of the event log
 * valued at xrate's own rates, and the management operations, self-hosted (no authentication) or
 * managed (an API key, or a TLS client certificate signed by the client CA). src/app/ems.ts starts
 * it (`xrate ems serve`).
 *
 * @module
 */
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { describeRoutes } from '../http/declare.js';
import { openApiDocument } from '../http/openapi.js';
import { Authenticator, type RawRequest } from '../http/auth.js';
import { isXrateError } from '../core/errors.js';
import { answerOf, errorBody, unauthorized } from '../http/errors.js';
import type { KeyStore } from '../http/keys.js';
import { emsAbout } from './api.js';
import { EXCHANGE_UNREACHABLE, UnreachableError } from './positions.js';
import { type EmsData, registerEmsRoutes } from './routes.js';
import { clientCertificate, judgeClientCertificates, type TlsMaterial } from './tls.js';

/** Options of {@link createEmsApp}. */
export interface EmsAppOptions extends EmsData {
  /** Managed mode: every request needs an API key of `keys` or a trusted client certificate. */
  managed?: { keys: KeyStore; now?: () => number };
  /** Serve HTTPS with this material; with `ca`, client certificates are asked for and checked. */
  tls?: TlsMaterial;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Builds the gateway app (not listening). The key store and the data stay open (their owner
 * closes them).
 *
 * @example
 * ```ts
 * const app = await createEmsApp({ positions, sites: { locations: [], endpoints: [] } });
 * await app.listen({ host: '127.0.0.1', port: 0 });
 * ```
 */
export async function createEmsApp(opts: EmsAppOptions): Promise<FastifyInstance> {
  const base = { logger: false, routerOptions: { ignoreTrailingSlash: true, caseSensitive: false } } as const;
  const tls = opts.tls;
  // A client certificate is asked for, never required by the handshake: a request without one
  // may still carry an API key, and a refused one gets a 401 saying why.
  const app = (tls
    ? Fastify({
        ...base,
        https: { cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: tls.ca !== undefined, rejectUnauthorized: false },
      })
    : Fastify(base)) as unknown as FastifyInstance;
  if (tls?.ca !== undefined) judgeClientCertificates(app.server, tls.ca);
  const managed = opts.managed;
  // Every route is registered from its declaration, and described at /openapi.json.
  describeRoutes(app, (routes) =>
    openApiDocument(
      routes,
      emsAbout({ managed: managed !== undefined, clientCertificates: managed !== undefined && tls?.ca !== undefined }),
    ),
  );
  if (managed) {
    const auth = new Authenticator(managed.keys, managed.now);
    app.addHook('onRequest', async (req) => {
      if (req.routeOptions.config?.api?.open) return;
      const cert = clientCertificate(req.raw.socket);
      if (cert.authorized) return;
      try {
        await auth.authenticate(req.raw as RawRequest, req.query);
      } catch (e) {
        if (!isXrateError(e, 'unauthorized') || !cert.presented) throw e;
        throw unauthorized(`The TLS client certificate was refused (${cert.reason}), and ${e.message}`);
      }
    });
  }
  registerEmsRoutes(app, opts);
  app.setNotFoundHandler((req, reply) => {
    void reply
      .code(404)
      .header('content-type', JSON_TYPE)
      .send(
        errorBody(
          `Unknown route ${req.method} ${req.url.split('?')[0]} (see docs/ems.md: /v1/positions, /v1/endpoints, /v1/locations, /v1/certificate/pem)`,
        ),
      );
  });
  app.setErrorHandler((err: FastifyError | UnreachableError, _req, reply) => {
    if (err instanceof UnreachableError) {
      void reply.code(EXCHANGE_UNREACHABLE).header('content-type', JSON_TYPE).send(JSON.stringify(err.body));
      return;
    }
    const answer = answerOf(err);
    if (answer) {
      void reply.code(answer.status).header('content-type', JSON_TYPE).send(errorBody(answer.message));
      return;
    }
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    void reply
      .code(status)
      .header('content-type', JSON_TYPE)
      .send(errorBody(status === 500 ? 'Internal error' : `Bad request: ${err.message}`));
  });
  return app;
}
