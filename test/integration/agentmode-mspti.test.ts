/**
 * Agent mode end to end for Huawei Ascend, on a machine without an NPU: a real Python + torch CPU workload whose
 * record_function ranges launch work through the FAKE MSPTI library (test/fake-mspti, built from the tracer's
 * mirror of the public mspti_activity.h), captured by libflagprof_agent.so, decoded by the addon, merged into
 * the Kineto CPU trace and analysed; and `flagprof profile --mode agent` on the same workload shape.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
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
import { PYTHON, ROOT, ensureFakeMspti, ensureNativeBuilt } from '../helpers/native';

const WORKLOAD = path.join(ROOT, 'test', 'fake-mspti', 'workload.py');
const EXPECTED_OP: Record<string, string> = {
  aclnnMatmul_MatMulCommon_MatMulV2: 'fake::matmul',
  aclnnRelu_ReluAiVector_Relu: 'fake::relu',
  aclnnSort_SortAiCore_Sort: 'fake::sort',
  Memset: 'fake::sort',
  'Memcpy DtoH': 'fake::to_cpu',
};

function runWorkload(env: Record<string, string>, args: string[] = []): WorkloadRun {
  return runAgentWorkload(WORKLOAD, ensureFakeMspti(), env, args);
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
  pushed = runWorkload({ FLAGOS_TRACE: 'on', FAKE_MSPTI_DROP_EVERY: '7' }, ['--push-correlation']);
  // Correlation ids that cross 2^32 - 1 partway through the run.
  wide = runWorkload({ FAKE_MSPTI_FIRST_CORRELATION: String(2 ** 32 - 8) }, ['--push-correlation']);
  for (const run of [plain, pushed, wide]) expect(run.status, run.stderr).toBe(0);
  ({ profile, analysis, capture } = await openAgentSession(plain.dir));
}, 300_000);

describe('agent mode with the fake MSPTI library', () => {
  it('says the capture is MSPTI and names the device tracks as Ascend traces do', () => {
    expect(capture.vendor).toBe('mspti');
    expect(capture.library).toMatch(/libmspti_fake\.so$/);
    expect(profile.metadata.capture).toMatchObject({ vendor: 'mspti' });
    const devices = deviceSlices(profile);
    const track = profile.tracks[profile.slices.track[devices[0]]];
    expect(track).toMatchObject({ kind: 'device', processName: 'NPU 0', name: 'Stream 3' });
    const runtime = [...Array(profile.slices.length).keys()].find(
      (i) => profile.slices.kind[i] === SliceKind.Runtime && profile.categoryOf(i) === 'privateuse1_runtime',
    );
    expect(runtime).toBeDefined();
  });

  it('links each device event to the op whose range launched it, through its API call', () => {
    const devices = deviceSlices(profile);
    // matmul, relu, sort, memset, memcpy, and one kernel launched outside every range (the pre-start one is out)
    expect(devices.length).toBe(5 + 5 + 1 + 1 + 1 + 1);
    let unnamed = 0;
    for (const d of devices) {
      const name = profile.nameOf(d);
      const runtime = analysis.runtimeOf[d];
      expect(runtime, name).toBeGreaterThanOrEqual(0);
      expect(profile.slices.kind[runtime]).toBe(SliceKind.Runtime);
      expect(profile.slices.correlation[runtime]).toBe(profile.slices.correlation[d]);
      if (name === 'kernel') {
        unnamed++;
        expect(profile.nameOf(runtime)).toBe('AscendRuntime'); // the vendor left both names out
        continue;
      }
      const expected = EXPECTED_OP[name];
      expect(expected, name).toBeDefined();
      const op = analysis.opOf[d];
      expect(op, name).toBeGreaterThanOrEqual(0);
      expect(profile.nameOf(op)).toBe(expected);
    }
    expect(unnamed).toBe(1);
  });

  it('pairs every flow, keyed on the vendor correlation id', () => {
    expectFlowsPaired(profile, analysis);
  });

  it('keeps every merged event strictly inside the capture window', () => {
    expect(expectMergedInsideWindow(profile, capture, 'privateuse1_runtime')).toBe(14 + 15);
    // The launch before start() was flushed at start() and never copied.
    expect(capture.counts.kernel).toBe(5 + 5 + 1 + 1);
  });

  it('names API calls from the strings their records pointed to', () => {
    const runtimes = new Set<string>();
    for (let i = 0; i < profile.slices.length; i++)
      if (profile.slices.kind[i] === SliceKind.Runtime) runtimes.add(profile.nameOf(i));
    expect(runtimes).toEqual(
      new Set([
        'aclnnMatmul',
        'aclnnRelu',
        'aclnnSort',
        'aclrtMemsetAsync',
        'aclrtMemcpy',
        'aclrtSynchronizeStream',
        'AscendRuntime',
      ]),
    );
    expect([...capture.cbid].every((v) => v === 0)).toBe(true); // MSPTI has no callback ids
  });

  it('carries what MSPTI provides as metadata, and nothing it does not', () => {
    const devices = deviceSlices(profile);
    const matmul = devices.find((d) => profile.nameOf(d) === 'aclnnMatmul_MatMulCommon_MatMulV2')!;
    const args = profile.argsOf(matmul);
    expect(args).toEqual({
      device: 0,
      stream: 3,
      'Task Type': 'KERNEL_AICORE',
      correlation: profile.slices.correlation[matmul],
    });
    const relu = devices.find((d) => profile.nameOf(d) === 'aclnnRelu_ReluAiVector_Relu')!;
    expect(profile.argsOf(relu)['Task Type']).toBe('KERNEL_AIVEC');
    const memcpy = devices.find((d) => profile.slices.kind[d] === SliceKind.Memcpy)!;
    expect(profile.argsOf(memcpy)).toMatchObject({
      bytes: 4096,
      'Copy Kind': 'DtoH',
      Async: false,
      stream: 3,
    });
    const memset = devices.find((d) => profile.slices.kind[d] === SliceKind.Memset)!;
    expect(profile.argsOf(memset)).toMatchObject({ bytes: 64, value: 0, Async: true });
    const api = analysis.runtimeOf[matmul];
    expect(Object.keys(profile.argsOf(api)).sort()).toEqual(['Thread Id', 'correlation']);
  });

  it('records pushed correlation ids as External ids (0 included) and counts dropped records', () => {
    const c = loadAddon().decodeCapture(path.join(pushed.dir, 'capture.fpc'), { args: true });
    expect(c.vendor).toBe('mspti');
    const launchIds = [...Array(c.length).keys()]
      .filter((i) => c.names[c.name[i]] === 'aclnnMatmul' && !Number.isNaN(c.externalId[i]))
      .map((i) => c.externalId[i]);
    // The agent pops with a real address: with NULL, the fake (as CANN 9.0) pops nothing and ids pile up.
    expect(launchIds).toEqual([0, 2, 4, 6, 8]);
    for (let i = 0; i < c.length; i++) {
      const name = c.names[c.name[i]];
      if (name === 'aclnnMatmul_MatMulCommon_MatMulV2') expect([0, 2, 4, 6, 8]).toContain(c.externalId[i]);
      if (name === 'aclnnRelu' || name === 'aclnnRelu_ReluAiVector_Relu') expect(c.externalId[i]).toBeNaN();
    }
    expect(c.counts.externalCorrelation).toBe(5);
    expect(c.counts.dropped).toBeGreaterThan(0);
    expect(c.diagnostics.some((d) => d.code === 'dropped' && d.severity === 'warning')).toBe(true);
  });

  it('keeps 64-bit correlation ids past 2^32 - 1 modulo 2^32, and says so once', () => {
    const c = loadAddon().decodeCapture(path.join(wide.dir, 'capture.fpc'));
    expect(c.counts.correlationWrapped).toBeGreaterThan(0);
    expect(c.diagnostics.filter((d) => d.code === 'correlation-wrap')).toHaveLength(1);
    expect(c.counts.kernel).toBe(12);
    const matmulIds = [...Array(c.length).keys()]
      .filter((i) => c.names[c.name[i]] === 'aclnnMatmul_MatMulCommon_MatMulV2')
      .map((i) => [c.correlation[i], c.externalId[i]]);
    // The first launches fit; later ones wrap to small ids and keep their torch id.
    expect(matmulIds[0][0]).toBe(2 ** 32 - 7); // 2 ** 32 - 8 went to the launch before start()
    expect(matmulIds[0][1]).toBe(0);
    expect(matmulIds[4][0]).toBeGreaterThan(0);
    expect(matmulIds[4][0]).toBeLessThan(16);
    expect(matmulIds[4][1]).toBe(8);
    const p = new Profile('wide');
    mergeCapture(p, path.join(wide.dir, 'capture.fpc'));
    const a = analyze(p);
    expect(a.flows.byCategory.ac2g?.finishOnly ?? 0).toBe(0);
    expect(a.flows.byCategory.ac2g?.startOnly ?? 0).toBe(0);
  });

  it('decodes the prefix of a capture cut short, as a killed process leaves it', () => {
    const bytes = readFileSync(path.join(plain.dir, 'capture.fpc'));
    const cut = path.join(plain.dir, 'cut.fpc');
    writeFileSync(cut, bytes.subarray(0, bytes.length - 5));
    const c = loadAddon().decodeCapture(cut);
    expect(c.vendor).toBe('mspti');
    expect(c.closed).toBe(false);
    expect(c.length).toBe(capture.length);
    expect(c.diagnostics.map((d) => d.code)).toEqual(expect.arrayContaining(['frame-length', 'no-end']));
    for (const fraction of [0.3, 0.6, 0.9]) {
      writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * fraction)));
      const part = loadAddon().decodeCapture(cut);
      expect(part.length).toBeLessThanOrEqual(capture.length);
      expect(part.closed).toBe(false);
      expect(part.diagnostics.map((d) => d.code)).toContain('no-end');
    }
  });

  it('prints and records the MSPTI lines when FLAGOS_TRACE is on, and nothing gated when it is off', () => {
    expect(pushed.stderr).toMatch(
      /\[flagos\] bound msptiActivityRegisterCallbacks -> .*libmspti_fake\.so \(MSPTI version 260000\)/,
    );
    expect(pushed.stderr).toContain('[flagos] MSPTI session started');
    expect(pushed.stderr).toMatch(
      /\[flagos\] MSPTI activity setup results: CALLBACKS=0, .*API=0, EXTERNAL_CORRELATION=0, FLUSH=0$/m,
    );
    const c = loadAddon().decodeCapture(path.join(pushed.dir, 'capture.fpc'));
    const codes = c.diagnostics.filter((d) => d.fromCapture).map((d) => d.code);
    expect(codes).toEqual(expect.arrayContaining(['M0', 'M7', 'M8', 'M9', 'M13', 'M14', 'A4']));
    expectRecordedLinesKnown(c);
    expect(plain.stderr).not.toContain('[flagos]');
    expect(capture.diagnostics.filter((d) => d.fromCapture)).toEqual([]);
  });
});

describe('the MSPTI binding when another subscriber owns MSPTI', () => {
  it('fails open_capture with one line saying so, instead of capturing nothing', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-mspti-'));
    const script = [
      'import ctypes, os, sys',
      'fake = ctypes.CDLL(os.environ["FLAGOS_TRACER_LIBRARY"], mode=ctypes.RTLD_GLOBAL)',
      'handle = ctypes.c_void_p()',
      'assert fake.msptiSubscribe(ctypes.byref(handle), None, None) == 0',
      'from flagprof_agent import native',
      'try:',
      '    native.open_capture(sys.argv[1])',
      'except RuntimeError as e:',
      '    print(str(e))',
      '',
    ].join('\n');
    const run = spawnSync(PYTHON, ['-c', script, dir], {
      encoding: 'utf8',
      env: {
        ...process.env,
        PYTHONPATH: path.join(ROOT, 'native', 'agent', 'python'),
        FLAGOS_TRACER_LIBRARY: ensureFakeMspti(),
        FLAGOS_TRACE: '1',
      },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toMatch(
      /^flagprof agent open failed: msptiSubscribe failed with 2 \(another MSPTI subscriber owns the process\) \(.*libmspti_fake\.so\)$/,
    );
    expect(run.stderr).toContain('[flagos] msptiSubscribe failed: 2');
  });
});

describe('flagprof profile --mode agent with the fake MSPTI library', () => {
  it('profiles a torch script and shows its NPU kernels on the lines that launched them', () => {
    const work = mkdtempSync(path.join(os.tmpdir(), 'flagprof-mspti-cli-'));
    const script = path.join(work, 'train.py');
    writeFileSync(
      script,
      [
        'import ctypes, os',
        'import torch',
        'from torch.profiler import record_function',
        'fake = ctypes.CDLL(os.environ["FLAGOS_TRACER_LIBRARY"])',
        'fake.fake_mspti_launch_kernel.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_uint64]',
        'a = torch.randn(64, 64)',
        'for step in range(3):',
        '    with record_function("fake::matmul"):',
        '        b = a @ a',
        '        fake.fake_mspti_launch_kernel(b"aclnnMatmul", b"aclnnMatmul_MatMulCommon_MatMulV2", b"KERNEL_AICORE", 20000)',
        '',
      ].join('\n'),
    );
    const out = path.join(work, 'session');
    execCli(['profile', '--mode', 'agent', '--out', out, '--python', PYTHON, '--json', '--', script]);
    const summary = JSON.parse(execCli(['summary', out, '--json'])) as {
      kernels: { name: string; count: number }[];
      device_events: { total: number; linked_to_runtime: number; linked_to_op: number };
      flows: { paired: number; start_only: number; finish_only: number };
      lines: { file: string; line: number; device_us: number }[];
    };
    const session = JSON.parse(readFileSync(path.join(out, 'session.json'), 'utf8')) as {
      mode: { chosen: string };
    };
    expect(session.mode.chosen).toBe('agent');
    const matmul = summary.kernels.find((k) => k.name === 'aclnnMatmul_MatMulCommon_MatMulV2');
    expect(matmul?.count).toBe(3);
    expect(summary.device_events).toMatchObject({ total: 3, linked_to_runtime: 3, linked_to_op: 3 });
    expect(summary.flows).toMatchObject({ paired: 3, start_only: 0, finish_only: 0 });
    // The `with record_function(...)` line owns the op that launched them.
    const hot = summary.lines.filter((l) => l.file === script && l.device_us > 0);
    expect(hot.map((l) => l.line)).toEqual([8]);
  });
});

function execCli(args: string[]): string {
  const cli = path.join(ROOT, 'dist', 'cli.js');
  if (!existsSync(cli)) spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
  const run = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, FLAGOS_TRACER_LIBRARY: ensureFakeMspti() },
  });
  if (run.status !== 0) throw new Error(`flagprof ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return run.stdout;
}
