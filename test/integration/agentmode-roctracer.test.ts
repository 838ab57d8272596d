/**
 * What only ROCtracer (AMD ROCm / Hygon DCU) does in agent mode, with the FAKE ROCtracer library (what every vendor
 * does is the table suite, agentmode-vendors.test.ts): the HSA clock's calibration, 64-bit correlation ids past
 * 2^32 - 1, kernels' launch dims from the HIP API callback (each launch call's own argument layout).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { loadAddon, type DecodedCapture } from '../../extension/import/addon';
import { mergeCapture } from '../../extension/import/capture';
import { Profile } from '../../extension/model/profile';
import { argsAt, decodeWithArgs, runAgentWorkload, type WorkloadRun } from '../helpers/capture';
import { PYTHON, ROOT, ensureFakeRoctracer, ensureNativeBuilt } from '../helpers/native';

const WORKLOAD = path.join(ROOT, 'test', 'fake-roctracer', 'workload.py');
const GEMM = 'Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1_SN_1LDSB0';
const RELU = 'vectorized_elementwise_kernel';
const SORT = 'bitonicSortKVInPlace';

/** What the workload launched each kernel with (its DIMS), by a part of the kernel's name. */
const LAUNCHED: [string, { grid: number[]; block: number[]; 'shared memory': number }][] = [
  [GEMM, { grid: [16, 8, 1], block: [256, 1, 1], 'shared memory': 8192 }], // hipExtModuleLaunchKernel: work-items
  [RELU, { grid: [256, 1, 1], block: [128, 1, 1], 'shared memory': 512 }], // hipLaunchKernel
  [SORT, { grid: [1, 1, 1], block: [1024, 1, 1], 'shared memory': 4096 }], // hipModuleLaunchKernel (--module-launch)
  ['', { grid: [3, 2, 1], block: [64, 4, 1], 'shared memory': 0 }], // the launch the runtime left unnamed
];

/** Every kernel of a capture with its name and launch metadata. */
function kernels(file: string): { name: string; args: Record<string, unknown> }[] {
  const c = decodeWithArgs(file);
  return [...Array(c.length).keys()]
    .filter((i) => c.kind[i] === 0)
    .map((i) => ({ name: c.names[c.name[i]], args: argsAt(c, i) }));
}

function launchedWith(name: string) {
  const hit = LAUNCHED.find(([part]) => (part ? name.includes(part) : name === 'kernel'));
  if (!hit) throw new Error(`kernel ${name} is not one the workload launches`);
  return hit[1];
}

function runWorkload(env: Record<string, string>, args: string[] = []): WorkloadRun {
  return runAgentWorkload(WORKLOAD, ensureFakeRoctracer(), env, args);
}

let plain: WorkloadRun;
let wide: WorkloadRun;
let noCallbacks: WorkloadRun;
let capture: DecodedCapture;

beforeAll(() => {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/setup-python.sh first`);
  ensureNativeBuilt();
  plain = runWorkload({ FLAGOS_TRACE: '0' }, ['--module-launch']);
  // Correlation ids that cross 2^32 - 1 partway through the run.
  wide = runWorkload({ FAKE_ROCTRACER_FIRST_CORRELATION: String(2 ** 32 - 8), FLAGOS_TRACE: '1' }, [
    '--push-correlation',
  ]);
  noCallbacks = runWorkload({ FAKE_ROCTRACER_NO_CALLBACKS: '1', FLAGOS_TRACE: '1' });
  for (const run of [plain, wide, noCallbacks]) expect(run.status, run.stderr).toBe(0);
  capture = loadAddon().decodeCapture(path.join(plain.dir, 'capture.fpc'));
}, 300_000);
describe('agent mode with the fake ROCtracer library', () => {
  it('maps the HSA clock onto realtime through the calibration pairs', () => {
    expect(capture.calibration.length).toBeGreaterThanOrEqual(3); // header, start, stop
    const [header] = capture.calibration;
    // The fake's HSA clock is CLOCK_MONOTONIC: far from realtime, so unmapped times would land decades away.
    expect(header.realtimeNs - header.vendorNs > 1_000_000_000_000_000n).toBe(true);
  });

  it('folds 64-bit correlation ids past 2^32 - 1 into 32 bits, and says so once', () => {
    const c = loadAddon().decodeCapture(path.join(wide.dir, 'capture.fpc'));
    expect(c.counts.correlationWrapped).toBeGreaterThan(0);
    expect(c.diagnostics.filter((d) => d.code === 'correlation-wrap')).toHaveLength(1);
    expect(c.counts.kernel).toBe(12);
    const gemmIds = [...Array(c.length).keys()]
      .filter((i) => c.names[c.name[i]] === GEMM)
      .map((i) => [c.correlation[i], c.externalId[i]]);
    expect(gemmIds[0][0]).toBe(2 ** 32 - 7); // 2 ** 32 - 8 went to the launch before start()
    expect(gemmIds[0][1]).toBe(0);
    expect(gemmIds[4][0]).toBeGreaterThan(0);
    expect(gemmIds[4][0]).toBeLessThan(16);
    expect(gemmIds[4][1]).toBe(8);
    const p = new Profile('wide');
    mergeCapture(p, path.join(wide.dir, 'capture.fpc'));
    const a = analyze(p);
    expect(a.flows.byCategory.ac2g?.finishOnly ?? 0).toBe(0);
    expect(a.flows.byCategory.ac2g?.startOnly ?? 0).toBe(0);
  });

  it('gives every kernel the grid, block and shared memory it was launched with, whatever the launch call', () => {
    const found = kernels(path.join(plain.dir, 'capture.fpc'));
    expect(found).toHaveLength(12);
    for (const k of found) expect(k.args, k.name).toMatchObject(launchedWith(k.name));
    // Each launch layout was read: the three calls named by roctracer_op_string, not by their ids.
    const names = new Set(capture.names);
    for (const call of ['hipLaunchKernel', 'hipModuleLaunchKernel', 'hipExtModuleLaunchKernel'])
      expect(names.has(call), call).toBe(true);
    // ROCtracer reports no register count, so none is made up.
    expect(found.some((k) => 'registers per thread' in k.args)).toBe(false);
  });

  it('joins the dims by the full 64-bit correlation id, past 2^32 - 1 too', () => {
    const found = kernels(path.join(wide.dir, 'capture.fpc'));
    expect(found).toHaveLength(12);
    for (const k of found) expect(k.args, k.name).toMatchObject(launchedWith(k.name));
  });

  it('keeps every kernel, without grid or block, where the HIP API callback cannot be enabled, and says so once', () => {
    const found = kernels(path.join(noCallbacks.dir, 'capture.fpc'));
    expect(found).toHaveLength(12);
    for (const k of found)
      expect(Object.keys(k.args).sort()).toEqual(['correlation', 'device', 'kind', 'stream']);
    const c = loadAddon().decodeCapture(path.join(noCallbacks.dir, 'capture.fpc'));
    expect(c.diagnostics.filter((d) => d.code === 'R38').map((d) => d.message)).toEqual([
      '[flagos] roctracer_enable_domain_callback(HIP_API) returned 1: kernels carry no grid or block',
    ]);
    expect(c.diagnostics.some((d) => d.code === 'R39')).toBe(false);
  });

  it('says with FLAGOS_TRACE on how many launches the callback saw and how many kernels it joined', () => {
    // The wide run traces.
    const c = loadAddon().decodeCapture(path.join(wide.dir, 'capture.fpc'));
    const line = c.diagnostics.find((d) => d.code === 'R39');
    expect(line?.message).toMatch(/ROCtracer launch dims: \d+ launches seen, 12 kernels joined$/);
  });
});
