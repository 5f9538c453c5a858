/**
 * Helpers of the service tests: a demo database, a server on 127.0.0.1 port 0, raw HTTP requests,
 * and response validation against the interface's OpenAPI schemas (fixtures/).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { decode as unpack } from '@msgpack/msgpack';
import { OWN_METRICS } from '../../src/core/engine/ownMetrics.js';
import type { MetricsSource } from '../../src/core/metrics/source.js';
import { replay } from '../../src/replay/replay.js';
import { KeyStore, type CreateKeyOptions } from '../../src/http/keys.js';
import { DatabaseRateProvider, type HistoryQuery, type RateProvider, type TimeseriesItem } from '../../src/answers/index.js';
import { createService } from '../../src/service/server.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEMO_LOG = join(ROOT, 'fixtures', 'demo', 'demo.ndjson.gz');
export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const SPEC_PATH = join(FIXTURES, 'market-data-rest.openapi.json');

/** A temporary directory, removed by the returned function. */
export function tempDir(prefix = 'xrate-service-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Replays the bundled demo log into `dir/demo.sqlite` (about 3 s). */
export async function demoDb(dir: string): Promise<string> {
  const db = join(dir, 'demo.sqlite');
  await replay({ inputs: [DEMO_LOG], db });
  return db;
}

/** A response read in full. */
/**
 * The demo database in a temporary folder and a provider over it, for the tests of one file:
 * made before them and removed after them (call at the file's top level).
 */
export function demoProvider(): { readonly tmp: ReturnType<typeof tempDir>; readonly db: string; readonly provider: DatabaseRateProvider } {
  const f = {} as { tmp: ReturnType<typeof tempDir>; db: string; provider: DatabaseRateProvider };
  beforeAll(async () => {
    f.tmp = tempDir();
    f.db = await demoDb(f.tmp.dir);
    f.provider = await DatabaseRateProvider.open(f.db);
  });
  afterAll(async () => {
    await f.provider?.close();
    f.tmp?.remove();
  });
  return f;
}

export interface Res {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json: () => unknown;
}

/**
 * One HTTP request over 127.0.0.1 (no automatic decompression); an `https:` URL with `tls`: the CA
 * that signed the server's certificate, and the client certificate to present, if any.
 */
export function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; path?: string; tls?: { ca: string; cert?: string; key?: string } } = {},
): Promise<Res> {
  const u = new URL(url);
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((res, rej) => {
    const req = send(
      {
        host: u.hostname,
        port: u.port,
        method: opts.method ?? 'GET',
        path: opts.path ?? u.pathname + u.search,
        headers: opts.headers ?? {},
        ...opts.tls,
      },
      (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => {
          const body = Buffer.concat(chunks);
          res({
            status: r.statusCode ?? 0,
            headers: r.headers,
            body,
            text: body.toString('utf8'),
            json: () => JSON.parse(body.toString('utf8')) as unknown,
          });
        });
        r.on('error', rej);
      },
    );
    req.on('error', rej);
    req.end();
  });
}

/** A running test server. */
export interface TestServer {
  url: string;
  app: FastifyInstance;
  keys: KeyStore;
  provider: RateProvider;
  /** Creates a key and returns it in clear. */
  key(opts?: CreateKeyOptions): string;
  get(path: string, headers?: Record<string, string>): Promise<Res>;
  /** Closes the app (flushing usage); `keepStores` leaves the key store and provider open. */
  close(keepStores?: boolean): Promise<void>;
}

/** Starts the service on 127.0.0.1, port 0. */
export async function startServer(opts: {
  provider?: RateProvider;
  db?: string;
  keysPath: string;
  now?: () => number;
  keys?: KeyStore;
  flushEveryMs?: number;
  heavyConcurrency?: number;
  metrics?: MetricsSource;
}): Promise<TestServer> {
  const provider = opts.provider ?? (await DatabaseRateProvider.open(opts.db!));
  const keys = opts.keys ?? KeyStore.open(opts.keysPath);
  const app = await createService({
    provider,
    keys,
    now: opts.now,
    flushEveryMs: opts.flushEveryMs,
    heavyConcurrency: opts.heavyConcurrency,
    metrics: opts.metrics ?? (provider instanceof DatabaseRateProvider ? provider.metrics(OWN_METRICS) : undefined),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return {
    url,
    app,
    keys,
    provider,
    key: (o) => keys.create(o).key,
    get: async (path, headers) => checked(path, await request(url + path, { headers })),
    async close(keepStores = false) {
      await app.close();
      if (!keepStores) {
        keys.close();
        if (!opts.provider) await provider.close();
      }
    },
  };
}

// ------------------------------------------------------------------ schema validation

type Json = Record<string, unknown>;
export const SPEC = JSON.parse(readFileSync(SPEC_PATH, 'utf8')) as { paths: Record<string, { get: Json }>; components: Json };

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
for (const f of ['double', 'float', 'int32', 'int64']) ajv.addFormat(f, true);
ajv.addSchema({ $id: 'spec.json', components: SPEC.components });

const validators = new Map<string, ValidateFunction>();

/** The 200 JSON schema of a spec path (e.g. '/v1/exchangerate/{asset_id_base}'), compiled. */
export function validatorFor(path: string): ValidateFunction {
  let v = validators.get(path);
  if (!v) {
    const op = SPEC.paths[path]?.get as { responses: { '200': { content: { 'application/json': { schema: unknown } } } } } | undefined;
    if (!op) throw new Error(`no spec path ${path}`);
    const schema = JSON.parse(
      JSON.stringify(op.responses['200'].content['application/json'].schema).replace(
        /"#\/components\/schemas\/([^"]+)"/g,
        (_m, name: string) => JSON.stringify(`spec.json#/components/schemas/${encodeURIComponent(name)}`),
      ),
    ) as object;
    v = ajv.compile(schema);
    validators.set(path, v);
  }
  return v;
}

/** Throws with ajv's errors when `body` does not match the spec path's 200 schema. */
export function expectSchema(path: string, body: unknown): void {
  const v = validatorFor(path);
  if (!v(body)) throw new Error(`response does not match ${path}: ${ajv.errorsText(v.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
}

const errorValidator = ajv.compile({
  type: 'object',
  properties: { message: { type: 'string', minLength: 1 } },
  required: ['message'],
  additionalProperties: false,
});

/** The limit headers of a response, by short names. */
export function limitsOf(r: Res): Record<string, string | undefined> {
  const h = r.headers;
  return {
    used: h['x-ratelimit-used'] as string,
    limit: h['x-ratelimit-limit'] as string,
    remaining: h['x-ratelimit-remaining'] as string,
    cost: h['x-ratelimit-request-cost'] as string,
    reset: h['x-ratelimit-reset'] as string,
    overage: h['x-ratelimit-overage'] as string,
    climit: h['x-concurrencylimit-limit'] as string,
    cremaining: h['x-concurrencylimit-remaining'] as string,
  };
}

/**
 * Polls `f` until it is true (for a state another process or replica reaches on its own, such as
 * keys re-read about once a second); fails after 10 s.
 */
export async function eventually(f: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 10_000;
  while (!(await f())) {
    if (Date.now() > end) throw new Error('condition not reached in 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Throws unless `res` is a JSON `{"message": "..."}` error with `status`; returns the message. */
export function expectError(res: Res, status: number): string {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text.slice(0, 300)}`);
  if (!String(res.headers['content-type']).startsWith('application/json'))
    throw new Error(`error content-type ${res.headers['content-type']}`);
  const body = res.json();
  if (!errorValidator(body)) throw new Error(`bad error body ${res.text}`);
  return (body as { message: string }).message;
}

/** The spec path whose schema a request path answers with (explain and unknown routes: none). */
export function specPathOf(path: string): string | undefined {
  const p = path
    .trim()
    .split('?')[0]
    .split('/')
    .filter((seg) => seg !== '' && !/^apikey-/i.test(seg))
    .map((seg) => seg.toLowerCase());
  if (p[0] !== 'v1' || p[1] !== 'exchangerate') return undefined;
  if (p.length === 4 && p[2] === 'history' && p[3] === 'periods') return PATHS.periods;
  if (p.length === 3) return PATHS.rates;
  if (p.length === 4) return PATHS.rate;
  if (p.length === 5 && p[4] === 'history') return PATHS.history;
  return undefined;
}

/**
 * Validates every response of {@link TestServer.get}: a 200 JSON (or MessagePack) body against the
 * spec's schema of its operation, every other status as a JSON `{"message"}` error.
 */
function checked(path: string, res: Res): Res {
  if (res.headers['content-encoding']) return res;
  const type = String(res.headers['content-type'] ?? '');
  if (res.status !== 200) {
    expectError(res, res.status);
    return res;
  }
  const spec = specPathOf(path);
  if (spec === undefined) return res;
  try {
    if (type.startsWith('application/json')) expectSchema(spec, res.json());
    else if (type === 'application/x-msgpack') expectSchema(spec, unpack(res.body));
  } catch (e) {
    throw new Error(`GET ${path}: ${(e as Error).message}`);
  }
  return res;
}

/** The spec paths of the four operations. */
export const PATHS = {
  rate: '/v1/exchangerate/{asset_id_base}/{asset_id_quote}',
  rates: '/v1/exchangerate/{asset_id_base}',
  periods: '/v1/exchangerate/history/periods',
  history: '/v1/exchangerate/{asset_id_base}/{asset_id_quote}/history',
} as const;

/** A gate that holds history answers until opened. */
export class Gate {
  waiting = 0;
  private release: (() => void) | undefined;
  private readonly opened = new Promise<void>((r) => {
    this.release = r;
  });
  private watchers: { n: number; resolve: () => void }[] = [];

  async pass(): Promise<void> {
    this.waiting++;
    for (const w of this.watchers.filter((x) => x.n <= this.waiting)) w.resolve();
    await this.opened;
  }

  waitFor(count: number): Promise<void> {
    if (this.waiting >= count) return Promise.resolve();
    return new Promise((resolve) => this.watchers.push({ n: count, resolve }));
  }

  open(): void {
    this.release!();
  }
}

/** A provider that answers as `inner` does: tests extend it to change one operation. */
export class WrappedProvider implements RateProvider {
  constructor(protected readonly inner: DatabaseRateProvider) {}
  info() {
    return this.inner.info();
  }
  rate(b: string, q: string, at?: number) {
    return this.inner.rate(b, q, at);
  }
  rates(b: string, q: Parameters<DatabaseRateProvider['rates']>[1]) {
    return this.inner.rates(b, q);
  }
  history(b: string, q: string, h: HistoryQuery): TimeseriesItem[] | Promise<TimeseriesItem[]> {
    return this.inner.history(b, q, h);
  }
  explain(b: string, q: string, at?: number) {
    return this.inner.explain(b, q, at);
  }
  symbols(at: number | undefined, f: Parameters<DatabaseRateProvider['symbols']>[1]) {
    return this.inner.symbols(at, f);
  }
  close(): void {}
}

/** A provider whose history waits at a gate (holding the requests in flight); the rest as `inner`. */
export class GatedHistory extends WrappedProvider {
  constructor(
    inner: DatabaseRateProvider,
    private readonly gate: Gate,
  ) {
    super(inner);
  }
  override async history(b: string, q: string, h: HistoryQuery): Promise<TimeseriesItem[]> {
    await this.gate.pass();
    return this.inner.history(b, q, h);
  }
}
