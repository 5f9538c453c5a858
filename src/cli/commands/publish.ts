/**
 * `xrate publish LOG... --nats nats://HOST:PORT [--stream NAME]`: puts the logs' records on a
 * JetStream stream for the replicas of `xrate serve --nats` (src/distributed/publish.ts,
 * docs/deploy.md), at full speed, at `--rate N` events/s, or following a growing log.
 *
 * @module
 */
import { XrateError } from '../../core/errors.js';
import { feedFlags, format, inputs, int, maxLineBytes, parse, refuseDuplicateInputs, type Io } from '../args.js';
import { refuseOutOfMode } from '../../replay/options.js';
import { natsSecurityFlags } from '../connection.js';
import { PUBLISH_OPTIONS, PUBLISH_TABLE, publishModeOf } from '../flags.js';
import { help } from '../help.js';

/** Runs `xrate publish` with `args` (after the command name); returns the exit code. */
export async function cmdPublish(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, PUBLISH_OPTIONS);
  if (values.help) return help('publish', io);
  if (values.nats === undefined) throw new XrateError('usage', 'publish needs --nats nats://HOST:PORT');
  const stream = feedFlags(values.nats, values.stream, (m) => new XrateError('usage', m));
  const natsSecurity = natsSecurityFlags(values.nats, values, (m) => new XrateError('usage', m));
  let rate: number | undefined;
  if (values.rate !== undefined) {
    rate = Number(values.rate);
    if (!(rate > 0) || !Number.isFinite(rate))
      throw new XrateError('usage', `--rate must be a positive number of events per second, got "${values.rate}"`, { field: '--rate' });
  }
  if (values.follow && positionals.length !== 1)
    throw new XrateError('usage', '--follow publishes one plain NDJSON log as it grows', { field: '--follow' });
  // Each flag in the modes it applies to (src/cli/flags.ts).
  refuseOutOfMode(PUBLISH_TABLE, publishModeOf(values), values);
  const fromLine = int('from-line', values['from-line'], 1, Number.MAX_SAFE_INTEGER, (m) => new XrateError('usage', m));
  if (fromLine !== undefined && values.resume) throw new XrateError('usage', 'give --resume or --from-line, not both');
  const logs = inputs(positionals, 'publish');
  refuseDuplicateInputs(logs, values['allow-duplicates']);
  const { publish } = await import('../../distributed/publish.js');
  const run = await publish({
    inputs: logs,
    nats: values.nats,
    natsSecurity,
    stream,
    rate,
    follow: values.follow,
    format: format(values.format),
    maxLineBytes: maxLineBytes(values['max-line-bytes']),
    fromLine,
    resume: values.resume,
    onNotice: (text) => io.err(`xrate publish: ${text}\n`),
    onProgress: values.quiet
      ? undefined
      : (p) => io.err(`xrate publish: ${p.published} records published (stream sequence ${p.lastSeq}), reading ${p.input}\n`),
  });
  const stop = (): void => run.stop();
  if (io.onRunning) io.onRunning(async () => stop());
  else {
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  try {
    const p = await run.done;
    if (p.nothingToResume !== undefined) {
      io.out(`nothing to resume: ${p.nothingToResume}\n`);
      return 0;
    }
    const after = p.startedAfter ? ` after line ${p.startedAfter.line} of ${p.startedAfter.input}` : '';
    io.out(
      `published ${p.published} records to the stream ${stream}${after} (last sequence ${p.lastSeq}) in ${(p.elapsedMs / 1000).toFixed(1)} s\n`,
    );
    return 0;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
