/**
 * Agent mode end to end for AMD ROCm / Hygon DCU, on a machine without either: a real Python + torch CPU workload
 * whose record_function ranges launch work through the FAKE ROCtracer library (test/fake-roctracer, built from
 * the tracer's mirror of the public ext/prof_protocol.h), captured by libflagprof_agent.so, decoded by the addon,
 * merged into the Kineto CPU trace and analysed.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { detectPlatform } from '../../extension/analysis/checks';
import type { Analysis } from '../../extension/analysis/types';
import { loadAddon, type DecodedCapture } from '../../extension/import/addon';
import { mergeCapture } from '../../extension/import/capture';
import { Profile, SliceKind } from '../../extension/model/profile';
import {
  deviceSlices,
  expectFlowsPaired,
  expectMergedInsideWindow,
  expectRecordedLinesKnown,
  openAgentSession,
  runAgentWorkload,
  type WorkloadRun,
} from '../helpers/capture';
import { PYTHON, ROOT, ensureFakeRoctracer, ensureNativeBuilt } from '../helpers/native';

const WORKLOAD = path.join(ROOT, 'test', 'fake-roctracer', 'workload.py');
const GEMM = 'Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1_SN_1LDSB0';
const SORT = 'void at::native::bitonicSortKVInPlace<float>(float*, int)';
const EXPECTED_OP: Record<string, string> = {
  [GEMM]: 'fake::matmul',
  [SORT]: 'fake::sort',
  'Memset (Device)': 'fake::sort',
  'Memcpy DtoH (Device -> Host)': 'fake::to_cpu',
};

function runWorkload(env: Record<string, string>, args: string[] = []): WorkloadRun {
  return runAgentWorkload(WORKLOAD, ensureFakeRoctracer(), env, args);
}

let plain: WorkloadRun;
let pushed: WorkloadRun;
let wide: WorkloadRun;
let profile: Profile;
let analysis: Analysis;
let capture: DecodedCapture;

beforeAll(async () => {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/setup-python.sh first`);
  ensureNativeBuilt();
  plain = runWorkload({ FLAGOS_TRACE: '0' });
  pushed = runWorkload({ FLAGOS_TRACE: 'on' }, ['--push-correlation']);
  // Correlation ids that cross 2^32 - 1 partway through the run.
  wide = runWorkload({ FAKE_ROCTRACER_FIRST_CORRELATION: String(2 ** 32 - 8) }, ['--push-correlation']);
  for (const run of [plain, pushed, wide]) expect(run.status, run.stderr).toBe(0);
  ({ profile, analysis, capture } = await openAgentSession(plain.dir));
}, 300_000);

describe('agent mode with the fake ROCtracer library', () => {
  it('says the capture is ROCtracer, judged as DCU, with device tracks named as ROCm traces name them', () => {
    expect(capture.vendor).toBe('roctracer');
    expect(capture.library).toMatch(/libroctracer64_fake\.so$/);
    expect(capture.apiVersion).toBe(401);
    expect(profile.metadata.capture).toMatchObject({ vendor: 'roctracer' });
    const devices = deviceSlices(profile);
    const track = profile.tracks[profile.slices.track[devices[0]]];
    expect(track).toMatchObject({ kind: 'device', processName: 'GPU 0', name: 'stream 0' });
    const runtime = [...Array(profile.slices.length).keys()].find(
      (i) => profile.slices.kind[i] === SliceKind.Runtime && profile.categoryOf(i) === 'cuda_runtime',
    );
    expect(runtime).toBeDefined();
    expect(detectPlatform(profile)).toEqual({
      platform: 'dcu',
      reason: 'agent-mode capture recorded through ROCtracer',
    });
  });

  it('maps the HSA clock onto realtime through the calibration pairs', () => {
    expect(capture.calibration.length).toBeGreaterThanOrEqual(3); // header, start, stop
    const [header] = capture.calibration;
    // The fake's HSA clock is CLOCK_MONOTONIC: far from realtime, so unmapped times would land decades away.
    expect(header.realtimeNs - header.vendorNs > 1_000_000_000_000_000n).toBe(true);
  });

  it('links each device event to the op whose range launched it, through its HIP call', () => {
    const devices = deviceSlices(profile);
    // gemm, relu, sort, memset, memcpy, and one kernel launched outside every range (the pre-start one is out)
    expect(devices.length).toBe(5 + 5 + 1 + 1 + 1 + 1);
    let unnamed = 0;
    let relu = 0;
    for (const d of devices) {
      const name = profile.nameOf(d);
      const runtime = analysis.runtimeOf[d];
      expect(runtime, name).toBeGreaterThanOrEqual(0);
      expect(profile.slices.kind[runtime]).toBe(SliceKind.Runtime);
      expect(profile.slices.correlation[runtime]).toBe(profile.slices.correlation[d]);
      if (name === 'kernel') {
        unnamed++;
        expect(profile.nameOf(runtime)).toBe('hipLaunchKernel');
        continue;
      }
      const op = analysis.opOf[d];
      expect(op, name).toBeGreaterThanOrEqual(0);
      if (name.includes('vectorized_elementwise_kernel')) {
        relu++;
        expect(profile.nameOf(op)).toBe('fake::relu');
        continue;
      }
      const expected = EXPECTED_OP[name];
      expect(expected, name).toBeDefined();
      expect(profile.nameOf(op)).toBe(expected);
    }
    expect([unnamed, relu]).toEqual([1, 5]);
  });

  it('pairs every flow, keyed on the vendor correlation id', () => {
    expectFlowsPaired(profile, analysis);
  });

  it('keeps every merged event strictly inside the capture window', () => {
    expect(expectMergedInsideWindow(profile, capture, 'cuda_runtime')).toBe(14 + 15);
    // The launch before start() was flushed at start() and never copied.
    expect(capture.counts.kernel).toBe(5 + 5 + 1 + 1);
  });

  it('names HIP calls from the ids resolved after the final flush', () => {
    const runtimes = new Set<string>();
    for (let i = 0; i < profile.slices.length; i++)
      if (profile.slices.kind[i] === SliceKind.Runtime && profile.categoryOf(i) === 'cuda_runtime')
        runtimes.add(profile.nameOf(i));
    expect(runtimes).toEqual(
      new Set([
        'hipLaunchKernel',
        'hipExtModuleLaunchKernel',
        'hipMemsetAsync',
        'hipMemcpyAsync',
        'hipStreamSynchronize',
      ]),
    );
    expect([...capture.cbid].some((v) => v !== 0)).toBe(true); // the HIP API ids are kept
  });

  it('carries what ROCtracer provides as metadata, under the names of ROCm Kineto traces', () => {
    const devices = deviceSlices(profile);
    const gemm = devices.find((d) => profile.nameOf(d) === GEMM)!;
    expect(profile.argsOf(gemm)).toEqual({
      device: 0,
      stream: 0,
      kind: 'Dispatch Kernel',
      correlation: profile.slices.correlation[gemm],
    });
    const memcpy = devices.find((d) => profile.slices.kind[d] === SliceKind.Memcpy)!;
    expect(profile.argsOf(memcpy)).toMatchObject({ bytes: 4096, kind: 'DtoH', stream: 0 });
    const memset = devices.find((d) => profile.slices.kind[d] === SliceKind.Memset)!;
    expect(profile.argsOf(memset)).toMatchObject({ bytes: 64, kind: 'Fill Buffer' });
    const api = analysis.runtimeOf[gemm];
    expect(Object.keys(profile.argsOf(api)).sort()).toEqual(['cid', 'correlation']);
  });

  it('records pushed correlation ids as External ids, 0 included', () => {
    const c = loadAddon().decodeCapture(path.join(pushed.dir, 'capture.fpc'), { args: true });
    expect(c.vendor).toBe('roctracer');
    const launchIds = [...Array(c.length).keys()]
      .filter((i) => c.names[c.name[i]] === 'hipExtModuleLaunchKernel' && !Number.isNaN(c.externalId[i]))
      .map((i) => c.externalId[i]);
    expect(launchIds).toEqual([0, 2, 4, 6, 8]);
    for (let i = 0; i < c.length; i++) {
      const name = c.names[c.name[i]];
      if (name === GEMM) expect([0, 2, 4, 6, 8]).toContain(c.externalId[i]);
      if (name === 'hipLaunchKernel') expect(c.externalId[i]).toBeNaN();
    }
    expect(c.counts.externalCorrelation).toBe(5);
  });

  it('keeps 64-bit correlation ids past 2^32 - 1 modulo 2^32, and says so once', () => {
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

  it('prints and records the ROCtracer lines when FLAGOS_TRACE is on, and nothing gated when it is off', () => {
    expect(pushed.stderr).toMatch(
      /\[flagos\] bound roctracer_enable_domain_activity_expl -> .*libroctracer64_fake\.so \(ROCtracer version 401\)/,
    );
    expect(pushed.stderr).toContain('[flagos] ROCtracer session started');
    expect(pushed.stderr).toMatch(
      /\[flagos\] ROCtracer activity setup results: POOL=0, HIP_OPS=0, HIP_API=0, EXT_API=0, FLUSH=0$/m,
    );
    const c = loadAddon().decodeCapture(path.join(pushed.dir, 'capture.fpc'));
    const codes = c.diagnostics.filter((d) => d.fromCapture).map((d) => d.code);
    expect(codes).toEqual(expect.arrayContaining(['R24', 'R28', 'R29', 'R30', 'R31', 'R32', 'A4']));
    expectRecordedLinesKnown(c);
    expect(plain.stderr).not.toContain('[flagos]');
    expect(capture.diagnostics.filter((d) => d.fromCapture)).toEqual([]);
  });
});
