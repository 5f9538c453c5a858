/**
 * The `--help` texts of the `xrate` commands.
 *
 * @module
 */
import { CHART_MAX_TICKS } from '../answers/chartResolution.js';
import { HISTORY_MAX_LIMIT } from '../replay/query.js';
import { DEFAULT_STORED_PERIODS } from '../core/periods.js';
import { RIGHTS } from '../http/rights.js';
import { modesHelp } from '../replay/options.js';
import type { Io } from './args.js';
import { CONVERT_TABLE, EMS_TABLE, PUBLISH_TABLE, REPLAY_CLI_TABLE, SERVE_TABLE } from './flags.js';

/** The credential and TLS flags of a connection to NATS (src/cli/connection.ts). */
const NATS_SECURITY_HELP = `Secured NATS (docs/deploy.md): secrets come from files or the environment; a URL with
credentials is refused (a command line is readable by every user of the machine). At most one of:
  --nats-user NAME        a user, its password in --nats-password-file FILE or XRATE_NATS_PASSWORD
  --nats-token-file FILE  a token (or XRATE_NATS_TOKEN)
  --nats-nkey-file FILE   an NKey user's seed (SU...)
  --nats-creds FILE       a .creds file (user JWT and NKey seed)
TLS (any of these, or a tls:// URL, requires it):
  --nats-tls-ca FILE      the CA of the server's certificate (PEM; default: the system's CAs)
  --nats-tls-cert FILE, --nats-tls-key FILE    a client certificate and its key (mutual TLS)
`;

/** The credential and TLS flags of a connection to Redis (src/cli/connection.ts). */
const REDIS_SECURITY_HELP = `Secured Redis (docs/deploy.md): secrets come from files or the environment; a URL with
credentials is refused (a command line is readable by every user of the machine).
  --redis-user NAME       an ACL user (default: Redis's "default" user)
  --redis-password-file FILE
                          its password (or XRATE_REDIS_PASSWORD)
TLS, with a rediss:// URL:
  --redis-tls-ca FILE     the CA of the server's certificate (PEM; default: the system's CAs)
  --redis-tls-cert FILE, --redis-tls-key FILE  a client certificate and its key (mutual TLS)
`;

/** Help of each command (`main`: the command list). */
export const HELP: Record<string, string> = {
  main: `xrate: exchange rates computed per the xrate methodology (docs/methodology.md)

Usage: xrate <command> [options]

Commands:
  replay LOG...      replay event logs, write rates and OHLC to SQLite (or --out FILE)
  convert LOG...     write event logs as one Parquet event log (--out FILE.parquet), in replay order
  rate LOG|DB        rates of pairs at a time, as a JSON array
  history LOG|DB     OHLC timeseries of a pair, as a JSON array
  explain LOG|DB     provenance of a rate: markets used and left out, path, legs
  plot LOG|DB        chart of a rate, its markets and the markets left out, as SVG or PNG
  metrics LOG|DB     stored metrics: what GET /v1/metrics/... answers, as JSON
  symbols LOG|DB     symbol records: what GET /v1/symbols/... answers, as JSON
  periods            the 33 period records (TimeseriesPeriod)
  demo               replay the bundled example into out/xrate.sqlite (npm start)
  serve              the rate service: /v1/exchangerate HTTP endpoints (docs/service.md)
  keys               API keys of the service: create, list, revoke, jwt-import
  ems serve          the EMS gateway: positions valued at xrate's rates, 490 when unreachable (docs/ems.md)
  worker             replay partitions of "replay --queue" runs, from a Redis queue
  publish LOG...     put event logs on a NATS JetStream stream for "serve --nats" replicas

Run "xrate <command> --help" for a command's options.
Exit codes: 0 ok, 1 bad input that stopped the run, 2 bad usage.
`,
  replay: `Usage: xrate replay LOG... [options]

Streams LOGs (NDJSON, .ndjson.gz, CSV, SQLite table "events", CoinAPI flat files, tardis.dev CSV
files, each optionally gzipped, Parquet event logs of "xrate convert") through the engine in event
time. A LOG may be a directory: the event log files under it, recursively, in path order. Vendor
files are told by their header; tardis rows find their market through the symbol events
(exchange_id, symbol_id_exchange) read before them.

Options:
  --db FILE               SQLite output (default out/xrate.sqlite); a new replay replaces its outputs
  --out FILE              write rate changes to FILE.ndjson, FILE.csv or FILE.parquet instead of
                          SQLite (Parquet: with --track, the OHLC buckets in FILE.ohlc.parquet)
  --format F              ndjson | csv | sqlite | coinapi | tardis | parquet (default: from the file
                          name and header; a file starting with PAR1 is a Parquet event log)
  --merge                 merge all LOGs by event time (ties: LOG order, then line) instead of reading
                          them one after another; not with --resume, --snapshot-every or --workers
  --time receive|exchange vendor files: replay by the receive time (time_coinapi, local_timestamp;
                          default) or by the exchange's (time_exchange, timestamp)
  --from TIME             start of output; earlier events are warm-up (ISO 8601)
  --to TIME               end of the replay: events <= TIME, ticks through TIME
  --config FILE.json      engine configuration (EngineConfig, see docs/methodology.md)
  --track B/Q,...         pairs whose OHLC is kept (default: every direct pair)
  --periods P,...         OHLC periods stored per pair (default ${DEFAULT_STORED_PERIODS.join(',')})
  --reorder-window SECS   buffer and sort events this far out of order instead of rejecting them
  --max-line-bytes N      a longer line is a line_too_long reject, never held whole (default 1048576)
  --snapshot-every DUR    snapshot the engine every DUR of event time (e.g. 1h, 30m)
  --resume                continue from the newest snapshot in --db
  --no-own-metrics        do not compute and store xrate's own metrics (XRATE_*: stored by default
                          with --db)
  --batch-size N          records per transaction (default 4096)
  --threads N             threads reading each LOG: 1 reads in the replay's thread; more, the file
                          reads, gunzip and parsing of NDJSON, Parquet and vendor files in a worker
                          thread, with --merge from 3 on one for all vendor files (default: the
                          cores; not with --workers or --queue yet)
  --workers N|auto        replay in N time partitions at once, one worker thread each (auto: the
                          cores), merged into --db with the outputs of a serial replay
                          (docs/parallel.md; not with --from, --to, --resume,
                          --snapshot-every, --reorder-window, --merge or vendor files yet)
  --queue redis://H:P     send the partitions to "xrate worker" processes through a BullMQ queue
                          on Redis, then merge them; LOGs and --db (--out) must be on storage
                          every worker reads at the same path. Partitions: --workers N, else one per
                          worker connected
  --queue-name NAME       the queue (default xrate-partitions)
  --attempts N            tries per partition before the run fails (1-100, default 3)
  --queue-wait DUR        the queue's Redis lost: how long to wait for it (default 60s); back in
                          time, the run goes on; else it stops, nothing merged (exit 1)
  --quiet                 no progress bar or summary
  --json                  print the summary as JSON
  --allow-duplicates      read a file given twice (also through a directory or a link) twice;
                          refused otherwise (exit 2), as its records would be applied twice

${REDIS_SECURITY_HELP}
${modesHelp(REPLAY_CLI_TABLE)}`,
  rate: `Usage: xrate rate LOG|DB --at TIME --pair B/Q [--pair B/Q ...] [options]

Replays LOG up to TIME (events with time <= TIME, ticks through the last whole second <= TIME)
and prints one JSON array, one object per --pair in the order given:
  {"asset_id_base":"BTC","asset_id_quote":"USD","rate":64112.56,"time":"2024-03-02T04:30:20.7278090Z"}
rate and time are null when there is none. A database written by "xrate replay" may stand for LOG.

Options: --at TIME, --pair B/Q (repeatable, or comma-separated), --format F, --config FILE.json,
         --reorder-window SECS, --max-line-bytes N
`,
  history: `Usage: xrate history LOG|DB --pair B/Q --period PERIOD_ID --from T1 --to T2 [--limit N] [options]

Prints the ExchangeRatesTimeseriesItem array of the buckets whose start lies in [T1, T2), oldest
first, at most N (default 100, max ${HISTORY_MAX_LIMIT}). Direct or cross pair from a LOG; from a
database, pairs tracked during the replay.

Options: --pair, --period, --from, --to, --limit, --format F, --config FILE.json, --reorder-window SECS,
         --max-line-bytes N
`,
  explain: `Usage: xrate explain LOG|DB --pair B/Q [--at TIME] [options]

Prints the provenance of rate(B, Q) at the last tick <= TIME (default: the end of the log):
the path and, per leg, the markets used (price, q, V, weight, quote age) and left out (reason).
From a database: the engine state at the end of the replay (a later --at advances it with no
more events; an earlier one exits 1: explain it from the log).
With no rate: kind "none", and reason, pair, next_refresh and message give the first reason why
(no_tick, unknown_asset, not_eligible, not_legitimate, stale, spread, no_quote, rank, zero_weight,
no_path; docs/methodology.md section 6).

Options: --pair, --at, --format F, --config FILE.json, --reorder-window SECS, --max-line-bytes N
`,
  plot: `Usage: xrate plot LOG|DB --pair B/Q [--pair C/D ...] --from T1 --to T2 [--period P] --out FILE.svg|.png [options]

Draws rate(B, Q) over [T1, T2], any range. Up to ${CHART_MAX_TICKS} ticks (two hours), at every tick:
the price of each market that contributes to it, the markets left out marked by reason (stale,
spread, rank, outlier, ...) at their midpoint, and with --period the OHLC candles of that period.
A longer range is drawn by the buckets of the shortest period with at most --width buckets that
the data can serve (from a database: a stored period or one rolled up from it): each bucket's
close, its candles when there are few enough to see, and below, each market's weight share
stacked and the count of markets used (from a database that stored xrate's own metrics, or a LOG).
The line written says the resolution. Markets are drawn for a direct pair (or its inverse); a
cross rate is drawn alone. With several --pair, each pair is drawn as its % change from its first
value, all on one axis.
From a LOG, the log is replayed. From a database: it keeps rate changes, not quotes, so for the
markets the logs its run read are replayed again (from its newest snapshot before T1, if any)
when they are still at the recorded paths (and still give its rates); otherwise the chart has the
rate only, and a note says why.
An .svg is written by xrate itself (same data, same bytes); a .png is that SVG drawn by headless
Chromium (the "chromium" package, or XRATE_CHROMIUM=PATH).

Options:
  --pair B/Q              the pair (direct, inverse or cross); again to compare pairs
  --from TIME, --to TIME  the range (ISO 8601, UTC unless an offset is given)
  --period P              also draw OHLC candles of period P (e.g. 5MIN; see xrate periods); over
                          more than ${CHART_MAX_TICKS} ticks, the resolution itself
  --out FILE              FILE.svg or FILE.png
  --width N, --height N   size in pixels (default 960 x 540); the width is the chart's points
  --format F, --config FILE.json, --reorder-window SECS, --max-line-bytes N   as for xrate rate
`,
  metrics: `Usage: xrate metrics LOG|DB ROUTE [NAME=VALUE ...] [options]

Prints what the service answers for GET /v1/metrics/ROUTE?NAME=VALUE&... over the same data (the
metric and metric_definition events of the log; docs/service.md). ROUTE is one of: listing,
{exchange,symbol,asset}/listing, {exchange,symbol,asset}/current, exchange/EXCHANGE_ID/current,
symbol/SYMBOL_ID/current, asset/ASSET_ID/current, by-exchange/EXCHANGE_ID,
{exchange,symbol,asset}/history, history, group. Parameters: metric_id, exchange_id, symbol_id,
asset_id, chain_id, network_id, time, time_format, period_id, time_start, time_end, limit, groupby.
Example: xrate metrics out/xrate.sqlite exchange/history metric_id=M exchange_id=BINANCE period_id=1HRS

Options: --no-own-metrics (from a LOG: without xrate's own metrics, as replay --no-own-metrics stores it),
         --format F, --config FILE.json, --reorder-window SECS, --max-line-bytes N
`,
  symbols: `Usage: xrate symbols LOG|DB ROUTE [NAME=VALUE ...] [options]

Prints what the service answers for GET /v1/symbols/ROUTE?NAME=VALUE&... over the same data: the
symbol records (docs/methodology.md section 10). ROUTE is "" (every symbol), EXCHANGE_ID,
EXCHANGE_ID/active or map/EXCHANGE_ID. Parameters: filter_symbol_id (prefixes), filter_exchange_id,
filter_asset_id (comma or semicolon lists), time. From a LOG, any time (the log is replayed to
it); from a replay database, its last tick or later only (an earlier time exits 1: ask the log).
Example: xrate symbols out/xrate.sqlite BINANCE/active filter_asset_id=BTC

Options: --format F, --config FILE.json, --reorder-window SECS, --max-line-bytes N
`,
  periods: `Usage: xrate periods [--months]

Prints the 33 exchange-rate period records as JSON (with --months, also the month/year ids of
the metrics endpoints).
`,
  demo: `Usage: xrate demo [--db FILE]

Replays the bundled example log (fixtures/demo) into out/xrate.sqlite (or --db FILE) and prints
the summary, a table of current rates and a cross rate. This is what "npm start" runs.
`,
  serve: `Usage: xrate serve [--db FILE] [--keys FILE | --redis URL] [--port N] [--host H] [--replay LOG | --follow LOG] [options]

Serves the exchange-rate endpoints (GET /v1/exchangerate/...; docs/service.md) over a database
written by "xrate replay" (default out/xrate.sqlite, what "npm start" writes), or over a live
engine: --replay LOG replays LOG into --db and keeps serving its engine; --follow LOG keeps
reading LOG (plain NDJSON) as it grows and ticks on the wall clock every second.
A start that finds no active key creates a local development key once it listens, and prints it
(a start that fails, e.g. on a port in use, creates none).
GET / is a chart page (pair, range, candles; hover a point for its provenance): open
http://HOST:PORT/?apikey=KEY, or it prompts for the key.

With --redis, the keys, their 24 h usage and their requests in flight live in Redis, shared
exactly by every replica serving with the same --redis (a request gets 503 while Redis is away).

Options:
  --db FILE               replay database (default out/xrate.sqlite)
  --keys FILE             API keys database (default: the --db file)
  --redis redis://H:P     keep keys, usage and concurrency in Redis, shared by replicas
  --host H                listen address (default 127.0.0.1)
  --port N                listen port (default 3000; 0 = any free port)
  --replay LOG            replay LOG into --db first, then serve the live engine
  --follow LOG            follow LOG (plain NDJSON) into --db as it grows (wall-clock ticks)
  --heavy-concurrency N   history requests with a limit above 1000 a key may have in flight (default 2)
  --format F              ndjson | csv | sqlite (default: from the file name; vendor files, told by
                          their header, are read without it)
  --config FILE.json, --reorder-window SECS, --max-line-bytes N   as for replay
  --log-level L           JSON logs on stderr: fatal, error, warn, info (default), debug, trace, silent

A replica of a stream (docs/deploy.md): reads the stream of "xrate publish" in sequence order,
ticks in event time, keeps its own replay database, and answers as "xrate replay" of the same
events; restarted, it resumes from its last snapshot and stream position.
  --nats nats://H:P       be a replica of the JetStream stream on this NATS server
  --stream NAME           the stream (default XRATE)
  --snapshot-every DUR    event time between snapshots (default 1h)
  --snapshot-from FILE    a new replica (--db FILE, not existing yet) starts from the newest
                          snapshot in FILE, another replica's database, copied while it runs
  --ready-lag N           /readyz is ready while at most N messages behind (default 1000)

Also, without a key: GET /healthz (alive), GET /readyz (ready to answer), GET /metrics (Prometheus).

${NATS_SECURITY_HELP}
${REDIS_SECURITY_HELP}
${modesHelp(SERVE_TABLE)}`,
  convert: `Usage: xrate convert LOG... --out FILE.parquet [options]

Writes LOGs (anything "xrate replay" reads: NDJSON, CSV, SQLite, CoinAPI flat files, tardis.dev
CSV files, each optionally gzipped, directories) as one Parquet event log in replay order: quotes
and trades as typed columns, every other record whole, the lines that could not be read as their
rejects, with the raw text of every line (docs/formats.md, "Parquet event logs"). "xrate replay
FILE.parquet" then gives what replaying the LOGs gives (the rejects' source being FILE.parquet).

Options:
  --out FILE.parquet      the file to write (replaced when it exists; written whole or not at all)
  --merge                 merge all LOGs by event time, as "xrate replay --merge" reads them
  --time receive|exchange vendor files: the time events take (default receive), as for replay
  --format F              ndjson | csv | sqlite | coinapi | tardis (default: from the file name and header)
  --max-line-bytes N      a longer line is stored as a line_too_long reject (default 1048576)
  --quiet                 no summary line on stderr
  --allow-duplicates      convert a file given twice twice (refused otherwise, exit 2)

${modesHelp(CONVERT_TABLE)}`,
  publish: `Usage: xrate publish LOG... --nats nats://HOST:PORT [--stream NAME] [--rate N | --follow]

Puts the records of LOGs on a NATS JetStream stream, in order, creating the stream (subjects
NAME.>) when missing: one message per record on NAME.ev.EXCHANGE, then an end-of-run message.
Replicas ("xrate serve --nats") read it (docs/deploy.md).
A LOG is one file of xrate's own event log: NDJSON or CSV (each optionally gzipped) or SQLite
(table "events"). Not a directory, nor a vendor file (CoinAPI flat files, tardis.dev CSV): their
rows become events only with more than the row (a CoinAPI file's path names its symbol and date;
a tardis row finds its market through the symbol events of a replay), while a replica reads each
message alone. They are refused before connecting: replay them with "xrate replay", or convert
them to NDJSON first.

Options:
  --nats nats://H:P       the NATS server (JetStream enabled)
  --stream NAME           the stream (default XRATE)
  --rate N                at most N events per second (default: as fast as the server takes them)
  --follow                keep publishing the lines appended to LOG (one plain NDJSON log) until
                          SIGINT/SIGTERM (no end-of-run message)
  --format F              ndjson | csv | sqlite (default: from the file name)
  --max-line-bytes N      a longer line is published as a line_too_long reject (default 1048576)
  --quiet                 no progress lines on stderr
  --resume                continue after the last record the stream holds (after a failed run:
                          the same LOGs, in the same order)
  --from-line N           start at line (rowid) N of the first LOG
  --allow-duplicates      publish a file given twice twice (refused otherwise, exit 2)

${NATS_SECURITY_HELP}
${modesHelp(PUBLISH_TABLE)}`,
  worker: `Usage: xrate worker --queue redis://HOST:PORT [options]

Takes partitions of "xrate replay --queue" runs from the queue and replays each in a worker thread
into the database file the job names, until SIGINT or SIGTERM (it finishes the partitions in hand
first). A worker that dies mid-partition loses nothing: after --lock-ms its partition goes to
another worker, and the result is the same. The inputs and databases must be at the same paths on
every machine (docs/parallel.md).

Options:
  --queue redis://H:P     the Redis server of the queue
  --queue-name NAME       the queue (default xrate-partitions)
  --concurrency N         partitions at once (1-256, default 1; each takes about one core)
  --lock-ms N             how long a partition stays taken without a sign of life (1000-3600000,
                          default 30000)
  --queue-wait DUR        the queue's Redis lost: how long to wait for it (default 60s); not back
                          in time, the worker drops its partitions in hand and exits 1
  --quiet                 no log lines on stderr

${REDIS_SECURITY_HELP}`,
  ems: `Usage: xrate ems serve [--db FILE] [--replay LOG | --follow LOG] [--port N] [--host H] [options]

The EMS gateway (docs/ems.md): GET /v1/positions[?exchange_id=X][&time=T] answers the open
positions of the log's position events, per account (BINANCE, BINANCE~hedge, ...), valued at
xrate's own rates (unrealized_pnl at rate(base, quote) of the symbol; absent without a rate), or
490 when the exchange asked for (without exchange_id: any exchange) is unreachable. The
management operations GET /v1/endpoints[?filter_exchange_id=X], /v1/locations and
/v1/certificate/pem answer from --sites and --client-pem.
Data: a replay database (default out/xrate.sqlite), or --replay LOG (replay it into --db, then
serve its engine), or --follow LOG (keep reading a growing NDJSON log, wall-clock ticks).

Options:
  --db FILE               replay database (default out/xrate.sqlite)
  --replay LOG            replay LOG into --db first, then serve the live engine
  --follow LOG            follow LOG (plain NDJSON) into --db as it grows
  --host H                listen address (default 127.0.0.1)
  --port N                listen port (default 3001; 0 = any free port)
  --managed               require an API key (X-CoinAPI-Key header or apikey parameter; keys as
                          for "xrate serve", "xrate keys create") or a trusted client certificate;
                          a start with no key and no --tls-client-ca creates a dev key once
                          it listens, and prints it
  --keys FILE             API keys database of --managed (default: the --db file)
  --tls-cert FILE         serve HTTPS with this certificate (PEM) ...
  --tls-key FILE          ... and its private key (PEM)
  --tls-client-ca FILE    with --managed: client certificates signed by this CA authenticate
  --sites FILE.json       {"locations": [...], "endpoints": [...]} of /v1/locations, /v1/endpoints
  --client-pem FILE       the client certificate (and key) PEM that /v1/certificate/pem hands out
  --format F              ndjson | csv | sqlite (default: from the file name; vendor files, told by
                          their header, are read without it)
  --config FILE.json, --reorder-window SECS, --max-line-bytes N   as for replay

${modesHelp(EMS_TABLE)}`,
  keys: `Usage: xrate keys <create|list|revoke|jwt-import> [--db FILE | --keys FILE | --redis URL] [options]

  create [--name N] [--limit N] [--concurrency N] [--overage] [--rights LIST]
         prints the new key alone on the last line (only its SHA-256 is stored).
         --limit: request cost per sliding 24 h (default 1000000); --concurrency: requests in
         flight at once (default 100); --overage: allow going past the limit;
         --rights: all (default; also reaches rights added later) or a comma list of
         ${RIGHTS.join(', ')}
  list [--json]                    keys with their usage of the last 24 h
  revoke (--id N | --key KEY)      the key stops working within a second
  jwt-import (--id N | --key KEY) (--public-key FILE.pem | --secret-file FILE | --remove)
         require a JWT (Authorization: Bearer) signed by that key: RSA (RS256, PS256), EC P-256
         (ES256) public key in PEM or JWK, or an HS256 secret of at least 32 bytes

The keys live in the --db file (default out/xrate.sqlite) unless --keys FILE is given, or in
Redis with --redis redis://HOST:PORT (the keys of "xrate serve --redis" replicas).

${REDIS_SECURITY_HELP}`,
};

/** Prints the help of `cmd` (the command list for an unknown one); exit code 0. */
export function help(cmd: string, io: Io): number {
  io.out(HELP[cmd] ?? HELP.main);
  return 0;
}
