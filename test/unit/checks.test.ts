import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { analyze } from '../../extension/analysis/analyze';
import type { CheckReport, CheckResult } from '../../extension/analysis/checks';
import { detectPlatform, parseBaseline, runChecks, shippedBaseline } from '../../extension/analysis/checks';
import { Profile } from '../../extension/model/profile';
import { checkTrace } from '../../extension/bringup/load';
import { importTrace } from '../../extension/import/kineto';
import type { FixtureOptions } from '../fixtures/checks-trace';
import { parityTrace } from '../fixtures/checks-trace';

/** Upstream's baseline, read in place from the shared reference folder next to the project. */
const UPSTREAM_BASELINE = path.resolve(__dirname, '../../../shared/reference/profiler_cuda_baseline.json');
const dir = mkdtempSync(path.join(tmpdir(), 'flagprof-checks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;

async function check(options: FixtureOptions = {}, platform = 'metax'): Promise<CheckReport> {
  const file = path.join(dir, `trace-${serial++}.json`);
  writeFileSync(file, parityTrace(options));
  const profile = await importTrace(file);
  return runChecks(profile, analyze(profile), { platform });
}

function result(report: CheckReport, id: string): CheckResult {
  const r = report.results.find((x) => x.id === id);
  if (!r) throw new Error(`no check ${id}`);
  return r;
}

function failing(report: CheckReport): string[] {
  return report.results.filter((r) => r.status === 'fail').map((r) => r.id);
}

describe('a correct PrivateUse1 trace of the parity workload', () => {
  it('passes every check', async () => {
    const report = await check();
    expect(report.results.map((r) => [r.id, r.status])).toEqual(report.results.map((r) => [r.id, 'pass']));
    expect(report.results.map((r) => r.id)).toEqual([
      'X1',
      'P1',
      'P2',
      'P3',
      'P4',
      'P5',
      'P6',
      'P7',
      'K1',
      'K2',
      'K3',
      'K4',
      'K5',
      'K6',
      'K7',
      'K8',
      'K9',
      'K10',
      'K11',
      'K12',
      'X2',
      'X3',
    ]);
    expect(report.totals).toEqual({ pass: 22, fail: 0, skip: 0, info: 0, requiredFailed: 0 });
    expect(report.window?.source).toBe('Trace span "PyTorch Profiler (0)"');
    expect(result(report, 'P4').counts).toMatchObject({
      selfDeviceUs: 2500,
      linkedDeviceUs: 2500,
      linkedEvents: 5,
    });
  });
});

describe('each check fails on the bug it guards', () => {
  it('P2/K5: flows keyed on the torch id', async () => {
    const report = await check({ flowsOnTorchId: true });
    for (const id of ['P2', 'K5']) {
      const r = result(report, id);
      expect(r.status).toBe('fail');
      expect(r.required).toBe(true);
      expect(r.hint).toMatch(/keyed on the torch id/);
      expect(r.examples.length).toBeGreaterThan(0);
      expect(r.examples.length).toBeLessThanOrEqual(10);
    }
  });

  it('P2 on a cuda_runtime trace: torch-cuda itself leaves finish-only halves, by design (info)', async () => {
    const report = await check({ runtimeCategory: 'cuda_runtime', launchlessFinishHalves: 4 }, 'cuda');
    const r = result(report, 'P2');
    expect(r.status).toBe('info');
    expect(r.required).toBe(false);
    expect(r.counts.finishOnlyOnRuntime).toBe(4);
    expect(r.byDesign).toMatch(
      /torch-cuda leaves finish-only halves on runtime calls that launch nothing \(4 here\)/,
    );
    expect(result(report, 'K3').status).toBe('skip');
    // The same halves on a PrivateUse1 trace are the tracer's fault.
    const own = result(await check({ launchlessFinishHalves: 4 }), 'P2');
    expect(own.required).toBe(true);
    expect(own.status).toBe('fail');
  });

  it('P4/K6/K9/X3: linked-activity lookup on the vendor id drops External ids', async () => {
    const report = await check({ noExternalIdOnDevice: true });
    expect(result(report, 'P4').status).toBe('fail');
    expect(result(report, 'K6').status).toBe('fail');
    expect(result(report, 'K9').status).toBe('fail');
    expect(result(report, 'P3').summary).toMatch(/External id/);
  });

  it('P4/K6: launches stamped with the next op (stack not unwound)', async () => {
    const report = await check({ externalIdOfNextOp: true });
    expect(result(report, 'P4').status).toBe('fail');
    expect(result(report, 'K6').status).toBe('fail');
  });

  it('K6 on cuda is xfail upstream: a failure is not required there', async () => {
    const r = result(await check({ noExternalIdOnDevice: true }, 'cuda'), 'K6');
    expect(r.status).toBe('fail');
    expect(r.required).toBe(false);
  });

  it('P3: kernel metadata fields missing', async () => {
    const r = result(await check({ dropKernelKeys: ['blocks per SM', 'est. achieved occupancy %'] }), 'P3');
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('kernel lacks blocks per SM, est. achieved occupancy %');
    expect(r.hint).toMatch(/13 kernel metadata fields/);
  });

  it('P5/K11: mangled kernel names', async () => {
    const report = await check({ mangledKernels: true });
    for (const id of ['P5', 'K11']) {
      expect(result(report, id).status).toBe('fail');
      expect(result(report, id).hint).toMatch(/__cxa_demangle/);
      expect(result(report, id).examples[0].name).toMatch(/^_ZN/);
    }
  });

  it('P6/K12: every runtime name generic', async () => {
    const report = await check({ genericRuntimeNames: true });
    expect(result(report, 'P6').status).toBe('fail');
    expect(result(report, 'P6').hint).toMatch(/cbid .*table is not in effect/);
    const k12 = result(report, 'K12');
    expect(k12.status).toBe('fail');
    expect(k12.details.join('\n')).toMatch(/unresolved cbids \(cbid, count\): 211 ×11/);
  });

  it('P6/K3: no cbid arg', async () => {
    const report = await check({ noCbid: true });
    expect(result(report, 'P6').status).toBe('fail');
    expect(result(report, 'K3').status).toBe('fail');
    expect(result(await check({ noCbid: true }, 'ascend'), 'K3').status).toBe('pass');
  });

  it('P7/K10: device events from before the window (no capture-window filter)', async () => {
    const report = await check({ leakBeforeWindowUs: 5_000 });
    for (const id of ['P7', 'K10']) {
      const r = result(report, id);
      expect(r.status).toBe('fail');
      expect(r.counts.startEarly).toBe(1);
      expect(r.hint).toMatch(/no capture-window filter/);
      expect(r.examples[0].note).toMatch(/start -5000 µs from the window start/);
    }
  });

  it('X2/P7: CPU and device clocks 1.78e18 ns apart', async () => {
    const report = await check({ deviceClockShiftUs: -1.78e15 });
    expect(result(report, 'X2').status).toBe('fail');
    expect(result(report, 'X2').hint).toMatch(/MONOTONIC or BOOTTIME against kineto's REALTIME/);
    expect(result(report, 'P7').hint).toMatch(/clock domains/);
  });

  it('X1: bare metadata value makes the file invalid JSON', async () => {
    const file = path.join(dir, 'bare.json');
    const text = parityTrace({ bareMetadata: true });
    expect(() => JSON.parse(text)).toThrow();
    writeFileSync(file, text);
    const report = await checkTrace(file, { platform: 'metax' });
    const r = result(report, 'X1');
    expect(r.status).toBe('fail');
    expect(r.details.join('\n')).toContain('"queued"');
    expect(r.hint).toMatch(/§3.4/);
  });

  it('X1: a file the importer rejects gives a report, not an exception', async () => {
    const file = path.join(dir, 'cut.json');
    writeFileSync(file, parityTrace().slice(0, 500));
    const report = await checkTrace(file);
    expect(report.results).toHaveLength(1);
    expect(report.results[0]).toMatchObject({ id: 'X1', status: 'fail', required: true });
    expect(report.results[0].summary).toContain('cut.json');
  });

  it('P1/K8: no memset', async () => {
    const report = await check({ noMemset: true });
    expect(result(report, 'P1').status).toBe('fail');
    expect(result(report, 'P1').summary).toBe('missing gpu_memset');
    expect(result(report, 'K8').status).toBe('fail');
    expect(result(await check({ noMemset: true }, 'musa'), 'K8').status).toBe('skip');
  });

  it('K7: memcpy without bytes; K7 skipped where the platform declares no memcpy', async () => {
    expect(result(await check({ zeroBytesMemcpy: true }), 'K7').status).toBe('fail');
    expect(result(await check({ noMemcpy: true }), 'K7').status).toBe('fail');
    expect(result(await check({ noMemcpy: true }, 'dcu'), 'K7').status).toBe('skip');
  });

  it('K1/P7: no Trace span', async () => {
    const report = await check({ noTraceSpan: true });
    expect(result(report, 'K1').status).toBe('fail');
    expect(result(report, 'P7').summary).toBe('trace has no capture window');
  });

  it('K4: kernels without device/stream; K2: kernels without duration', async () => {
    expect(result(await check({ noDeviceStream: true }), 'K4').status).toBe('fail');
    expect(result(await check({ zeroDurationKernels: true }), 'K2').status).toBe('fail');
  });

  it('only the guarded checks fail', async () => {
    expect(failing(await check({ mangledKernels: true }))).toEqual(['P5', 'K11']);
    expect(failing(await check({ leakBeforeWindowUs: 5_000 }))).toEqual(['P7', 'K10']);
  });
});

describe('baselines', () => {
  it("accepts upstream's profiler_cuda_baseline.json as it is", () => {
    const b = parseBaseline(JSON.parse(readFileSync(UPSTREAM_BASELINE, 'utf8')), UPSTREAM_BASELINE);
    expect(b.argKeys.kernel).toHaveLength(13);
    expect(b.runtimeCatEquivalents).toEqual(['cuda_runtime', 'privateuse1_runtime']);
    expect(b.knownGap.overhead).toMatch(/OVERHEAD/);
  });

  it('the shipped baseline requires what upstream requires', () => {
    const shipped = shippedBaseline();
    const upstream = parseBaseline(JSON.parse(readFileSync(UPSTREAM_BASELINE, 'utf8')), 'upstream');
    expect(shipped.categories).toEqual(upstream.categories);
    expect(shipped.argKeys).toEqual(upstream.argKeys);
  });

  it('rejects a file that is not a baseline', () => {
    expect(() => parseBaseline({ categories: ['x'] }, 'b.json')).toThrow(
      /b.json: not a profiler baseline: "kernel_arg_keys"/,
    );
  });

  it('a stricter baseline makes P3 fail', async () => {
    const file = path.join(dir, 'strict.json');
    writeFileSync(file, parityTrace());
    const profile = await importTrace(file);
    const strict = {
      ...shippedBaseline(),
      argKeys: { ...shippedBaseline().argKeys, kernel: [...shippedBaseline().argKeys.kernel, 'occupancy'] },
    };
    const r = runChecks(profile, analyze(profile), { platform: 'metax', baseline: strict }).results.find(
      (x) => x.id === 'P3',
    )!;
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('kernel lacks occupancy');
  });
});

describe('platform', () => {
  it('an agent-mode capture recorded through MSPTI is Ascend, through ROCtracer DCU; device names still come first; else other', () => {
    const profile = new Profile('capture');
    expect(detectPlatform(profile).platform).toBe('other');
    profile.metadata.capture = { vendor: 'mspti' };
    expect(detectPlatform(profile)).toEqual({
      platform: 'ascend',
      reason: 'agent-mode capture recorded through MSPTI',
    });
    profile.metadata.capture = { vendor: 'roctracer' };
    expect(detectPlatform(profile)).toEqual({
      platform: 'dcu',
      reason: 'agent-mode capture recorded through ROCtracer',
    });
    profile.metadata.capture = { vendor: 'cupti' };
    expect(detectPlatform(profile).platform).toBe('other');
    profile.metadata.deviceProperties = [{ name: 'NVIDIA H100' }];
    expect(detectPlatform(profile).platform).toBe('cuda');
  });
});
