/**
 * The Kineto adaptor (native/kineto) as torch's PrivateUse1 profiler plugin, built against the project's real
 * torch 2.13 and fed by the capture agent's one DeviceTracer over each FAKE vendor library: torch.profiler itself
 * records the device kernels, copies and sets with paired ac2g flows and External ids, key_averages() gives
 * aten::mm its own device time, and the parity and contract checks pass on the trace torch writes. The seed's §2
 * ablation (the vendor id passed to getLinkedActivity) is built too, and P4 catches it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLine } from '../../extension/bringup/diagnostics';

import { BIN, buildCli, makeTempDir } from '../helpers/cli';
import {
  AGENT,
  PYTHON,
  ROOT,
  ensureFakeCupti,
  ensureFakeMspti,
  ensureFakeRoctracer,
  ensureNativeBuilt,
} from '../helpers/native';

const WORKLOAD = path.join(ROOT, 'test', 'fake-vendor', 'kineto_workload.py');
const temp = makeTempDir('kineto-plugin');
// One plugin build per run, shared by the workloads (a fresh cache: the build itself is under test).
const CACHE = path.join(temp.dir, 'cache');
afterAll(() => temp.remove());

interface CheckResult {
  id: string;
  status: string;
  required: boolean;
  summary: string;
}
interface Averages {
  [op: string]: { count: number; self_device_us: number; device_us: number };
}
interface TraceEvent {
  ph: string;
  cat?: string;
  name: string;
  id?: number;
  ts: number;
  dur?: number;
  args?: Record<string, unknown>;
}

function runWorkload(fake: string, name: string, extra: string[] = [], env: Record<string, string> = {}) {
  const out = path.join(temp.dir, name);
  mkdirSync(out, { recursive: true });
  const run = spawnSync(PYTHON, [WORKLOAD, out, ...extra], {
    cwd: ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      FLAGOS_TRACER_LIBRARY: fake,
      FLAGPROF_AGENT_LIBRARY: AGENT,
      FLAGPROF_CACHE: CACHE,
      ...env,
    },
    timeout: 240_000,
  });
  expect(run.status, run.stderr).toBe(0);
  const trace = JSON.parse(readFileSync(path.join(out, 'trace.json'), 'utf8')) as {
    traceEvents: TraceEvent[];
  };
  const averages = JSON.parse(readFileSync(path.join(out, 'averages.json'), 'utf8')) as Averages;
  // Exit 1 when a required check fails: the report is on stdout either way.
  const check = spawnSync(process.execPath, [BIN, 'check', path.join(out, 'trace.json'), '--json'], {
    encoding: 'utf8',
  });
  expect(check.status, check.stderr).not.toBe(2);
  const report = JSON.parse(check.stdout) as {
    platform: string;
    results: CheckResult[];
    totals: { requiredFailed: number };
  };
  return { trace, averages, report, stderr: run.stderr, stdout: run.stdout };
}

function byId(results: CheckResult[]): Record<string, CheckResult> {
  return Object.fromEntries(results.map((r) => [r.id, r]));
}

/** aten::mm's self device time is exactly its 5 GEMMs of 20 µs, and equals the sum of the device events whose
 * External id is one of aten::mm's correlation ids (computed here from the trace, independently of torch). */
function expectMmOwnsItsKernels(trace: { traceEvents: TraceEvent[] }, averages: Averages): void {
  expect(averages['aten::mm'].count).toBe(5);
  expect(averages['aten::mm'].self_device_us).toBeCloseTo(100, 6);
  const mmIds = new Set(
    trace.traceEvents
      .filter((e) => e.cat === 'cpu_op' && e.name === 'aten::mm')
      .map((e) => e.args?.['External id']),
  );
  expect(mmIds.size).toBe(5);
  const device = trace.traceEvents.filter(
    (e) =>
      ['kernel', 'gpu_memcpy', 'gpu_memset'].includes(e.cat ?? '') &&
      e.ph === 'X' &&
      mmIds.has(e.args?.['External id']),
  );
  expect(device.length).toBe(5);
  expect(device.reduce((sum, e) => sum + (e.dur ?? 0), 0)).toBeCloseTo(100, 3);
  expect(averages['fakedev::relu'].self_device_us).toBeCloseTo(15, 6);
}

/** Every flow id has exactly one start (on a runtime event) and one finish (on a device event). */
function expectPairedFlows(trace: { traceEvents: TraceEvent[] }): number {
  const halves = new Map<number, string[]>();
  for (const e of trace.traceEvents)
    if (e.cat === 'ac2g') halves.set(e.id!, [...(halves.get(e.id!) ?? []), e.ph]);
  for (const [id, phases] of halves) expect(phases.sort(), `flow ${id}`).toEqual(['f', 's']);
  const deviceEvents = trace.traceEvents.filter((e) =>
    ['kernel', 'gpu_memcpy', 'gpu_memset'].includes(e.cat ?? ''),
  );
  expect(halves.size).toBe(deviceEvents.length);
  return halves.size;
}

beforeAll(() => {
  ensureNativeBuilt();
  buildCli();
});

describe("the Kineto adaptor as torch's PrivateUse1 profiler", () => {
  it("over the fake CUPTI: kernels, memcpy, memset and runtime in torch's own trace, linked by External id; every check passes", () => {
    const { trace, averages, report, stdout } = runWorkload(ensureFakeCupti(), 'cupti');
    expect(stdout).toContain('plugin: registered');
    const cats = new Set(trace.traceEvents.map((e) => e.cat));
    for (const c of ['kernel', 'gpu_memcpy', 'gpu_memset', 'privateuse1_runtime', 'cpu_op'])
      expect(cats).toContain(c);
    expect(expectPairedFlows(trace)).toBe(13);
    expectMmOwnsItsKernels(trace, averages);
    // The capture window left out the launch made before the profile.
    expect(trace.traceEvents.filter((e) => e.cat === 'kernel').length).toBe(11);
    // Metadata is valid JSON (the file parsed) with the torch-cuda kernel keys, cbid-named runtime calls.
    const gemm = trace.traceEvents.find(
      (e) => e.cat === 'kernel' && e.name.startsWith('void cutlass::Kernel<'),
    )!;
    expect(gemm.args).toMatchObject({ grid: [2, 2, 1], block: [256, 1, 1], stream: 7, device: 0 });
    expect(typeof gemm.args!['External id']).toBe('number');
    expect(trace.traceEvents.filter((e) => e.cat === 'privateuse1_runtime').map((e) => e.name)).toContain(
      'cudaLaunchKernel',
    );
    expect(report.platform).toBe('cuda');
    const r = byId(report.results);
    for (const id of ['P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'P7'])
      expect(r[id].status, `${id}: ${r[id].summary}`).toBe('pass');
    for (let k = 1; k <= 12; k++) expect(r[`K${k}`].status, `K${k}: ${r[`K${k}`].summary}`).toBe('pass');
    expect(r.X3.summary).toMatch(
      /^13 of 13 device events reach a CPU op \(13 by External id, 0 by enclosure\)/,
    );
    expect(report.totals.requiredFailed).toBe(0);
  }, 300_000);

  it('over the fake MSPTI: the same, the Ascend gaps shown as differences by design', () => {
    const { trace, averages, report } = runWorkload(ensureFakeMspti(), 'mspti');
    expectPairedFlows(trace);
    expectMmOwnsItsKernels(trace, averages);
    expect(report.platform).toBe('ascend');
    const r = byId(report.results);
    for (const id of ['P1', 'P2', 'P4', 'P7', 'K2', 'K3', 'K5', 'K6', 'K7', 'K9', 'K10', 'K12'])
      expect(r[id].status, `${id}: ${r[id].summary}`).toBe('pass');
    expect(r.P5.status).toBe('skip'); // CANN kernel names are not C++ symbols
    expect(r.P3.status).toBe('info'); // no CUDA launch geometry in CANN's kernel record, no cbid
    expect(r.P6.status).toBe('info');
    expect(report.totals.requiredFailed).toBe(0);
  }, 300_000);

  it('over the fake ROCtracer: linked and paired; kernels carry the grid and block of their launches (HIP API callback)', () => {
    const { trace, averages, report } = runWorkload(ensureFakeRoctracer(), 'roctracer');
    expectPairedFlows(trace);
    expectMmOwnsItsKernels(trace, averages);
    expect(report.platform).toBe('rocm');
    const r = byId(report.results);
    for (const id of ['P1', 'P2', 'P4', 'P5', 'P7', 'K2', 'K3', 'K5', 'K6', 'K7', 'K9', 'K10', 'K11', 'K12'])
      expect(r[id].status, `${id}: ${r[id].summary}`).toBe('pass');
    expect(r.P3.status, r.P3.summary).toBe('info'); // only what ROCm's row declares by design
    expect(r.P3.summary).not.toMatch(/\b(block|grid)\b/);
  }, 300_000);

  it('the seed §2 ablation (the vendor correlation id passed to getLinkedActivity) is caught by P4', () => {
    const { averages, report } = runWorkload(ensureFakeCupti(), 'ablation', [
      '--define',
      'FLAGOS_ABLATION_LINK_BY_VENDOR_ID',
    ]);
    const r = byId(report.results);
    expect(r.P4.status).toBe('fail');
    expect(r.P4.required).toBe(true);
    expect(r.P2.status).toBe('pass'); // the flows do not depend on the link: only device time is wrong
    expect(averages['fakedev::relu'].self_device_us).not.toBeCloseTo(15, 3);
  }, 300_000);

  it("prints the catalogue's adaptor lines with FLAGOS_TRACE on, every one known to the bring-up view", () => {
    const { stderr } = runWorkload(ensureFakeCupti(), 'trace-lines', [], { FLAGOS_TRACE: '1' });
    const lines = stderr.split('\n').filter((l) => l.startsWith('[flagos]'));
    const codes = new Set<string>();
    for (const l of lines) {
      const parsed = parseLine(l);
      expect(parsed.component, l).not.toBe('unknown');
      codes.add(parsed.code);
    }
    // A3 is the two-argument configure's line; torch 2.13's kineto calls the timed overload, which is silent.
    for (const code of ['A1', 'A4', 'A6', 'A7', 'A11', 'A16', 'A20', 'A21'])
      expect(codes, code).toContain(code);
    const a16 = lines.find((l) => l.includes('link candidates'))!;
    expect(a16).toMatch(
      /linked 26\/26 link candidates \(of 27 events, resolver=present\), dropped 0 outside window/,
    );
  }, 300_000);

  it('says in one line why the plugin cannot be built without a compiler', () => {
    const out = path.join(temp.dir, 'nocompiler');
    mkdirSync(out, { recursive: true });
    const run = spawnSync(PYTHON, [WORKLOAD, out], {
      cwd: ROOT,
      encoding: 'utf8',
      env: {
        ...process.env,
        FLAGOS_TRACER_LIBRARY: ensureFakeCupti(),
        FLAGPROF_AGENT_LIBRARY: AGENT,
        FLAGPROF_CACHE: path.join(temp.dir, 'empty-cache'),
        CXX: 'no-such-compiler',
      },
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(
      /PluginUnavailable: no C\+\+ compiler \(no-such-compiler\) to build the Kineto plugin against torch 2\.13/,
    );
  }, 120_000);
});
