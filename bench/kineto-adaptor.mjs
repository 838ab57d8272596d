// npm run bench:kineto — what the Kineto adaptor (native/kineto, loaded as torch's PrivateUse1 profiler) costs a
// launch-bound loop, with the FAKE CUPTI library standing in for the vendor (bench/kineto_loop.py):
//   adaptor / plain        profiling with device activity recorded and linked, against torch.profiler without
//                          it: target <= 1.05x;
//   idle-plugin / idle     the agent and plugin loaded and registered while nothing profiles: target ~1.00x.
// Fresh process per measurement, variants interleaved per round on the same pinned CPU, medians of the rounds'
// ratios (BENCH_RUNS rounds, default 5; BENCH_LAUNCHES launches, default 20000).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.env.BENCH_RUNS ?? 5);
const launches = Number(process.env.BENCH_LAUNCHES ?? 20000);
const python = process.env.BENCH_PYTHON ?? path.join(root, '.venv', 'bin', 'python');
const agent = path.join(root, 'build', 'Release', 'libflagprof_agent.so');
const fake = path.join(root, 'out', 'native', 'libcupti_fake.so');
for (const [file, fix] of [
  [python, 'run scripts/setup-python.sh'],
  [agent, 'run npm ci (or node scripts/build-addon.mjs)'],
  [
    fake,
    'run the tests once (npx vitest run test/integration/kineto-plugin.test.ts) to build the fake CUPTI',
  ],
]) {
  if (!existsSync(file)) {
    console.error(`kineto-adaptor: ${file} is missing; ${fix}`);
    process.exit(2);
  }
}
const cache = mkdtempSync(path.join(os.tmpdir(), 'flagprof-bench-kineto-'));
const variants = ['idle', 'idle-plugin', 'plain', 'adaptor'];
const cpus = os.cpus().length;
function measure(variant, cpu) {
  const run = spawnSync(python, [path.join(root, 'bench', 'kineto_loop.py'), variant, String(launches)], {
    encoding: 'utf8',
    env: {
      ...process.env,
      FLAGOS_TRACER_LIBRARY: fake,
      FLAGPROF_AGENT_LIBRARY: agent,
      FLAGPROF_CACHE: cache,
      BENCH_CPU: String(cpu),
    },
  });
  if (run.status !== 0) {
    console.error(`kineto-adaptor: ${variant} failed: ${run.stderr.trim().split('\n').pop()}`);
    process.exit(1);
  }
  return Number(run.stdout.trim().split('\n').pop());
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
measure('adaptor', 0); // builds the plugin into the cache once
const perRound = [];
for (let r = 0; r < runs; r++) {
  const cpu = r % cpus;
  const ns = Object.fromEntries(variants.map((v) => [v, measure(v, cpu)]));
  perRound.push(ns);
  console.log(`round ${r + 1}: ${variants.map((v) => `${v} ${ns[v].toFixed(0)} ns`).join(' · ')}`);
}
rmSync(cache, { recursive: true, force: true });
const ratio = (a, b) => median(perRound.map((ns) => ns[a] / ns[b]));
console.log(
  `\nper launch (median ns): ${variants.map((v) => `${v} ${median(perRound.map((ns) => ns[v])).toFixed(0)}`).join(', ')}`,
);
console.log(`adaptor / plain torch.profiler: ${ratio('adaptor', 'plain').toFixed(3)}x (target <= 1.05x)`);
console.log(
  `idle with the plugin registered / idle: ${ratio('idle-plugin', 'idle').toFixed(3)}x (target ~1.00x)`,
);
