/**
 * The `xrate serve` command: {@link serveCommand} checks the flags, starts the service
 * ({@link startService}) and keeps it running until SIGINT/SIGTERM.
 *
 * @module
 */
import type { EngineConfig } from '../core/config.js';
import { startService, type ServiceIo } from '../service/start.js';
import { isRedisUrl } from '../replay/redisUrl.js';
import { closeOnSignals, int } from './args.js';

/** Makes a bad-usage error (exit code 2) of the caller's kind. */
export type UsageErrorFactory = (message: string) => Error;

/** The flags of `xrate serve` that {@link serveCommand} reads. */
export interface ServeFlags {
  db?: string;
  keys?: string;
  redis?: string;
  host?: string;
  port?: string;
  replay?: string;
  follow?: boolean;
  'heavy-concurrency'?: string;
}

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
  if (values.redis !== undefined) {
    if (values.keys !== undefined) throw usage('--redis keeps the keys in Redis: give it without --keys');
    if (!isRedisUrl(values.redis))
      throw usage(`--redis must be a redis:// URL (redis://HOST[:PORT][/DB], or rediss:// for TLS), got "${values.redis}"`);
  }
  if (
    !values.replay &&
    (extra.config !== undefined || extra.format !== undefined || extra.reorderWindowUs !== undefined || extra.maxLineBytes !== undefined)
  ) {
    throw usage(
      '--config, --format, --reorder-window and --max-line-bytes apply to --replay LOG; a database answers with the config of its run',
    );
  }
  const svc = await startService(
    {
      db: values.db,
      keys: values.keys,
      redis: values.redis,
      host: values.host,
      port,
      replay: values.replay,
      follow: !!values.follow,
      heavyConcurrency,
      ...extra,
    },
    io,
  );
  closeOnSignals('serve', 'closing', () => svc.close(), io);
  return 0;
}
