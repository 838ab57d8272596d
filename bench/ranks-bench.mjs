// npm run bench:ranks — opening a whole multi-rank run (the 8 rank traces of param's DLRM set, V100×8) as one
// timeline against opening its largest rank alone: import, merge, analysis and the timeline payload, in one
// process, interleaved, median of the runs. Target (issue: merged view) ≤ 1.5× the largest single rank.
import { readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { loadBundle, traces } from './lib.mjs';

const runs = Number(process.env.BENCH_RUNS ?? 7);
const { openRun, analyze, encodeTimelineBuffer } = await loadBundle(
  'ranks-bench',
  `export { openRun } from './extension/capture/merged';
   export { analyze } from './extension/analysis/analyze';
   export { encodeTimelineBuffer } from './extension/timeline/encode';`,
);

const folder = path.join(traces, 'param_dlrm_v100x8');
const files = readdirSync(folder).map((n) => path.join(folder, n));
const largest = files.reduce((a, b) => (statSync(b).size > statSync(a).size ? b : a));

async function open(target) {
  const t0 = performance.now();
  const { profile } = await openRun(target);
  const analysis = analyze(profile);
  const payload = encodeTimelineBuffer(profile, analysis, { title: 'bench' });
  return { ms: performance.now() - t0, slices: profile.slices.length, bytes: payload.length };
}

const single = [];
const merged = [];
await open(largest); // warm the JIT for both
await open(folder);
for (let i = 0; i < runs; i++) {
  single.push(await open(largest));
  merged.push(await open(folder));
}
const median = (xs) => [...xs].sort((a, b) => a.ms - b.ms)[Math.floor(xs.length / 2)];
const s = median(single);
const m = median(merged);
console.table([
  { open: `largest rank (${path.basename(largest)})`, ms: s.ms.toFixed(1), slices: s.slices },
  { open: `all ${files.length} ranks merged`, ms: m.ms.toFixed(1), slices: m.slices },
]);
console.log(
  `merged / largest rank: ${(m.ms / s.ms).toFixed(2)}x for ${(m.slices / s.slices).toFixed(2)}x the slices ` +
    `(median of ${runs}; target <= 1.5x)`,
);
