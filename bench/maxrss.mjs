// Preloaded by bench/replay-db.ts (`node --import bench/maxrss.mjs bin/xrate.js replay ...`): when
// the process exits, writes its peak resident set size in kB to the file named by
// $XRATE_BENCH_RSS_FILE. Plain JavaScript so the measured CLI runs without tsx.
//
// The peak is the process's own memory's high-water mark (VmHWM of /proc/self/status, on Linux).
// process.resourceUsage().maxRSS was not that in a run of every replay/ bench: after the
// in-process benches, the replays of the sparse and of the dense log both read 245 MB (259 in
// another run), where VmHWM read 165 and 239 MB in the same setting and maxRSS 165 MB in a run of
// the sparse log's bench alone; the child's rusage count did not start from its own memory there.
import { readFileSync, writeFileSync } from 'node:fs';

/** The high-water mark of this process's resident memory, kB. */
function peakKb() {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]);
  } catch {
    // Not Linux: the rusage figure.
  }
  return process.resourceUsage().maxRSS;
}

const file = process.env.XRATE_BENCH_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(peakKb())));
