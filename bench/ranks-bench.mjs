// npm run bench:ranks — opening a whole multi-rank run (the 8 rank traces of param's DLRM set, V100×8) as one
// timeline against opening its largest rank alone: import, merge, analysis and the timeline payload as the editor
// sends it (compressed), in one process, interleaved, median of the runs. Two figures for the run: its first frame
// (the editor shows rank 0 while the other ranks are read: openRun's onFirstPart) and the whole run on screen.
// Target: the merged view opens (first frame) in ≤ 1.5× the largest single rank.
import { readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { loadBundle, traces } from './lib.mjs';

const runs = Number(process.env.BENCH_RUNS ?? 7);
const { openRun, analyze, compressTimelineBuffer, encodeTimelineBuffer } = await loadBundle(
  'ranks-bench',
  `export { openRun } from './extension/capture/merged';
   export { analyze } from './extension/analysis/analyze';
   export { compressTimelineBuffer, encodeTimelineBuffer } from './extension/timeline/encode';`,
);

const folder = path.join(traces, 'param_dlrm_v100x8');
const files = readdirSync(folder).map((n) => path.join(folder, n));
const largest = files.reduce((a, b) => (statSync(b).size > statSync(a).size ? b : a));

/** What the editor does before the timeline can draw: the profile analysed, encoded and compressed. */
function payloadOf(profile) {
  return compressTimelineBuffer(
    encodeTimelineBuffer(profile, analyze(profile), { title: 'bench', argsOnRequest: true }),
  );
}

async function open(target) {
  const t0 = performance.now();
  let firstMs;
  const { profile } = await openRun(target, {
    onFirstPart: (first) => {
      payloadOf(first.profile);
      firstMs = performance.now() - t0;
    },
  });
  const payload = payloadOf(profile);
  const ms = performance.now() - t0;
  return { ms, firstMs: firstMs ?? ms, slices: profile.slices.length, bytes: payload.byteLength };
}

const single = [];
const merged = [];
await open(largest); // warm the JIT for both
await open(folder);
for (let i = 0; i < runs; i++) {
  single.push(await open(largest));
  merged.push(await open(folder));
}
const median = (xs, key) => [...xs].sort((a, b) => a[key] - b[key])[Math.floor(xs.length / 2)][key];
const s = { ms: median(single, 'ms'), slices: single[0].slices };
const m = { ms: median(merged, 'ms'), firstMs: median(merged, 'firstMs'), slices: merged[0].slices };
console.table([
  {
    open: `largest rank (${path.basename(largest)})`,
    'first frame ms': s.ms.toFixed(1),
    'whole ms': s.ms.toFixed(1),
    slices: s.slices,
  },
  {
    open: `all ${files.length} ranks merged`,
    'first frame ms': m.firstMs.toFixed(1),
    'whole ms': m.ms.toFixed(1),
    slices: m.slices,
  },
]);
console.log(
  `merged first frame (rank 0 shown) / largest rank: ${(m.firstMs / s.ms).toFixed(2)}x (target <= 1.5x); ` +
    `whole run / largest rank: ${(m.ms / s.ms).toFixed(2)}x for ${(m.slices / s.slices).toFixed(2)}x the slices ` +
    `(median of ${runs})`,
);
