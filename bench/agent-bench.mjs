// npm run bench:agent — what the capture agent costs, as ratios against baselines measured in the same run:
//   1. the agent (CPU mode) against the same script under a plain torch.profiler wrapper with the same settings
//      (CPU activity, record_shapes, with_stack, Chrome-trace export): target <= 1.05x;
//   2. the agent with a profiling window that excludes all the work (--delay far past the end) against plain
//      `python script.py`: target <= 1.02x;
//   3. the time from `flagprof profile` to the printed summary for examples/train.py.
// Each measurement is a fresh process; rounds interleave the variants so load changes hit them alike; medians
// of BENCH_RUNS (default 5), and the ratio of the fastest runs (the least disturbed by other load) beside it.
// Needs .venv (scripts/setup-python.sh) and the built CLI (npm run build).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const out = path.join(here, 'out', 'agent');
mkdirSync(out, { recursive: true });
const runs = Number(process.env.BENCH_RUNS ?? 5);
const python = process.env.BENCH_PYTHON ?? path.join(root, '.venv', 'bin', 'python');
const script = path.resolve(root, process.env.BENCH_SCRIPT ?? 'examples/train.py');
const scriptArgs = (process.env.BENCH_SCRIPT_ARGS ?? '').split(' ').filter(Boolean);
const agentPath = path.join(root, 'native', 'agent', 'python');
const cli = path.join(root, 'bin', 'flagprof.js');
for (const [file, fix] of [
  [python, 'run scripts/setup-python.sh'],
  [path.join(root, 'dist', 'cli.js'), 'run npm run build'],
]) {
  if (!existsSync(file)) {
    console.error(`agent-bench: ${file} is missing; ${fix}`);
    process.exit(2);
  }
}

// The baseline a user would write by hand: the same profiler settings around the same runpy call, then export.
const wrapper = path.join(out, 'plain_profiler.py');
writeFileSync(
  wrapper,
  [
    'import runpy, sys',
    'import torch',
    'from torch.profiler import ProfilerActivity, profile',
    'trace, script = sys.argv[1], sys.argv[2]',
    'sys.argv = sys.argv[2:]',
    'with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=True) as prof:',
    '    runpy.run_path(script, run_name="__main__")',
    'prof.export_chrome_trace(trace)',
    '',
  ].join('\n'),
);

// Wall time and CPU time (user + system of the command and everything it waited for). On a shared machine the
// wall time swings with other people's load; CPU time is what the agent itself adds. One intra-op thread for every
// variant, so idle OpenMP workers spinning on a busy machine do not blur the CPU time.
const measure = path.join(out, 'measure.py');
writeFileSync(
  measure,
  [
    'import json, resource, subprocess, sys, time',
    'started = time.perf_counter()',
    'done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)',
    'wall = time.perf_counter() - started',
    'usage = resource.getrusage(resource.RUSAGE_CHILDREN)',
    'print(json.dumps({"rc": done.returncode, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,',
    '                  "stderr": done.stderr[-3000:].decode("utf-8", "replace")}))',
    '',
  ].join('\n'),
);
const env = {
  ...process.env,
  PYTHONPATH: agentPath,
  FLAGOS_TRACE: '1',
  OMP_NUM_THREADS: '1',
  MKL_NUM_THREADS: '1',
};
function timed(command, args) {
  const result = spawnSync(python, [measure, command, ...args], {
    cwd: root,
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  const measured = JSON.parse(result.stdout || '{"rc": -1}');
  if (result.status !== 0 || measured.rc !== 0) {
    console.error(
      `agent-bench: ${command} ${args.join(' ')} failed (${measured.rc}):\n${measured.stderr ?? result.stderr}`,
    );
    process.exit(1);
  }
  return { wall: measured.wall, cpu: measured.cpu };
}

const variants = {
  plainPython: () => timed(python, [script, ...scriptArgs]),
  plainProfiler: () => timed(python, [wrapper, path.join(out, 'plain.json'), script, ...scriptArgs]),
  agent: () => {
    rmSync(path.join(out, 'agent-session'), { recursive: true, force: true });
    return timed(python, [
      '-m',
      'flagprof_agent',
      '--session',
      path.join(out, 'agent-session'),
      '--mode',
      'cpu',
      '--',
      script,
      ...scriptArgs,
    ]);
  },
  agentWindowOutside: () => {
    rmSync(path.join(out, 'window-session'), { recursive: true, force: true });
    return timed(python, [
      '-m',
      'flagprof_agent',
      '--session',
      path.join(out, 'window-session'),
      '--mode',
      'cpu',
      '--delay',
      '100000',
      '--',
      script,
      ...scriptArgs,
    ]);
  },
  commandToSummary: () => {
    rmSync(path.join(out, 'cli-session'), { recursive: true, force: true });
    return timed(process.execPath, [
      cli,
      'profile',
      '--python',
      python,
      '--mode',
      'cpu',
      '--out',
      path.join(out, 'cli-session'),
      '--',
      script,
      ...scriptArgs,
    ]);
  },
};

const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
timed(python, ['-c', 'import torch']); // warm the file cache once, for every variant alike
for (let round = 0; round < runs; round++) {
  const order = Object.keys(variants);
  if (round % 2 === 1) order.reverse();
  for (const name of order) samples[name].push(variants[name]());
  process.stderr.write(`round ${round + 1}/${runs} done\n`);
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const m = Object.fromEntries(
  Object.entries(samples).map(([k, v]) => [
    k,
    {
      wall: median(v.map((x) => x.wall)),
      cpu: median(v.map((x) => x.cpu)),
      cpuMin: Math.min(...v.map((x) => x.cpu)),
    },
  ]),
);
const rows = [
  ['agent (cpu mode) vs plain torch.profiler wrapper', 'agent', 'plainProfiler', 1.05],
  ['agent, window outside the work, vs plain python', 'agentWindowOutside', 'plainPython', 1.02],
  [
    'flagprof profile: command to printed summary, vs plain python',
    'commandToSummary',
    'plainPython',
    undefined,
  ],
];
console.log(
  `\nscript: ${path.relative(root, script)} ${scriptArgs.join(' ')}   runs: ${runs} (median)   python: ${python}\n`,
);
console.log(
  '| measurement | CPU s | baseline CPU s | CPU ratio | min-CPU ratio | wall s | baseline wall s | wall ratio | target |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const [label, name, base, target] of rows) {
  const cpu = m[name].cpu / m[base].cpu;
  const wall = m[name].wall / m[base].wall;
  const verdict =
    target === undefined ? '—' : `<= ${target}x ${cpu <= target ? '(ok on CPU time)' : '(over on CPU time)'}`;
  console.log(
    `| ${label} | ${m[name].cpu.toFixed(2)} | ${m[base].cpu.toFixed(2)} | ${cpu.toFixed(3)}x | ${(m[name].cpuMin / m[base].cpuMin).toFixed(3)}x | ${m[name].wall.toFixed(2)} | ${m[base].wall.toFixed(2)} | ${wall.toFixed(3)}x | ${verdict} |`,
  );
}
const fmt = (v) => v.map((x) => `${x.cpu.toFixed(2)}/${x.wall.toFixed(2)}`).join(' ');
console.log('\nsamples (CPU s / wall s):');
for (const [name, values] of Object.entries(samples)) console.log(`  ${name}: ${fmt(values)}`);
