// npm run bench:native-agent — what the native capture agent costs a launch-bound loop, with the FAKE CUPTI
// library (test/fake-cupti) standing in for the vendor: per-launch time of
//   none       the fake library alone (nothing armed, nothing recorded),
//   loaded     libflagprof_agent.so loaded and its capture open, not started (device kinds armed at load),
//   profiling  started: RUNTIME and EXTERNAL_CORRELATION armed too, every launch copied into capture.fpc,
// as ratios against `none` (targets: profiling <= 1.05x, loaded within noise of 1.00x). Fresh process per
// measurement, variants interleaved per round, medians of BENCH_RUNS (default 5) rounds; process CPU time.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.env.BENCH_RUNS ?? 5);
const launches = Number(process.env.BENCH_LAUNCHES ?? 200000);
const python = process.env.BENCH_PYTHON ?? path.join(root, '.venv', 'bin', 'python');
const agent = path.join(root, 'build', 'Release', 'libflagprof_agent.so');
for (const [file, fix] of [
  [python, 'run scripts/setup-python.sh'],
  [agent, 'run npm ci (or node scripts/build-addon.mjs)'],
]) {
  if (!existsSync(file)) {
    console.error(`native-overhead: ${file} is missing; ${fix}`);
    process.exit(2);
  }
}
const source = path.join(root, 'test', 'fake-cupti', 'fake_cupti.c');
const fake = path.join(root, 'out', 'native', 'libcupti_fake.so');
if (!existsSync(fake) || statSync(fake).mtimeMs < statSync(source).mtimeMs) {
  mkdirSync(path.dirname(fake), { recursive: true });
  const include = execFileSync(
    process.execPath,
    [path.join(root, 'native', 'tracer', 'find-cupti-headers.mjs')],
    { encoding: 'utf8' },
  );
  execFileSync('cc', [
    '-std=gnu11',
    '-O2',
    '-fPIC',
    '-shared',
    ...(include ? [`-I${include}`] : []),
    `-I${path.join(root, 'native', 'tracer')}`,
    source,
    '-o',
    fake,
    '-lpthread',
  ]);
}

const driver = `
import ctypes, os, sys, time
mode = sys.argv[1]
capture = None
if mode != "none":
    from flagprof_agent import native
    capture = native.open_capture(sys.argv[2])
lib = ctypes.CDLL(os.environ["FLAGOS_TRACER_LIBRARY"])
launch = lib.fake_cupti_launch_kernel
I, U = ctypes.c_int, ctypes.c_uint64
launch.argtypes = [ctypes.c_char_p, I, I, I, I, I, I, I, I, I, U]
name = b"_ZN2at6native20bitonicSortKVInPlaceIfEEvPT_i"
n = int(sys.argv[3])
for _ in range(2000):
    launch(name, 1, 1, 1, 128, 1, 1, 32, 0, 0, 0)
if mode == "profiling":
    capture.start()
# CPU time of the whole process (the agent's buffer work included): on a shared machine wall time mostly
# measures the neighbours.
t = time.process_time()
for _ in range(n):
    launch(name, 1, 1, 1, 128, 1, 1, 32, 0, 0, 0)
if capture is not None:
    capture.stop()  # the final flush belongs to profiling's cost
elapsed = time.process_time() - t
if capture is not None:
    capture.close()
print(elapsed / n * 1e6)
`;

const modes = ['none', 'loaded', 'profiling'];
const samples = { none: [], loaded: [], profiling: [] };
for (let round = 0; round < runs; round++) {
  for (const mode of modes) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-overhead-'));
    const run = spawnSync(python, ['-c', driver, mode, dir, String(launches)], {
      encoding: 'utf8',
      env: {
        ...process.env,
        PYTHONPATH: path.join(root, 'native', 'agent', 'python'),
        FLAGOS_TRACER_LIBRARY: fake,
        FLAGOS_TRACE: '0',
      },
    });
    if (run.status !== 0) {
      console.error(run.stderr);
      process.exit(1);
    }
    samples[mode].push(Number(run.stdout.trim()));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(samples.none);
console.log(
  `launch-bound loop, ${launches} launches, median of ${runs} (load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} CPUs)`,
);
for (const mode of modes) {
  const m = median(samples[mode]);
  const spread = `${Math.min(...samples[mode]).toFixed(3)}..${Math.max(...samples[mode]).toFixed(3)}`;
  console.log(`  ${mode.padEnd(10)} ${m.toFixed(3)} us CPU/launch  (${spread})  ${(m / base).toFixed(3)}x`);
}
console.log(
  `targets: profiling <= 1.05x (${(median(samples.profiling) / base).toFixed(3)}x), loaded ~ 1.00x (${(median(samples.loaded) / base).toFixed(3)}x)`,
);
