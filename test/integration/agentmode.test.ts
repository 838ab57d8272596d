/**
 * What only the CUPTI path does in agent mode, with the FAKE CUPTI library (test/fake-cupti) and real torch (what
 * every vendor does is the table suite, agentmode-vendors.test.ts): the window's counts, CUDA's generated cbid
 * table and demangled names, occupancy from the device record, FLAGOS_TRACE spelled every way, and the load
 * failures (agent missing, FLAGOS_TRACER_LIBRARY unloadable).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadAddon, type DecodedCapture } from '../../extension/import/addon';
import { Profile, SliceKind, isDeviceKind } from '../../extension/model/profile';
import { expectMergedInsideWindow, openAgentSession } from '../helpers/capture';
import { PYTHON, ROOT, ensureNativeBuilt, runCuptiWorkload, type WorkloadRun } from '../helpers/native';

type Run = WorkloadRun;
const runWorkload = runCuptiWorkload;

let plain: Run;
let pushed: Run;
let profile: Profile;
let capture: DecodedCapture;

beforeAll(async () => {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/setup-python.sh first`);
  ensureNativeBuilt();
  plain = runWorkload({ FLAGOS_TRACE: 'garbage' });
  pushed = runWorkload({ FLAGOS_TRACE: 'YeS', FAKE_CUPTI_DROP_EVERY: '7' }, ['--push-correlation']);
  expect(plain.status, plain.stderr).toBe(0);
  expect(pushed.status, pushed.stderr).toBe(0);
  ({ profile, capture } = await openAgentSession(plain.dir));
}, 300_000);

function deviceSlices(p: Profile): number[] {
  const out: number[] = [];
  for (let i = 0; i < p.slices.length; i++) if (isDeviceKind(p.slices.kind[i])) out.push(i);
  return out;
}

describe('agent mode with the fake CUPTI library', () => {
  it('keeps every merged event strictly inside the capture window and counts what it left out', () => {
    const merged = expectMergedInsideWindow(profile, capture, 'cuda_runtime');
    expect(merged).toBeGreaterThan(20);
    // The launch before start() was flushed at start() and never copied: nothing recorded fell outside.
    expect(capture.counts.kernel).toBe(5 + 5 + 1);
  });

  it('shows demangled kernel names and runtime names from the generated table', () => {
    const names = new Set<string>();
    const runtimes = new Set<string>();
    for (let i = 0; i < profile.slices.length; i++) {
      if (profile.slices.kind[i] === SliceKind.Kernel) names.add(profile.nameOf(i));
      if (profile.slices.kind[i] === SliceKind.Runtime) runtimes.add(profile.nameOf(i));
    }
    for (const name of names) expect(name).not.toMatch(/^_Z/);
    expect(runtimes).toEqual(
      new Set([
        'cudaLaunchKernel',
        'cudaMemcpyAsync',
        'cudaMemsetAsync',
        'cudaDeviceSynchronize',
        'cudaRuntime',
      ]),
    );
    const generic = [...Array(profile.slices.length).keys()].find((i) => profile.nameOf(i) === 'cudaRuntime');
    expect(profile.argsOf(generic!).cbid).toBe(100000);
  });

  it('carries the kernel metadata fields, occupancy from the device the agent recorded', () => {
    const gemm = deviceSlices(profile).find((d) => profile.nameOf(d).startsWith('void cutlass::'))!;
    const args = profile.argsOf(gemm);
    for (const key of [
      'grid',
      'block',
      'registers per thread',
      'shared memory',
      'warps per SM',
      'blocks per SM',
      'est. achieved occupancy %',
      'queued',
      'context',
      'stream',
      'device',
      'correlation',
    ]) {
      expect(args, key).toHaveProperty(key);
    }
    expect(args).not.toHaveProperty('External id'); // nothing was pushed in this run
    expect(args.grid).toEqual([2, 2, 1]);
    expect(args['shared memory']).toBe(16384);
    expect(args.correlation).toBe(profile.slices.correlation[gemm]);
    const memcpy = deviceSlices(profile).find((d) => profile.slices.kind[d] === SliceKind.Memcpy)!;
    expect(profile.argsOf(memcpy)).toMatchObject({ bytes: 4096, device: 0, stream: 7 });
  });

  it('warns about FLAGOS_TRACE=garbage and reads it as off', () => {
    const e1 = '[flagos] FLAGOS_TRACE: "garbage" is not a boolean; using the default';
    expect(plain.stderr.split('\n').filter((l) => l === e1)).toHaveLength(1);
    expect(plain.stderr).not.toContain('[flagos] Registering CUPTI activity callbacks...');
    expect(capture.diagnostics.filter((d) => d.fromCapture).map((d) => d.code)).toEqual(['E1']);
  });

  it('prints and records the gated lines when FLAGOS_TRACE is on (case-insensitive)', () => {
    expect(pushed.stderr).toContain('[flagos] Registering CUPTI activity callbacks...');
    expect(pushed.stderr).toMatch(
      /\[flagos\] Activity setup results: CALLBACKS=0, .*RUNTIME=0, EXTERNAL_CORRELATION=0/,
    );
    expect(pushed.stderr).toMatch(
      /\[flagos-cupti-shim\] bound cuptiActivityRegisterCallbacks -> .*libcupti_fake\.so \(CUPTI API version \d+\)/,
    );
    const c = loadAddon().decodeCapture(path.join(pushed.dir, 'capture.fpc'));
    const codes = c.diagnostics.filter((d) => d.fromCapture).map((d) => d.code);
    expect(codes).toEqual(
      expect.arrayContaining(['S2', 'C2', 'C3', 'C4', 'C6', 'C7', 'C8', 'C10', 'C12', 'A4']),
    );
  });

  it('fails open_capture with one line listing every place tried when the agent library is missing', () => {
    // A copy of the binding away from any build: nothing to load.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-agentmode-'));
    const pkg = path.join(dir, 'a', 'b', 'c', 'flagprof_agent');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(path.join(pkg, '__init__.py'), '');
    copyFileSync(
      path.join(ROOT, 'native', 'agent', 'python', 'flagprof_agent', 'native.py'),
      path.join(pkg, 'native.py'),
    );
    const script =
      'import sys\nfrom flagprof_agent import native\ntry:\n    native.open_capture(sys.argv[1])\nexcept RuntimeError as e:\n    print(str(e))\n    sys.exit(3)\n';
    const run = spawnSync(PYTHON, ['-c', script, path.join(dir, 'session')], {
      encoding: 'utf8',
      env: {
        ...process.env,
        PYTHONPATH: path.dirname(pkg),
        FLAGPROF_AGENT_LIBRARY: path.join(dir, 'missing.so'),
      },
    });
    expect(run.status).toBe(3);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^flagprof agent library could not be loaded; tried /);
    expect(lines[0]).toContain(`${path.join(dir, 'missing.so')} (not found)`);
    expect(lines[0]).toContain(path.join(pkg, 'libflagprof_agent.so'));
  });

  it('says which FLAGOS_TRACER_LIBRARY failed to load, unconditionally, and falls back to the usual search', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-agentmode-'));
    const script =
      'import sys\nfrom flagprof_agent import native\ntry:\n    native.open_capture(sys.argv[1]).close()\n    print("bound")\nexcept RuntimeError as e:\n    print(str(e))\n';
    const run = spawnSync(PYTHON, ['-c', script, dir], {
      encoding: 'utf8',
      env: {
        ...process.env,
        PYTHONPATH: path.join(ROOT, 'native', 'agent', 'python'),
        FLAGOS_TRACER_LIBRARY: '/nonexistent/libcupti.so',
        FLAGOS_TRACE: '0',
      },
    });
    expect(run.status).toBe(0);
    expect(run.stderr).toContain(
      '[flagos] FLAGOS_TRACER_LIBRARY=/nonexistent/libcupti.so could not be loaded:',
    );
    // Without a CUDA toolkit (or CANN, or ROCm) nothing else binds and open fails with the list; with one, its library binds.
    const out = run.stdout.trim();
    expect(
      out === 'bound' ||
        /^flagprof agent open failed: no vendor activity library could be loaded \(CUPTI, MSPTI.* or [^)]+\); tried FLAGOS_TRACER_LIBRARY=\/nonexistent\/libcupti.so .*; libmspti\.so \(.*; libroctracer64\.so \(/.test(
          out,
        ),
      out,
    ).toBe(true);
  });
});
