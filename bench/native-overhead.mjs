// npm run bench:native-agent — what the native capture agent costs a launch-bound loop, with the FAKE CUPTI
// library (test/fake-cupti) standing in for the vendor: per-launch time of
//   none       the fake library alone (nothing armed, nothing recorded),
//   loaded     libflagprof_agent.so loaded and its capture open, not started (device kinds armed at load),
//   vendor     a null subscriber (test/fake-cupti/null_subscriber.c) arming what profiling arms and discarding
//              every buffer: the vendor's own recording, which any CUPTI subscriber (Kineto included) pays,
//   profiling  started: RUNTIME and EXTERNAL_CORRELATION armed too, every launch copied into capture.fpc,
// each as two figures against `none`: CPU time of the launching thread (what the app's loop pays; the vendor
// delivers buffers on its own thread) and CPU time of the whole process (the agent's buffer work included).
// The agent's own share is profiling/vendor. Targets: profiling <= 1.05x on the launching thread, loaded within
// noise of 1.00x. Fresh process per measurement, variants interleaved per round, medians of BENCH_RUNS
// (default 5) rounds. The vCPUs of a virtual machine can differ in speed by a third, far more than what is
// measured here, so each round pins the launching thread of every variant to the same CPU (rotating across
// rounds) and the ratios are medians of the rounds' ratios; the vendor's thread stays free to run elsewhere.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
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
const outDir = path.join(root, 'out', 'native');
// Compiles a C source of test/fake-cupti into out/native when missing or older than what it is built from.
function buildC(name, output, libraries) {
  const source = path.join(root, 'test', 'fake-cupti', name);
  const target = path.join(outDir, output);
  const dependencies = [source, path.join(root, 'test', 'fake-vendor', 'delivery.h')];
  if (existsSync(target) && dependencies.every((file) => statSync(target).mtimeMs >= statSync(file).mtimeMs))
    return target;
  mkdirSync(outDir, { recursive: true });
  const include = execFileSync(
    process.execPath,
    [path.join(root, 'native', 'vendors', 'cupti', 'find-headers.mjs')],
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
    target,
    ...libraries,
  ]);
  return target;
}
const fake = buildC('fake_cupti.c', 'libcupti_fake.so', ['-lpthread']);
const nullSubscriber = buildC('null_subscriber.c', 'libnull_subscriber.so', ['-ldl', '-lpthread']);

const driver = `
import ctypes, os, sys, time
mode, round_ = sys.argv[1], int(sys.argv[5])
capture = subscriber = None
if mode in ("loaded", "profiling"):
    from flagprof_agent import native
    capture = native.open_capture(sys.argv[2])
elif mode == "vendor":
    subscriber = ctypes.CDLL(sys.argv[4])
    if subscriber.null_subscriber_attach(os.environ["FLAGOS_TRACER_LIBRARY"].encode()) != 0:
        sys.exit("null subscriber: attach failed")
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
elif mode == "vendor" and subscriber.null_subscriber_start() != 0:
    sys.exit("null subscriber: start failed")
# Pinned only now, so the vendor's delivery thread, started by the flush of start(), keeps every CPU (in
# loaded, where nothing flushes, it starts inside the loop and shares this CPU; it only skips records there).
try:
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[round_ % len(cpus)]})
except (AttributeError, OSError):
    pass
# CPU time, not wall time (on a shared machine wall time mostly measures the neighbours): of this thread, which
# launches, and of the process, whose other threads do the buffer work.
thread, process = time.thread_time(), time.process_time()
for _ in range(n):
    launch(name, 1, 1, 1, 128, 1, 1, 32, 0, 0, 0)
# The final flush belongs to the cost: it waits for the buffers still being delivered.
if capture is not None and mode == "profiling":
    capture.stop()
elif subscriber is not None:
    subscriber.null_subscriber_stop()
thread, process = time.thread_time() - thread, time.process_time() - process
if capture is not None:
    capture.close()
print(thread / n * 1e6, process / n * 1e6)
`;

const modes = ['none', 'loaded', 'vendor', 'profiling'];
const samples = Object.fromEntries(modes.map((mode) => [mode, { thread: [], process: [] }]));
for (let round = 0; round < runs; round++) {
  for (const mode of modes) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-overhead-'));
    const args = ['-c', driver, mode, dir, String(launches), nullSubscriber, String(round)];
    const run = spawnSync(python, args, {
      encoding: 'utf8',
      env: {
        ...process.env,
        PYTHONPATH: path.join(root, 'native', 'agent', 'python'),
        FLAGOS_TRACER_LIBRARY: fake,
        FLAGOS_TRACE: '0',
      },
    });
    rmSync(dir, { recursive: true, force: true });
    if (run.status !== 0) {
      console.error(run.stderr);
      process.exit(1);
    }
    const [thread, proc] = run.stdout.trim().split(/\s+/).map(Number);
    samples[mode].thread.push(thread);
    samples[mode].process.push(proc);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// Paired per round (same CPU, same neighbours), then the median over rounds.
const ratio = (mode, clock, base = 'none') =>
  median(samples[mode][clock].map((x, round) => x / samples[base][clock][round]));
console.log(
  `launch-bound loop, ${launches} launches, median of ${runs} (load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} CPUs)`,
);
console.log('             launching thread, us CPU/launch       whole process, us CPU/launch');
for (const mode of modes) {
  const cells = ['thread', 'process'].map((clock) => {
    const xs = samples[mode][clock];
    const spread = `(${Math.min(...xs).toFixed(3)}..${Math.max(...xs).toFixed(3)})`;
    return `${median(xs).toFixed(3)} ${spread.padEnd(14)} ${ratio(mode, clock).toFixed(3)}x`;
  });
  console.log(`  ${mode.padEnd(10)} ${cells[0].padEnd(36)} ${cells[1]}`);
}
console.log(
  `agent's own share (profiling/vendor): ${ratio('profiling', 'thread', 'vendor').toFixed(3)}x launching thread, ${ratio('profiling', 'process', 'vendor').toFixed(3)}x process`,
);
console.log(
  `targets: profiling <= 1.05x on the launching thread (${ratio('profiling', 'thread').toFixed(3)}x), loaded ~ 1.00x (${ratio('loaded', 'thread').toFixed(3)}x)`,
);
