/**
 * What only ROCtracer (AMD ROCm / Hygon DCU) does in agent mode, with the FAKE ROCtracer library (what every vendor
 * does is the table suite, agentmode-vendors.test.ts): the HSA clock's calibration, 64-bit correlation ids past
 * 2^32 - 1.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { loadAddon, type DecodedCapture } from '../../extension/import/addon';
import { mergeCapture } from '../../extension/import/capture';
import { Profile } from '../../extension/model/profile';
import { runAgentWorkload, type WorkloadRun } from '../helpers/capture';
import { PYTHON, ROOT, ensureFakeRoctracer, ensureNativeBuilt } from '../helpers/native';

const WORKLOAD = path.join(ROOT, 'test', 'fake-roctracer', 'workload.py');
const GEMM = 'Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1_SN_1LDSB0';

function runWorkload(env: Record<string, string>, args: string[] = []): WorkloadRun {
  return runAgentWorkload(WORKLOAD, ensureFakeRoctracer(), env, args);
}

let plain: WorkloadRun;
let wide: WorkloadRun;
let capture: DecodedCapture;

beforeAll(() => {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/setup-python.sh first`);
  ensureNativeBuilt();
  plain = runWorkload({ FLAGOS_TRACE: '0' });
  // Correlation ids that cross 2^32 - 1 partway through the run.
  wide = runWorkload({ FAKE_ROCTRACER_FIRST_CORRELATION: String(2 ** 32 - 8) }, ['--push-correlation']);
  for (const run of [plain, wide]) expect(run.status, run.stderr).toBe(0);
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
});
