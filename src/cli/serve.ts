/**
 * The `xrate serve` command: {@link serveCommand} checks the flags, starts the service
 * ({@link startService}) and keeps it running until SIGINT/SIGTERM.
 *
 * @module
 */
import type { EngineConfig } from '../core/config.js';
import { startService, type ServiceIo } from '../app/serve.js';
import { isRedisUrl } from '../distributed/redisUrl.js';
import { closeOnSignals, feedFlags, int, seconds } from './args.js';
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
  follow?: boolean;
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
  if (values.follow && !values.replay) throw usage('--follow needs --replay LOG (the NDJSON log to follow)');
  const redisSecurity = redisSecurityFlags('redis', values.redis, values, usage);
  if (values.redis !== undefined) {
    if (values.keys !== undefined) throw usage('--redis keeps the keys in Redis: give it without --keys');
    if (!isRedisUrl(values.redis))
      throw usage(`--redis must be a redis:// URL (redis://HOST[:PORT][/DB], or rediss:// for TLS), got "${values.redis}"`);
  }
  if (values.nats !== undefined) {
    if (values.replay) throw usage('give either --nats URL (a replica of a stream) or --replay LOG, not both');
    feedFlags(values.nats, values.stream, usage);
    if (values['snapshot-from'] !== undefined && values.db === undefined)
      throw usage("--snapshot-from FILE copies another replica's database into the new one: give it with --db FILE");
  } else if (
    values.stream !== undefined ||
    values['snapshot-every'] !== undefined ||
    values['snapshot-from'] !== undefined ||
    values['ready-lag'] !== undefined
  ) {
    throw usage('--stream, --snapshot-every, --snapshot-from and --ready-lag apply to a replica (--nats URL)');
  }
  const natsSecurity = natsSecurityFlags(values.nats, values, usage);
  const logLevel = values['log-level'] ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw usage(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  if (
    !values.replay &&
    !values.nats &&
    (extra.config !== undefined || extra.format !== undefined || extra.reorderWindowUs !== undefined || extra.maxLineBytes !== undefined)
  ) {
    throw usage(
      '--config, --format, --reorder-window and --max-line-bytes apply to --replay LOG (--config also to --nats); a database answers with the config of its run',
    );
  }
  const svc = await startService(
    {
      db: values.db,
      keys: values.keys,
      redis: values.redis,
      redisSecurity,
      host: values.host,
      port,
      replay: values.replay,
      follow: !!values.follow,
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
