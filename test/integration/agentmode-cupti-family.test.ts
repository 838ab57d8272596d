/**
 * What only the CUPTI family's vendors do, in agent mode with their FAKE libraries and real torch (the table suite,
 * agentmode-vendors.test.ts, holds what every vendor does): PPU's driver and correlation record per runtime call and
 * its detection; TOPSPTI's torch ids taken at API enter, its affine device clock, its own environment names and a
 * release that calls no callbacks; MUPTI's monotonic clock and its missing external-correlation API; MCPTI's
 * untimed records; FLAGOS_ACCELERATOR choosing each vendor and refusing a neighbour's library.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseLine } from '../../extension/bringup/diagnostics';
import { runChecks } from '../../extension/analysis/checks';
import { CaptureEventKind } from '../../extension/shared/kinds';
import { loadAddon, type DecodedCapture } from '../../extension/import/addon';
import { SliceKind } from '../../extension/model/profile';
import {
  deviceSlices,
  expectFlowsPaired,
  expectRecordedLinesKnown,
  openAgentSession,
  runAgentWorkload,
  argsAt,
  type AgentSession,
  type WorkloadRun,
} from '../helpers/capture';
import {
  PYTHON,
  ROOT,
  ensureFakeCupti,
  ensureFakeMcpti,
  ensureFakeMupti,
  ensureFakeTopspti,
  ensureNativeBuilt,
} from '../helpers/native';

const workload = (key: string) => path.join(ROOT, 'test', `fake-${key}`, 'workload.py');
const decode = (run: WorkloadRun): DecodedCapture =>
  loadAddon().decodeCapture(path.join(run.dir, 'capture.fpc'), { args: true });
const named = (c: DecodedCapture, name: string) =>
  [...Array(c.length).keys()].filter((i) => c.names[c.name[i]] === name);
const ofKind = (c: DecodedCapture, kind: CaptureEventKind) =>
  [...Array(c.length).keys()].filter((i) => c.kind[i] === kind);

function run(key: string, library: string, env: Record<string, string>, args: string[] = []): WorkloadRun {
  const r = runAgentWorkload(workload(key), library, env, args);
  expect(r.status, r.stderr).toBe(0);
  return r;
}

beforeAll(() => {
  if (!PYTHON) throw new Error('no Python: run scripts/setup-python.sh first');
  ensureNativeBuilt();
});

describe('PPU: the CUPTI-compatible library, its dense buffers and its detection', () => {
  let pushed: WorkloadRun;
  let session: AgentSession;
  let c: DecodedCapture;

  beforeAll(async () => {
    const library = ensureFakeCupti();
    const sdk = mkdtempSync(path.join(os.tmpdir(), 'ppu-sdk-'));
    pushed = run('cupti', library, { FAKE_CUPTI_PPU: '1', PPU_SDK: sdk, FLAGOS_TRACE: '0' }, [
      '--push-correlation',
    ]);
    session = await openAgentSession(pushed.dir);
    c = decode(pushed);
  }, 300_000);

  it('keeps a driver record for every runtime call, under its own correlation id, and every device record', () => {
    const runtimes = ofKind(c, CaptureEventKind.Runtime);
    const drivers = ofKind(c, CaptureEventKind.Driver);
    expect(runtimes.length).toBeGreaterThan(10);
    expect(drivers.length).toBe(runtimes.length);
    expect(c.counts.kernel).toBe(11);
    const runtimeIds = new Set(runtimes.map((i) => c.correlation[i]));
    for (const d of drivers) expect(runtimeIds.has(c.correlation[d])).toBe(false);
    // An id pushed around each GEMM launch: a correlation record for the runtime call and for its driver call.
    expect(c.counts.externalCorrelation).toBe(10);
    const launches = named(c, 'cudaLaunchKernel').filter((i) => !Number.isNaN(c.externalId[i]));
    expect(launches.map((i) => c.externalId[i])).toEqual([0, 2, 4, 6, 8]);
    const gemms = ofKind(c, CaptureEventKind.Kernel).filter((k) => c.names[c.name[k]].includes('cutlass'));
    expect(gemms.map((k) => c.externalId[k])).toEqual([0, 2, 4, 6, 8]);
  });

  it('starts each device event’s one flow on its runtime call, never on the driver call', () => {
    const { profile, analysis } = session;
    expectFlowsPaired(profile, analysis);
    const drivers = [...Array(profile.slices.length).keys()].filter(
      (i) => profile.slices.kind[i] === SliceKind.Driver,
    );
    expect(drivers.length).toBeGreaterThan(10);
    for (const d of deviceSlices(profile))
      expect(profile.slices.kind[analysis.runtimeOf[d]]).toBe(SliceKind.Runtime);
  });

  it('is judged by the PPU row, from the SDK the process had, not by NVIDIA’s', () => {
    const report = runChecks(session.profile, session.analysis, { captureMode: 'agent' });
    expect(report.platform).toBe('ppu');
    expect(report.platformReason).toMatch(/PPU_SDK is set/);
    const status = Object.fromEntries(report.results.map((r) => [r.id, r.status]));
    expect(status.K8).toBe('skip'); // PPU declares no fills
    for (const id of ['P2', 'K5', 'P7', 'K10', 'K7']) expect(status[id], id).toBe('pass');
  });

  it('FLAGOS_ACCELERATOR=ppu binds CUPTI and names the platform', async () => {
    const r = run('cupti', ensureFakeCupti(), { FLAGOS_ACCELERATOR: 'ppu', FLAGOS_TRACE: '0' });
    const s = await openAgentSession(r.dir);
    expect(s.capture.vendor).toBe('cupti');
    const report = runChecks(s.profile, s.analysis, { captureMode: 'agent' });
    expect([report.platform, report.platformReason]).toEqual([
      'ppu',
      'the recorded process: FLAGOS_ACCELERATOR=ppu',
    ]);
  }, 120_000);
});

describe('TOPSPTI: torch ids at API enter, the device clock, its own variables', () => {
  it('maps the device clock affinely: a kernel keeps its real duration, not the device clock’s 0.1 % more', async () => {
    const r = run('topspti', ensureFakeTopspti(), { FLAGOS_TRACE: '0' });
    const { profile, analysis } = await openAgentSession(r.dir);
    const gemms = deviceSlices(profile).filter((d) => profile.nameOf(d) === 'topsblas_sgemm_128x128_nn');
    expect(gemms).toHaveLength(5);
    for (const g of gemms) {
      const duration = profile.slices.dur[g]; // ns
      expect(Math.abs(duration - 20_000), `${duration} ns`).toBeLessThan(5); // offset alone: 20 020 ns
      // After its launch began, and within a millisecond of it.
      const launch = analysis.runtimeOf[g];
      expect(profile.slices.start[g]).toBeGreaterThan(profile.slices.start[launch]);
      expect(profile.slices.start[g] - profile.slices.start[launch]).toBeLessThan(1_000_000);
    }
  }, 120_000);

  it('records device work without External ids when no callback comes, and says why', () => {
    const r = run('topspti', ensureFakeTopspti(), { FAKE_TOPSPTI_NO_CALLBACKS: '1', FLAGOS_TRACE: 'on' }, [
      '--push-correlation',
    ]);
    const c = decode(r);
    expect(c.counts.kernel).toBe(11);
    expect(c.counts.externalCorrelation).toBe(0);
    expect([...c.externalId].every((id) => Number.isNaN(id))).toBe(true);
    expect(r.stderr).toMatch(/\[flagos\] TOPSPTI delivered no API callbacks during the session/);
    const recorded = c.diagnostics.filter((d) => d.fromCapture);
    expect(recorded.map((d) => d.code)).toContain('A25');
    expectRecordedLinesKnown(c);
    const a25 = parseLine(recorded.find((d) => d.code === 'A25')!.message);
    expect(a25.severity).toBe('warning');
    expect(a25.message).toMatch(/by time alone \(no External ids\)/);
  }, 120_000);

  it('finds its library through FLAGOS_TOPSPTI_LIBRARY and prints its lines with FLAGOS_TOPSPTI_DEBUG=1', () => {
    const library = ensureFakeTopspti();
    const r = run('topspti', library, {
      FLAGOS_TRACER_LIBRARY: '',
      FLAGOS_TOPSPTI_LIBRARY: library,
      FAKE_LIBRARY: library,
      FLAGOS_TOPSPTI_DEBUG: '1',
      FLAGOS_ACCELERATOR: 'gcu',
    });
    const c = decode(r);
    expect(c.vendor).toBe('topspti');
    expect(c.library).toBe(library);
    expect(c.platform).toBe('gcu');
    expect(r.stderr).toMatch(/\[flagos\] TOPSPTI has no external-correlation API/);
  }, 120_000);
});

describe('MUPTI: the monotonic clock, FLAGOS_ACCELERATOR=musa, no external-correlation API', () => {
  it('puts MUSA work on the host timeline, and FLAGOS_ACCELERATOR=musa names the platform', async () => {
    const r = run('mupti', ensureFakeMupti(), { FLAGOS_ACCELERATOR: 'musa', FLAGOS_TRACE: '0' });
    const { profile, analysis, capture } = await openAgentSession(r.dir);
    expect([capture.vendor, capture.platform]).toEqual(['mupti', 'musa']);
    const gemms = deviceSlices(profile).filter((d) => profile.nameOf(d) === 'mublas_sgemm_128x128x8_nn');
    expect(gemms).toHaveLength(5);
    for (const g of gemms) {
      const launch = analysis.runtimeOf[g];
      expect(profile.slices.start[g]).toBeGreaterThan(profile.slices.start[launch]);
      expect(profile.slices.start[g] - profile.slices.start[launch]).toBeLessThan(1_000_000);
      expect(profile.nameOf(analysis.opOf[g])).toBe('aten::mm');
    }
    expect(runChecks(profile, analysis, { captureMode: 'agent' }).platform).toBe('musa');
  }, 120_000);

  it('a MUPTI without external correlation: the capture is kept, and a push says what failed', () => {
    const library = ensureFakeMupti();
    const plain = run('mupti', library, { FAKE_MUPTI_NO_EXTERNAL: '1', FLAGOS_TRACE: '0' });
    expect(decode(plain).counts.kernel).toBe(11);
    const pushed = runAgentWorkload(workload('mupti'), library, { FAKE_MUPTI_NO_EXTERNAL: '1' }, [
      '--push-correlation',
    ]);
    expect(pushed.status).not.toBe(0);
    expect(pushed.stderr).toMatch(/push_correlation.*muptiActivityPushExternalCorrelationId failed with 43/);
    expect(pushed.stderr).not.toMatch(/Segmentation|core dumped/);
  }, 120_000);
});

describe('MCPTI: occupancy from the MetaX runtime, untimed records; FLAGOS_ACCELERATOR refuses a neighbour’s library', () => {
  it('estimates occupancy from wcudaDeviceGetAttribute, with MetaX’s 64-wide waves, and none when it refuses', () => {
    const library = ensureFakeMcpti();
    const c = decode(run('mcpti', library, { FLAGOS_TRACE: '0' }));
    const gemm = named(c, 'mcblas_sgemm_128x128x8_nn_align1')[0];
    const args = argsAt(c, gemm);
    // 4 blocks of 256 threads on 104 units: 4/104 blocks and 4 * 256/64 / 104 waves per unit (32-wide: twice that).
    expect(args['blocks per SM']).toBeCloseTo(4 / 104, 5);
    expect(args['warps per SM']).toBeCloseTo(16 / 104, 5);
    expect(args['est. achieved occupancy %']).toBe(0); // 0.5 %, printed as Kineto prints it: whole percent
    const refused = decode(run('mcpti', library, { FAKE_MCPTI_NO_ATTRIBUTES: '1', FLAGOS_TRACE: '0' }));
    const plain = argsAt(refused, named(refused, 'mcblas_sgemm_128x128x8_nn_align1')[0]);
    expect(Object.keys(plain)).not.toContain('warps per SM');
  }, 120_000);

  it('skips and counts device records with start = end = 0', () => {
    const c = decode(run('mcpti', ensureFakeMcpti(), { FAKE_MCPTI_NO_TIMING_EVERY: '3', FLAGOS_TRACE: '0' }));
    expect(c.counts.noTiming).toBeGreaterThan(0);
    const device = [...Array(c.length).keys()].filter((i) => c.kind[i] <= CaptureEventKind.Memset);
    // 13 device records in the window, every third untimed (the one before start() counts too).
    expect(device.length + c.counts.noTiming).toBe(13);
    for (const d of device) expect(c.end[d]).toBeGreaterThan(c.start[d]);
  }, 120_000);

  it('FLAGOS_ACCELERATOR=metax binds MCPTI; =cuda refuses MetaX’s library and says which API it wanted', () => {
    const library = ensureFakeMcpti();
    expect(decode(run('mcpti', library, { FLAGOS_ACCELERATOR: 'metax', FLAGOS_TRACE: '0' })).vendor).toBe(
      'mcpti',
    );
    const refused = runAgentWorkload(workload('mcpti'), library, { FLAGOS_ACCELERATOR: 'cuda' });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(
      /FLAGOS_TRACER_LIBRARY=.*libmcpti_fake\.so could not be loaded: it exports MCPTI, but FLAGOS_ACCELERATOR=cuda is traced by CUPTI/,
    );
  }, 120_000);
});
