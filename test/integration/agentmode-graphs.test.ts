/**
 * CUDA graphs in agent mode, with the FAKE CUPTI library and real torch: a cudaGraphLaunch replays three kernel
 * nodes; CUPTI gives each kernel the launch call's correlation id and the graph's and node's ids (Kernel5 on).
 * The decoder must keep all three on the one launch (its arrow, its op) and carry the ids as Kineto names them.
 */
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Analysis } from '../../extension/analysis/types';
import { Profile, SliceKind } from '../../extension/model/profile';
import { deviceSlices, openAgentSession } from '../helpers/capture';
import { PYTHON, ensureNativeBuilt, runCuptiWorkload } from '../helpers/native';

const RELU_NAME = /vectorized_elementwise_kernel/;

let profile: Profile;
let analysis: Analysis;

beforeAll(async () => {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/setup-python.sh first`);
  ensureNativeBuilt();
  const run = runCuptiWorkload({}, ['--graph']);
  expect(run.status, run.stderr).toBe(0);
  ({ profile, analysis } = await openAgentSession(run.dir));
}, 300_000);

function graphKernels(): number[] {
  return deviceSlices(profile).filter((d) => profile.argsOf(d)['graph id'] !== undefined);
}

describe('a CUDA graph replay in agent mode', () => {
  it('decodes the graph and node ids of each replayed kernel, and none on kernels launched directly', () => {
    const kernels = graphKernels();
    expect(kernels).toHaveLength(3);
    const nodes = kernels.map((k) => profile.argsOf(k)['graph node id']);
    for (const k of kernels) expect(profile.argsOf(k)['graph id']).toBe(7);
    expect(nodes).toEqual([7 * 2 ** 32 + 1, 7 * 2 ** 32 + 2, 7 * 2 ** 32 + 3]);
    for (const k of kernels) expect(profile.nameOf(k)).toMatch(RELU_NAME);
    const direct = deviceSlices(profile).filter((d) => profile.slices.kind[d] === SliceKind.Kernel);
    expect(direct.length - kernels.length).toBe(11);
  });

  it('keeps the three kernels on their one cudaGraphLaunch and on the op that called it', () => {
    const kernels = graphKernels();
    const launches = new Set(kernels.map((k) => analysis.runtimeOf[k]));
    expect(launches.size).toBe(1);
    const launch = [...launches][0];
    expect(launch).toBeGreaterThanOrEqual(0);
    expect(profile.nameOf(launch)).toBe('cudaGraphLaunch');
    for (const k of kernels) expect(profile.slices.correlation[k]).toBe(profile.slices.correlation[launch]);
    const op = analysis.opOf[kernels[0]];
    expect(op).toBeGreaterThanOrEqual(0);
    expect(profile.nameOf(op)).toBe('fake::graph_replay');
    for (const k of kernels) expect(analysis.opOf[k]).toBe(op);
    const replayed = kernels.reduce((sum, k) => sum + profile.slices.dur[k], 0);
    expect(replayed).toBe(3 * 2000);
    expect(analysis.deviceSelfNs[op]).toBe(replayed);
  });
});
