/**
 * What the output dump (scripts/dump-outputs.ts) masks so that two runs of one checkout give the
 * same bytes, and two checkouts in different directories can be compared: the temporary
 * directory, the checkout of the command, wall-clock values (times taken, throughput, peak
 * memory, run start and finish times), process ids, host names, ports and API keys.
 *
 * @module
 */

/** The token that stands for a value that depends on the wall clock or the machine. */
export const WALL = '<WALL>';

/**
 * Replaces what varies from run to run in a text the command printed or stored: each directory of
 * `dirs` (longest first) by its token, then the values below.
 */
export function normaliser(dirs: [path: string, token: string][]): (text: string) => string {
  const sorted = [...dirs].sort((a, b) => b[0].length - a[0].length);
  return (text: string): string => {
    let s = text;
    for (const [d, token] of sorted) s = s.split(d).join(token);
    return (
      s
        // The replay summary's timing lines (their padding depends on the value's width), and the
        // same values in its JSON form.
        .replace(/^(time taken|events\/s|peak memory \(RSS\)) .*$/gm, `$1 ${WALL}`)
        .replace(/"(durationMs|eventsPerSecond|peakRssMb|duration_ms|elapsedMs)":\s*-?[0-9.e+-]+/g, `"$1":"${WALL}"`)
        // Ports picked by --port 0.
        .replace(/(127\.0\.0\.1|localhost):\d{2,5}/g, '$1:<PORT>')
        // API keys (shown once at creation) and their prefixes.
        .replace(/\b[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}\b/g, '<KEY>')
        .replace(/prefix [0-9A-F]{8}\b/g, 'prefix <KEY>')
    );
  };
}
