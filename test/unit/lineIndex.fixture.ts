/**
 * A synthetic profile and its analysis, shaped like a PyTorch training loop captured with exact call sites:
 *
 *   train.py
 *     3  def forward(x):
 *     5      return torch.nn.functional.linear(x, w)   -> aten::linear > aten::addmm > launch > gemm kernel
 *     8  def step(x):
 *    10      y = forward(x)                              (calls the user's own function)
 *    11      loss = y.sum()                              -> aten::sum > launch > reduce kernel
 *    12      loss.backward()                             -> autograd::backward > launch > 2 kernels
 *    20  for x in batches: step(x)                       (module level)
 *
 * Every number is derived from the iteration index so tests can recompute the expected sums independently. The
 * profile is finished by the importer's own pass and analysed by analyze(), as an imported trace is; without call
 * sites (exact: false) python_function frames name the functions' def lines, as Kineto writes them.
 * Used by the unit tests and by bench/hover-bench.mjs (one million events).
 */
import { analyze } from '../../extension/analysis/analyze';
import type { Analysis } from '../../extension/analysis/types';
import { reindex } from '../../extension/import/finish';
import { Profile, SliceKind } from '../../extension/model/profile';

export const FILE = '/home/user/proj/train.py';
export const EVENTS_PER_ITERATION = 12;

export interface SyntheticOptions {
  iterations: number;
  /** false: no sites, lines are function def lines (a trace opened without call sites). */
  exact?: boolean;
  /** false: CPU-only profile (no device events). */
  device?: boolean;
  /** The name of the second function (a file may have two functions of one name, like two forward methods). */
  stepName?: string;
}

export interface Synthetic {
  analysis: Analysis;
  /** Expected per-iteration times, for assertions. */
  gemmNs: (i: number) => number;
  reduceNs: (i: number) => number;
  backwardKernelNs: (i: number) => number;
}

export function makeSynthetic(options: SyntheticOptions): Synthetic {
  const exact = options.exact ?? true;
  const device = options.device ?? true;
  const step = options.stepName ?? 'step';
  const profile = new Profile(FILE.replace('train.py', 'trace.json'));
  const s = profile.strings;
  const cpuTrack = 0;
  const gpuTrack = 1;
  profile.tracks.push(
    {
      id: 0,
      pid: '1',
      tid: '1',
      kind: 'cpu',
      name: 'python',
      processName: 'python',
      processSortIndex: 0,
      threadSortIndex: 0,
      sliceCount: 0,
      maxDepth: 0,
    },
    {
      id: 1,
      pid: '0',
      tid: '7',
      kind: 'device',
      name: 'stream 7',
      processName: 'GPU 0',
      processSortIndex: 1,
      threadSortIndex: 0,
      sliceCount: 0,
      maxDepth: 0,
    },
  );
  profile.slices.reserve(options.iterations * EVENTS_PER_ITERATION + 16);
  const sites = new Map<number, { file: string; line: number; function: string }[]>();
  const chainForward = [
    { file: FILE, line: 5, function: 'forward' },
    { file: FILE, line: 10, function: step },
    { file: FILE, line: 20, function: '<module>' },
  ];
  const chainSum = [
    { file: FILE, line: 11, function: step },
    { file: FILE, line: 20, function: '<module>' },
  ];
  const chainBackward = [
    { file: FILE, line: 12, function: step },
    { file: FILE, line: 20, function: '<module>' },
  ];

  const gemmNs = (i: number) => (device ? 20_000 + (i % 7) * 1000 : 0);
  const reduceNs = (i: number) => (device ? 3_000 + (i % 3) * 500 : 0);
  const backwardKernelNs = (i: number) => (device ? 15_000 + (i % 5) * 250 : 0);

  let externalId = 0;
  let correlation = 0;
  const names = {
    linear: s.intern('aten::linear'),
    addmm: s.intern('aten::addmm'),
    sum: s.intern('aten::sum'),
    backward: s.intern('autograd::engine::evaluate_function: MmBackward0'),
    launch: s.intern('cudaLaunchKernel'),
    gemm: s.intern('ampere_sgemm_128x64_tn'),
    reduce: s.intern('reduce_kernel<float>'),
    bwdA: s.intern('ampere_sgemm_64x64_nn'),
    bwdB: s.intern('elementwise_kernel'),
  };
  const cat = {
    op: s.intern('cpu_op'),
    runtime: s.intern('cuda_runtime'),
    kernel: s.intern('kernel'),
    python: s.intern('python_function'),
  };
  const frames = { forward: s.intern(`${FILE}(3): forward`), step: s.intern(`${FILE}(8): ${step}`) };

  const push = (
    kind: SliceKind,
    track: number,
    start: number,
    dur: number,
    name: number,
    c: number,
    corr: number,
    ext: number,
  ): number => profile.slices.push(kind, track, start, dur, name, c, corr, ext, -1);

  let t = 0;
  for (let i = 0; i < options.iterations; i++) {
    // forward: linear (self 2 us) > addmm (self 8 us, the launch is not an op) > launch > gemm
    if (!exact) push(SliceKind.PythonFunction, cpuTrack, t, 10_000, frames.forward, cat.python, NaN, NaN);
    const extLinear = externalId++;
    const extAddmm = externalId++;
    const linear = push(SliceKind.CpuOp, cpuTrack, t, 10_000, names.linear, cat.op, NaN, extLinear);
    const addmm = push(SliceKind.CpuOp, cpuTrack, t + 1_000, 8_000, names.addmm, cat.op, NaN, extAddmm);
    const corrA = correlation++;
    push(SliceKind.Runtime, cpuTrack, t + 2_000, 3_000, names.launch, cat.runtime, corrA, extAddmm);
    if (device)
      push(SliceKind.Kernel, gpuTrack, t + 6_000, gemmNs(i), names.gemm, cat.kernel, corrA, extAddmm);
    if (exact) {
      sites.set(extLinear, chainForward);
      sites.set(extAddmm, chainForward);
    }
    t += 12_000;
    // step: sum (self 6 us) > launch > reduce; backward (self 15 us) > 2 launches > 2 kernels
    if (!exact) push(SliceKind.PythonFunction, cpuTrack, t, 23_000, frames.step, cat.python, NaN, NaN);
    const extSum = externalId++;
    const sum = push(SliceKind.CpuOp, cpuTrack, t, 6_000, names.sum, cat.op, NaN, extSum);
    const corrB = correlation++;
    push(SliceKind.Runtime, cpuTrack, t + 1_000, 2_000, names.launch, cat.runtime, corrB, extSum);
    if (device)
      push(SliceKind.Kernel, gpuTrack, t + 4_000, reduceNs(i), names.reduce, cat.kernel, corrB, extSum);
    if (exact) sites.set(extSum, chainSum);
    t += 8_000;
    const extBwd = externalId++;
    const bwd = push(SliceKind.CpuOp, cpuTrack, t, 15_000, names.backward, cat.op, NaN, extBwd);
    const corrC = correlation++;
    const corrD = correlation++;
    push(SliceKind.Runtime, cpuTrack, t + 1_000, 2_000, names.launch, cat.runtime, corrC, extBwd);
    push(SliceKind.Runtime, cpuTrack, t + 5_000, 2_000, names.launch, cat.runtime, corrD, extBwd);
    if (device) {
      push(SliceKind.Kernel, gpuTrack, t + 8_000, backwardKernelNs(i), names.bwdA, cat.kernel, corrC, extBwd);
      push(SliceKind.Kernel, gpuTrack, t + 30_000, 2_000, names.bwdB, cat.kernel, corrD, extBwd);
    }
    if (exact) sites.set(extBwd, chainBackward);
    t += 20_000;
  }
  profile.eventCount = profile.slices.length;
  if (exact) profile.sites = sites;
  reindex(profile);
  return { analysis: analyze(profile), gemmNs, reduceNs, backwardKernelNs };
}
