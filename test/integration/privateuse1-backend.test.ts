/**
 * The "flagos" PrivateUse1 test backend (test/privateuse1) with each fake vendor library: real torch 2.13 ops on
 * device "flagos" give the CPU's results, launch their device work through the fake library (captured by the
 * agent and decoded by the addon), time ops on the legacy profiler's device events, and, when the backend is built
 * with the Kineto adaptor, put kernels into torch.profiler's trace.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadAddon, type DecodedCapture } from '../../extension/import/addon';
import { ARTIFACTS, launchChromium } from '../helpers/browser';
import { BIN, buildCli } from '../helpers/cli';
import {
  PYTHON,
  ROOT,
  ensureFakeCupti,
  ensureFakeMspti,
  ensureFakeRoctracer,
  ensureNativeBuilt,
} from '../helpers/native';

const WORKLOAD = path.join(ROOT, 'test', 'privateuse1', 'workload.py');
const EXAMPLE = path.join(ROOT, 'examples', 'privateuse1', 'train.py');
const GEMM =
  'void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)';
const RELU =
  'void at::native::vectorized_elementwise_kernel<4, at::native::ReluFunctor<float>, at::detail::Array<char*, 2> >(int, at::native::ReluFunctor<float>, at::detail::Array<char*, 2>)';
const SUM =
  'void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::SumOps<float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::SumOps<float, float>, unsigned int, float, 4>)';
// The tracer's event kinds (native/tracer/device_tracer.h).
const EVENT = { kernel: 0, memcpy: 1, memset: 2 };

interface Result {
  family: string;
  adaptor: boolean;
  checks: Record<string, boolean>;
  losses: number[];
  device_clock_ns: number;
  legacy: Record<string, { count: number; device_time_us: number }>;
  capture?: string;
  trace?: string;
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  dir: string;
}

function runPython(script: string, env: Record<string, string | undefined>, args: string[] = []): Run {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-privateuse1-'));
  const merged: Record<string, string | undefined> = {
    ...process.env,
    PYTHONPATH: path.join(ROOT, 'test', 'privateuse1'),
    ...env,
  };
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  const run = spawnSync(PYTHON, [script, ...(script === WORKLOAD ? [dir] : []), ...args], {
    encoding: 'utf8',
    // The first run compiles the backend against the installed torch.
    timeout: 400_000,
    env: merged,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, dir };
}

const FAKES = [
  { family: 'cupti', library: () => ensureFakeCupti() },
  { family: 'mspti', library: () => ensureFakeMspti() },
  { family: 'roctracer', library: () => ensureFakeRoctracer() },
];

const runs = new Map<string, { run: Run; result: Result; capture: DecodedCapture }>();

beforeAll(() => {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/setup-python.sh first`);
  ensureNativeBuilt();
  buildCli();
  // One after the other: the first builds the backend, the others load it from the cache.
  for (const fake of FAKES) {
    const run = runPython(WORKLOAD, { FLAGOS_TRACER_LIBRARY: fake.library() }, ['--capture', '--kineto']);
    expect(run.status, `${fake.family}: ${run.stderr}`).toBe(0);
    const result = JSON.parse(readFileSync(path.join(run.dir, 'result.json'), 'utf8')) as Result;
    runs.set(fake.family, { run, result, capture: loadAddon().decodeCapture(result.capture!) });
  }
}, 900_000);

describe.each(FAKES.map((f) => f.family))('the flagos backend over the fake %s library', (family) => {
  const get = () => runs.get(family)!;

  it('drives the library it was given', () => {
    expect(get().result.family).toBe(family);
    expect(get().capture.vendor).toBe(family);
  });

  it('computes what the CPU computes: its own kernels, the CPU-kernel ops, Linear forward+backward and SGD', () => {
    const { checks } = get().result;
    expect(Object.keys(checks).sort()).toEqual(
      [
        'add_mul_sum',
        'cat_max',
        'device',
        'factory',
        'grad_on_device',
        'inplace',
        'item',
        'linear_sgd_losses',
        'linear_sgd_weights',
        'matmul',
        'relu',
        'roundtrip',
        'views',
        'zeros',
      ].sort(),
    );
    for (const [name, ok] of Object.entries(checks)) expect(ok, name).toBe(true);
    const { losses } = get().result;
    expect(losses[2]).toBeLessThan(losses[0]);
  });

  it('gives each op device time on the legacy profiler, a GEMM more than an elementwise kernel', () => {
    const { legacy, device_clock_ns } = get().result;
    expect(legacy['aten::mm'].count).toBe(3);
    expect(legacy['aten::relu'].count).toBe(3);
    expect(legacy['aten::relu'].device_time_us).toBeGreaterThan(0);
    expect(legacy['aten::mm'].device_time_us).toBeGreaterThan(legacy['aten::relu'].device_time_us);
    expect(device_clock_ns).toBeGreaterThan(0);
  });

  it('launches demangling kernels, a copy and a fill that the vendor library records', () => {
    const { capture } = get();
    const of = (kind: number) =>
      Array.from({ length: capture.length }, (_, i) => i).filter((i) => capture.kind[i] === kind);
    const kernels = of(EVENT.kernel);
    // relu(a @ b).sum().cpu(), then torch.zeros: GEMM, relu, sum; one device-to-host copy; one memset.
    expect(kernels.map((i) => capture.names[capture.name[i]]).sort()).toEqual([GEMM, RELU, SUM].sort());
    expect(of(EVENT.memcpy).length).toBe(1);
    expect(of(EVENT.memset).length).toBe(1);
    const duration = (name: string) => {
      const i = kernels.find((k) => capture.names[capture.name[k]] === name)!;
      return capture.end[i] - capture.start[i];
    };
    expect(duration(GEMM)).toBeGreaterThan(duration(RELU));
  });

  it('puts device kernels into torch.profiler trace through the Kineto adaptor', () => {
    const { result } = get();
    expect(result.adaptor).toBe(true);
    const trace = JSON.parse(readFileSync(result.trace!, 'utf8')) as {
      traceEvents: { cat?: string; name: string }[];
    };
    const kernels = trace.traceEvents.filter((e) => e.cat === 'kernel').map((e) => e.name);
    expect(kernels).toContain(GEMM);
    expect(kernels).toContain(RELU);
    expect(trace.traceEvents.some((e) => e.cat === 'gpu_memcpy')).toBe(true);
  });

  it('passes the parity and contract checks on that trace (ROCm: only its by-design differences)', () => {
    const check = spawnSync(process.execPath, [BIN, 'check', get().result.trace!, '--json'], {
      encoding: 'utf8',
    });
    const report = JSON.parse(check.stdout) as {
      results: { id: string; status: string; summary: string }[];
      totals: { requiredFailed: number };
    };
    const r = Object.fromEntries(report.results.map((x) => [x.id, x]));
    // ROCm and Ascend declare no memset capability: P1 shows the missing gpu_memset as their difference.
    expect(r.P1.status).toBe(family === 'cupti' ? 'pass' : 'info');
    for (const id of ['P2', 'P4', 'P7', 'K1', 'K2', 'K4', 'K5', 'K6', 'K7', 'K9', 'K10', 'K12', 'X3'])
      expect(r[id].status, `${id}: ${r[id].summary}`).toBe('pass');
    expect(r.P4.summary).toMatch(/^aten::mm: [\d.]+ µs self device time = Σ of \d+ linked device events$/);
    expect(r.X3.summary).toMatch(/\(\d+ by External id, 0 by enclosure\)/);
    if (family === 'roctracer') {
      expect(r.P3.status, r.P3.summary).toBe('info');
      expect(r.P3.summary).not.toMatch(/\b(block|grid)\b/);
    }
    expect(report.totals.requiredFailed).toBe(0);
  });
});

describe('the flagos backend without a vendor library', () => {
  it('stops at import with one line saying what is missing', () => {
    const run = runPython(WORKLOAD, { FLAGOS_TRACER_LIBRARY: undefined });
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toBe(
      'FLAGOS_TRACER_LIBRARY is not set: the flagos test backend needs a fake vendor library',
    );
  });
});

describe('the example training script', () => {
  it('trains a 2-layer MLP on flagos for 10 steps and prints a falling loss', () => {
    const run = runPython(EXAMPLE, { FLAGOS_TRACER_LIBRARY: ensureFakeCupti() });
    expect(run.status, run.stderr).toBe(0);
    const losses = [...run.stdout.matchAll(/^step (\d+) loss (\d+\.\d+)$/gm)].map((m) => Number(m[2]));
    expect(losses).toHaveLength(10);
    expect(losses[9]).toBeLessThan(losses[0]);
  }, 120_000);
});

describe('flagprof profile on a script that brings its own PrivateUse1 device', () => {
  const session = path.join(mkdtempSync(path.join(os.tmpdir(), 'flagprof-privateuse1-profile-')), 'session');

  it('follows the device from the statement after its import: kernels under their ops and lines, by External id', () => {
    const env = {
      ...process.env,
      FLAGOS_TRACER_LIBRARY: ensureFakeCupti(),
      PYTHONPATH: path.join(ROOT, 'test', 'privateuse1'),
    };
    const run = spawnSync(
      process.execPath,
      [BIN, 'profile', '--python', PYTHON, '--out', session, '--no-flagos-trace', '--json', '--', EXAMPLE],
      { encoding: 'utf8', env, timeout: 400_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const record = JSON.parse(readFileSync(path.join(session, 'session.json'), 'utf8')) as {
      mode: { chosen: string; reason: string };
      activities: string[];
    };
    expect(record.mode.chosen).toBe('kineto');
    expect(record.mode.reason).toBe(
      "the script registered the PrivateUse1 device 'flagos': its backend's Kineto profiler traces it",
    );
    expect(record.activities).toEqual(['CPU', 'PrivateUse1:flagos']);
    const summary = JSON.parse(run.stdout) as {
      device_events: { total: number; by_provenance: { external_id: number; enclosure: number } };
      lines: { file: string; line: number; device_self_us: number }[];
      ops: { name: string; device_self_us: number }[];
    };
    const device = summary.device_events;
    expect(device.total).toBeGreaterThan(100);
    expect(device.by_provenance.enclosure).toBe(0);
    expect(device.by_provenance.external_id).toBe(device.total);
    const top = summary.lines[0];
    expect(path.basename(top.file)).toBe('train.py');
    // loss.backward(): the backward GEMMs.
    const backward = readFileSync(EXAMPLE, 'utf8')
      .split('\n')
      .findIndex((line) => line.trim() === 'loss.backward()');
    expect(top.line).toBe(backward + 1);
    expect(top.device_self_us).toBeGreaterThan(0);
    expect(summary.ops.find((o) => o.name === 'aten::mm')!.device_self_us).toBeGreaterThan(0);
    const check = spawnSync(process.execPath, [BIN, 'check', session, '--json'], { encoding: 'utf8' });
    expect(check.status, check.stdout).toBe(0);
    expect((JSON.parse(check.stdout) as { totals: { requiredFailed: number } }).totals.requiredFailed).toBe(
      0,
    );
  }, 420_000);

  it('opens in the timeline with the GEMM linked to its op by a flow arrow (screenshot)', async () => {
    const report = path.join(path.dirname(session), 'report.html');
    const made = spawnSync(process.execPath, [BIN, 'report', session, '--out', report], { encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
      await page.goto(`file://${report}`);
      await page.waitForFunction(() => window.flagprofTimeline !== undefined);
      await page.locator('#search').click();
      await page.keyboard.type('cutlass_80_tensorop_s1688gemm_128x128');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('#search-count').innerText()).toMatch(/^1 of [1-9]\d*/);
      const details = await page.locator('#details').innerText();
      expect(details).toContain('Launching op');
      expect(await page.locator('#details a.slice-link').first().innerText()).toBe('aten::mm');
      await page.waitForTimeout(100);
      const flows = await page.evaluate(() => window.flagprofTimeline!.view.stats.flows);
      expect(flows).toBeGreaterThanOrEqual(1);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'privateuse1-timeline.png') });
    } finally {
      await browser.close();
    }
  }, 120_000);
});
