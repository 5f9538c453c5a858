// Preloaded by bench/replay-db.ts (`node --import bench/maxrss.mjs bin/xrate.js replay ...`): when
// the process exits, writes its peak resident set size in kB (process.resourceUsage().maxRSS) to
// the file named by $XRATE_BENCH_RSS_FILE. Plain JavaScript so the measured CLI runs without tsx.
import { writeFileSync } from 'node:fs';

const file = process.env.XRATE_BENCH_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
