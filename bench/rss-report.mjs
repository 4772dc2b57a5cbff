// Preloaded (--import) into a process whose start-up bench/startup.ts measures: at exit, its peak resident memory
// (KB) and CPU time (user + system, microseconds) go to the file named by GLM_BENCH_RSS_FILE as JSON.
import { writeFileSync } from 'node:fs';

const u = () => process.resourceUsage();
process.on('exit', () => {
  if (process.env.GLM_BENCH_RSS_FILE)
    writeFileSync(
      process.env.GLM_BENCH_RSS_FILE,
      JSON.stringify({ rssKb: u().maxRSS, cpuUs: u().userCPUTime + u().systemCPUTime }),
    );
});
