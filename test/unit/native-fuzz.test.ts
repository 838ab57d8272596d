/**
 * A bounded libFuzzer run of the capture decoder under ASan/UBSan (clang from Debian:
 * scripts/install-native-tools.sh). No crash, no leak, no undefined behaviour, no timeout within the budget.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ROOT,
  apiRecord,
  calibrationFrame,
  deviceRecord,
  droppedFrame,
  endFrame,
  externalRecord,
  fpcHeader,
  kernelRecord,
  memcpyRecord,
  memsetRecord,
  msptiApiRecord,
  msptiExternalRecord,
  msptiKernelRecord,
  msptiKernelStrings,
  msptiMemoryRecord,
  namesFrame,
  recordsFrame,
  rocRecord,
  ROC_DOMAIN,
  ROC_KIND,
  ROC_OP,
  sessionFrame,
  VENDOR,
} from '../helpers/native';

const SECONDS = Number(process.env.FLAGPROF_FUZZ_SECONDS ?? 20);
const T0 = 1_790_000_000_000_000_000n;

function findClang(): string {
  for (const name of ['clang++', 'clang++-16', 'clang++-15', 'clang++-14']) {
    if (spawnSync(name, ['--version']).status === 0) return name;
  }
  throw new Error('clang++ with libFuzzer is missing: run scripts/install-native-tools.sh');
}

describe('capture decoder fuzzing', () => {
  it(`survives ${SECONDS} s of libFuzzer with ASan and UBSan`, () => {
    const clang = findClang();
    const work = mkdtempSync(path.join(os.tmpdir(), 'flagprof-fuzz-'));
    const binary = path.join(work, 'capture_fuzz');
    const tracer = path.join(ROOT, 'native', 'tracer');
    execFileSync(
      clang,
      [
        '-std=c++17',
        '-g',
        '-O1',
        '-fsanitize=fuzzer,address,undefined',
        '-fno-sanitize-recover=undefined',
        `-I${tracer}`,
        path.join(tracer, 'fuzz', 'capture_fuzz.cc'),
        ...['device_tracer', 'fpc_format', 'capture_decoder'].map((f) => path.join(tracer, `${f}.cc`)),
        // Every vendor's decoder, as the build lists them.
        ...execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'vendor-sources.mjs'), 'decode'], {
          encoding: 'utf8',
        })
          .trim()
          .split('\n')
          .map((f) => path.join(ROOT, f)),
        '-o',
        binary,
      ],
      { stdio: 'pipe' },
    );

    // Seeds: well-formed captures the fuzzer mutates from.
    const corpus = path.join(work, 'corpus');
    mkdirSync(corpus);
    const seeds: Buffer[][] = [
      [
        fpcHeader(),
        sessionFrame(1, T0),
        recordsFrame([
          { bytes: deviceRecord() },
          { bytes: externalRecord(5, 0n) },
          { bytes: apiRecord({ cbid: 211, start: T0, end: T0 + 50n, correlation: 5 }) },
          {
            bytes: kernelRecord({ start: T0 + 60n, end: T0 + 90n, correlation: 5 }),
            pointed: '_ZN2at6native20bitonicSortKVInPlaceIfEEvPT_i',
          },
          { bytes: memcpyRecord({ start: T0, end: T0 + 5n, correlation: 6, bytes: 64n }) },
          { bytes: memsetRecord({ start: T0, end: T0 + 5n, correlation: 7, bytes: 64n }) },
          { bytes: apiRecord({ kind: 4, cbid: 307, start: T0, end: T0 + 5n, correlation: 8 }) },
        ]),
        namesFrame(1, [[307, 'cuLaunchKernel_v7000']]),
        droppedFrame(3n),
        sessionFrame(2, T0 + 1000n),
        endFrame(T0 + 1001n),
      ],
      [
        fpcHeader(),
        recordsFrame([
          { bytes: kernelRecord({ size: 144, start: T0, end: T0 + 1n, correlation: 1 }), pointed: 'k' },
        ]),
      ],
      [
        fpcHeader({ vendor: VENDOR.mspti }),
        sessionFrame(1, T0),
        recordsFrame([
          { bytes: msptiExternalRecord(5n, 0n) },
          { bytes: msptiApiRecord({ start: T0, end: T0 + 50n, correlation: 5n }), pointed: 'aclnnMatmul' },
          {
            bytes: msptiKernelRecord({ start: T0 + 60n, end: T0 + 90n, correlation: 5n }),
            pointed: msptiKernelStrings('MatMulV2', 'KERNEL_AICORE'),
          },
          {
            bytes: msptiMemoryRecord({
              kind: 'memcpy',
              start: T0,
              end: T0 + 5n,
              correlation: 2n ** 32n,
              bytes: 64n,
            }),
          },
          {
            bytes: msptiMemoryRecord({
              kind: 'memset',
              start: T0,
              end: T0 + 5n,
              correlation: 7n,
              bytes: 64n,
            }),
          },
        ]),
        endFrame(T0 + 1001n),
      ],
      [
        fpcHeader({ vendor: VENDOR.roctracer }),
        sessionFrame(1, T0),
        calibrationFrame(1, 1000n, T0),
        recordsFrame([
          {
            bytes: rocRecord({
              domain: ROC_DOMAIN.extApi,
              op: 1,
              start: 0n,
              end: 0n,
              correlation: 5n,
              externalId: 9n,
            }),
          },
          {
            bytes: rocRecord({
              domain: ROC_DOMAIN.hipApi,
              op: 44,
              start: 1000n,
              end: 1050n,
              correlation: 5n,
            }),
          },
          {
            bytes: rocRecord({
              domain: ROC_DOMAIN.hipOps,
              op: ROC_OP.dispatch,
              kind: ROC_KIND.kernel,
              start: 1060n,
              end: 1090n,
              correlation: 5n,
            }),
            pointed: '_ZN2at6native20bitonicSortKVInPlaceIfEEvPT_i',
          },
          {
            bytes: rocRecord({
              domain: ROC_DOMAIN.hipOps,
              op: ROC_OP.copy,
              kind: ROC_KIND.htod,
              start: 1000n,
              end: 1005n,
              correlation: 2n ** 32n,
              bytes: 64n,
            }),
          },
          {
            bytes: rocRecord({
              domain: ROC_DOMAIN.hipOps,
              op: ROC_OP.copy,
              kind: ROC_KIND.fill,
              start: 1000n,
              end: 1005n,
              correlation: 7n,
              bytes: 64n,
            }),
          },
        ]),
        namesFrame(3, [[44, 'hipLaunchKernel']]),
        endFrame(T0 + 1001n),
      ],
    ];
    seeds.forEach((parts, i) => writeFileSync(path.join(corpus, `seed${i}`), Buffer.concat(parts)));

    const run = spawnSync(
      binary,
      [
        `-max_total_time=${SECONDS}`,
        '-rss_limit_mb=2048',
        '-timeout=10',
        `-artifact_prefix=${work}/`,
        corpus,
      ],
      {
        encoding: 'utf8',
        timeout: (SECONDS + 60) * 1000,
        env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
      },
    );
    const crashes = readdirSync(work).filter((f) => /^(crash|leak|timeout|oom)-/.test(f));
    expect(crashes, run.stderr.slice(-3000)).toEqual([]);
    expect(run.status, run.stderr.slice(-3000)).toBe(0);
    const done = /Done (\d+) runs in \d+ second/.exec(run.stderr);
    expect(done, run.stderr.slice(-2000)).not.toBeNull();
    expect(Number(done![1])).toBeGreaterThan(1000);
  }, 240_000);
});
