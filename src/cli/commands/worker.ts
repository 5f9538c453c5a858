/**
 * `xrate worker --queue redis://HOST:PORT`: takes partitions of `xrate replay --queue` runs from
 * the queue and replays each in a worker thread, until SIGINT/SIGTERM, or until the queue's Redis
 * has been lost for longer than `--queue-wait` (exit 1; docs/parallel.md).
 *
 * @module
 */
import { runPartitionInWorker } from '../../replay/parallel.js';
import { loadQueue } from '../../distributed/loadQueue.js';
import { isRedisUrl } from '../../distributed/redisUrl.js';
import { XrateError } from '../../core/errors.js';
import { closeOnSignals, int, parseFlags, seconds, type Io } from '../args.js';
import { redisSecurityFlags } from '../connection.js';
import { WORKER_OPTIONS } from '../flags.js';

const usage = (m: string): Error => new XrateError('usage', m);
import { help } from '../help.js';

/** Runs `xrate worker` with `args` (after the command name); returns the exit code once it is listening. */
export async function cmdWorker(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, WORKER_OPTIONS);
  if (values.help) return help('worker', io);
  if (values.queue === undefined) throw new XrateError('usage', 'worker needs --queue redis://HOST:PORT');
  const security = redisSecurityFlags('queue', values.queue, values, usage);
  if (!isRedisUrl(values.queue))
    throw new XrateError('usage', `--queue must be a redis:// URL, got "${values.queue}"`, { field: '--queue' });
  const waitUs = seconds('queue-wait', values['queue-wait']);
  const log = values.quiet ? undefined : (line: string) => io.err(`xrate worker: ${line}\n`);
  const { startQueueWorker } = await loadQueue();
  const worker = await startQueueWorker({
    url: values.queue,
    security,
    name: values['queue-name'],
    concurrency: int('concurrency', values.concurrency, 1, 256, usage),
    lockMs: int('lock-ms', values['lock-ms'], 1000, 3_600_000, usage),
    waitMs: waitUs === undefined ? undefined : waitUs / 1000,
    run: runPartitionInWorker,
    log,
    // The partitions running in this process's threads end with it; their files are gone already.
    onLost: (e) => {
      io.err(`xrate worker: ${e.message}; stopping\n`);
      process.exit(1);
    },
  });
  log?.(`waiting for partitions on ${values.queue}`);
  closeOnSignals('worker', 'finishing the partitions in hand, then stopping', () => worker.close(), io, !!values.quiet);
  return 0;
}
