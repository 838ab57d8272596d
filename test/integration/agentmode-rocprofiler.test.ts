/**
 * What only AMD's rocprofiler-sdk does in agent mode, with its FAKE library and real torch (what every vendor does is
 * the table suite, agentmode-vendors.test.ts): it is preferred over the ROCtracer it supersedes where both are
 * installed, ROCtracer still traces where it alone is; the SDK 0.5 record layouts read as the ROCm 7 ones do; 64-bit
 * correlation ids past 2^32 - 1.
 */
import { mkdtempSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadAddon, type DecodedCapture } from '../../extension/import/addon';
import { runAgentWorkload, type WorkloadRun } from '../helpers/capture';
import {
  PYTHON,
  ROOT,
  ensureFakeRocprofiler,
  ensureFakeRoctracer,
  ensureNativeBuilt,
} from '../helpers/native';

const workload = (key: string) => path.join(ROOT, 'test', `fake-${key}`, 'workload.py');
const decode = (run: WorkloadRun): DecodedCapture =>
  loadAddon().decodeCapture(path.join(run.dir, 'capture.fpc'));
const GEMM = 'Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1_SN_1LDSB0';

/** A library directory holding the fakes under the sonames the agent searches for. */
function installed(libraries: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flagprof-rocm-lib-'));
  for (const [soname, file] of Object.entries(libraries)) symlinkSync(file, path.join(dir, soname));
  return dir;
}

function run(key: string, env: Record<string, string>, args: string[] = []): WorkloadRun {
  const r = runAgentWorkload(workload(key), env.FLAGOS_TRACER_LIBRARY ?? '', env, args);
  expect(r.status, r.stderr).toBe(0);
  return r;
}

beforeAll(() => {
  if (!PYTHON) throw new Error('no Python: run scripts/setup-python.sh first');
  ensureNativeBuilt();
});

describe('rocprofiler-sdk and the ROCtracer it supersedes', () => {
  it('binds rocprofiler-sdk where both libraries are installed, ROCtracer where it alone is', () => {
    const rocprofiler = ensureFakeRocprofiler();
    const roctracer = ensureFakeRoctracer();
    const both = installed({ 'librocprofiler-sdk.so.1': rocprofiler, 'libroctracer64.so.4': roctracer });
    const preferred = decode(
      run('rocprofiler', {
        FLAGOS_TRACER_LIBRARY: '',
        FAKE_LIBRARY: rocprofiler,
        LD_LIBRARY_PATH: both,
        FLAGOS_ACCELERATOR: 'rocm',
        FLAGOS_TRACE: '0',
      }),
    );
    expect([preferred.vendor, path.basename(preferred.library)]).toEqual([
      'rocprofiler',
      'librocprofiler-sdk.so.1',
    ]);
    expect(preferred.counts.kernel).toBe(13);
    const alone = installed({ 'libroctracer64.so.4': roctracer });
    const fallback = decode(
      run('roctracer', {
        FLAGOS_TRACER_LIBRARY: '',
        FAKE_LIBRARY: roctracer,
        LD_LIBRARY_PATH: alone,
        FLAGOS_ACCELERATOR: 'dcu',
        FLAGOS_TRACE: '0',
      }),
    );
    expect([fallback.vendor, fallback.platform]).toEqual(['roctracer', 'dcu']);
  }, 180_000);

  it('says what FLAGOS_ACCELERATOR=rocm may bind when neither library is there', () => {
    const r = runAgentWorkload(workload('rocprofiler'), '', {
      FLAGOS_TRACER_LIBRARY: '',
      FAKE_LIBRARY: ensureFakeRocprofiler(),
      LD_LIBRARY_PATH: installed({}),
      FLAGOS_ACCELERATOR: 'rocm',
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(
      /no rocprofiler-sdk or ROCtracer library for FLAGOS_ACCELERATOR=rocm could be loaded; tried librocprofiler-sdk\.so\.1 \(/,
    );
    // One line says it all (the workload lets open_capture's error end it).
    expect(r.stderr).toMatch(
      /^RuntimeError: flagprof agent open failed: no rocprofiler-sdk or ROCtracer library/m,
    );
  }, 120_000);

  it('reads the SDK 0.5 layouts (56-byte HIP API records) as it reads the ROCm 7 ones', () => {
    const library = ensureFakeRocprofiler();
    const c = decode(
      run('rocprofiler', { FLAGOS_TRACER_LIBRARY: library, FAKE_ROCPROFILER_ABI: '0', FLAGOS_TRACE: '0' }, [
        '--push-correlation',
      ]),
    );
    expect(c.counts).toMatchObject({ kernel: 13, memcpy: 1, runtime: 16, malformed: 0 });
    const launches = [...Array(c.length).keys()].filter(
      (i) => c.names[c.name[i]] === 'hipExtModuleLaunchKernel',
    );
    expect(launches.map((i) => c.externalId[i])).toEqual([0, 2, 4, 6, 8]);
  }, 120_000);

  it('folds 64-bit correlation ids past 2^32 - 1 into 32 bits, the torch ids with them', () => {
    const c = decode(
      run(
        'rocprofiler',
        {
          FLAGOS_TRACER_LIBRARY: ensureFakeRocprofiler(),
          FAKE_ROCPROFILER_FIRST_CORRELATION: String(2 ** 32 - 8),
          FLAGOS_TRACE: '0',
        },
        ['--push-correlation'],
      ),
    );
    expect(c.counts.correlationWrapped).toBeGreaterThan(0);
    const gemms = [...Array(c.length).keys()].filter((i) => c.names[c.name[i]] === GEMM);
    expect(gemms.map((i) => c.externalId[i])).toEqual([0, 2, 4, 6, 8]);
    expect(gemms.some((i) => c.correlation[i] < 16)).toBe(true);
  }, 120_000);
});
