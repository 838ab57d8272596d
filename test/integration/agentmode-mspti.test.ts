/**
 * What only Huawei Ascend's MSPTI does in agent mode, on a machine without an NPU (what every vendor does is the
 * table suite, agentmode-vendors.test.ts): 64-bit correlation ids past 2^32 - 1, another subscriber owning MSPTI,
 * and `flagprof profile --mode agent` on a torch script launching through the FAKE MSPTI library.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { loadAddon } from '../../extension/import/addon';
import { mergeCapture } from '../../extension/import/capture';
import { Profile } from '../../extension/model/profile';
import { runAgentWorkload, type WorkloadRun } from '../helpers/capture';
import { PYTHON, ROOT, ensureFakeMspti, ensureNativeBuilt } from '../helpers/native';

const WORKLOAD = path.join(ROOT, 'test', 'fake-mspti', 'workload.py');

function runWorkload(env: Record<string, string>, args: string[] = []): WorkloadRun {
  return runAgentWorkload(WORKLOAD, ensureFakeMspti(), env, args);
}

let wide: WorkloadRun;

beforeAll(() => {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/setup-python.sh first`);
  ensureNativeBuilt();
  // Correlation ids that cross 2^32 - 1 partway through the run.
  wide = runWorkload({ FAKE_MSPTI_FIRST_CORRELATION: String(2 ** 32 - 8) }, ['--push-correlation']);
  expect(wide.status, wide.stderr).toBe(0);
}, 300_000);

describe('agent mode with the fake MSPTI library', () => {
  it('folds 64-bit correlation ids past 2^32 - 1 into 32 bits, and says so once', () => {
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
});

describe('physical device ids under ASCEND_RT_VISIBLE_DEVICES', () => {
  it("shows the device CANN calls 5 as the process's device 0", () => {
    const run = runWorkload({ ASCEND_RT_VISIBLE_DEVICES: '5,4', FLAGOS_TRACE: '0' });
    expect(run.status, run.stderr).toBe(0);
    const c = loadAddon().decodeCapture(path.join(run.dir, 'capture.fpc'));
    const devices = new Set(
      [...Array(c.length).keys()].filter((i) => c.kind[i] <= 2).map((i) => c.device[i]),
    );
    expect(devices).toEqual(new Set([0]));
    expect(c.counts.kernel).toBe(12);
  }, 120_000);
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
