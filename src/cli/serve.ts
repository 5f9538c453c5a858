/**
 * The `xrate serve` command: {@link serveCommand} checks the flags, starts the service
 * ({@link startService}) and keeps it running until SIGINT/SIGTERM.
 *
 * @module
 */
import type { EngineConfig } from '../core/config.js';
import { startService, type ServiceIo } from '../app/serve.js';
import { isRedisUrl } from '../distributed/redisUrl.js';
import { refuseOutOfMode } from '../replay/options.js';
import { closeOnSignals, feedFlags, int, seconds } from './args.js';
import { SERVE_TABLE, serveModeOf } from './flags.js';
import { type NatsFlagValues, natsSecurityFlags, type RedisFlagValues, redisSecurityFlags } from './connection.js';

/** Makes a bad-usage error (exit code 2) of the caller's kind. */
export type UsageErrorFactory = (message: string) => Error;

/** The flags of `xrate serve` that {@link serveCommand} reads. */
export interface ServeFlags extends NatsFlagValues, RedisFlagValues {
  db?: string;
  keys?: string;
  redis?: string;
  host?: string;
  port?: string;
  replay?: string;
  follow?: string;
  'heavy-concurrency'?: string;
  nats?: string;
  stream?: string;
  'snapshot-every'?: string;
  'snapshot-from'?: string;
  'ready-lag'?: string;
  'log-level'?: string;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `xrate serve` with parsed flags: starts the service and keeps it running until SIGINT/SIGTERM. */
export async function serveCommand(
  values: ServeFlags,
  extra: { config?: Partial<EngineConfig>; format?: 'ndjson' | 'csv' | 'sqlite'; reorderWindowUs?: number; maxLineBytes?: number },
  io: ServiceIo,
  usage: UsageErrorFactory,
): Promise<number> {
  const port = int('port', values.port, 0, 65535, usage);
  const heavyConcurrency = int('heavy-concurrency', values['heavy-concurrency'], 1, 10_000, usage);
  // Each flag in the modes it applies to (src/cli/flags.ts).
  refuseOutOfMode(SERVE_TABLE, serveModeOf(values), { ...values, ...extraFlags(extra) });
  const redisSecurity = redisSecurityFlags('redis', values.redis, values, usage);
  if (values.redis !== undefined) {
    if (values.keys !== undefined) throw usage('--redis keeps the keys in Redis: give it without --keys');
    if (!isRedisUrl(values.redis))
      throw usage(`--redis must be a redis:// URL (redis://HOST[:PORT][/DB], or rediss:// for TLS), got "${values.redis}"`);
  }
  if (values.nats !== undefined) {
    feedFlags(values.nats, values.stream, usage);
    if (values['snapshot-from'] !== undefined && values.db === undefined)
      throw usage("--snapshot-from FILE copies another replica's database into the new one: give it with --db FILE");
  }
  const natsSecurity = natsSecurityFlags(values.nats, values, usage);
  const logLevel = values['log-level'] ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw usage(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  const svc = await startService(
    {
      db: values.db,
      keys: values.keys,
      redis: values.redis,
      redisSecurity,
      host: values.host,
      port,
      replay: values.replay,
      follow: values.follow,
      heavyConcurrency,
      nats: values.nats,
      natsSecurity,
      stream: values.stream,
      snapshotEveryUs: seconds('snapshot-every', values['snapshot-every']),
      snapshotFrom: values['snapshot-from'],
      readyLag: int('ready-lag', values['ready-lag'], 0, 1_000_000_000, usage),
      logLevel,
      ...extra,
    },
    io,
  );
  closeOnSignals('serve', 'closing', () => svc.close(), io);
  return 0;
}

/** The log flags of `extra` as the table's fields (`--config`, `--format`, `--reorder-window`, `--max-line-bytes`). */
function extraFlags(extra: {
  config?: unknown;
  format?: string;
  reorderWindowUs?: number;
  maxLineBytes?: number;
}): Record<string, unknown> {
  return {
    config: extra.config,
    format: extra.format,
    'reorder-window': extra.reorderWindowUs,
    'max-line-bytes': extra.maxLineBytes,
  };
}
