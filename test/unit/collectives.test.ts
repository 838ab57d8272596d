/**
 * One rank's collectives (analysis/collectives.ts): the interval arithmetic behind time in collectives and exposed
 * communication, instances built from hand-written traces, and the real traces' collectives (the B200 trace's
 * comms args, the CPU-only gloo trace, a DLRM worker of 2023 without comms args).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import {
  dtypeBytes,
  exposedLength,
  intervalsLength,
  kernelDerivedName,
  mergeIntervals,
  rankCollectives,
} from '../../extension/analysis/collectives';
import { importTrace, importTraceBytes } from '../../extension/import/kineto';
import { tracePath } from '../helpers/traces';

type Interval = [number, number];
const merged = (intervals: Interval[]) =>
  mergeIntervals(
    intervals.map((i) => i[0]),
    intervals.map((i) => i[1]),
  );

const interval = fc
  .tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 40 }))
  .map(([start, length]): Interval => [start, start + length]);

/** Unit cells [t, t + 1) covered by each set, counted one by one: the slow truth the sweep must match. */
function cellCount(a: Interval[], b: Interval[]): { union: number; exposed: number } {
  let union = 0;
  let exposed = 0;
  for (let t = 0; t < 260; t++) {
    const inA = a.some(([s, e]) => s <= t && t < e);
    const inB = b.some(([s, e]) => s <= t && t < e);
    if (inA) union++;
    if (inA && !inB) exposed++;
  }
  return { union, exposed };
}

describe('interval arithmetic', () => {
  it('exposed ≤ union ≤ sum, and both match a cell-by-cell count', () => {
    fc.assert(
      fc.property(
        fc.array(interval, { maxLength: 12 }),
        fc.array(interval, { maxLength: 12 }),
        (comm, compute) => {
          const a = merged(comm);
          const union = intervalsLength(a);
          const exposed = exposedLength(a, merged(compute));
          const sum = comm.reduce((total, [s, e]) => total + (e - s), 0);
          expect(exposed).toBeLessThanOrEqual(union);
          expect(union).toBeLessThanOrEqual(sum);
          expect({ union, exposed }).toEqual(cellCount(comm, compute));
        },
      ),
    );
  });

  it('exposed = union when nothing computes', () => {
    fc.assert(
      fc.property(fc.array(interval, { maxLength: 12 }), (comm) => {
        const a = merged(comm);
        expect(exposedLength(a, new Float64Array(0))).toBe(intervalsLength(a));
      }),
    );
  });

  it('merges into sorted, disjoint intervals', () => {
    fc.assert(
      fc.property(fc.array(interval, { maxLength: 12 }), (intervals) => {
        const m = merged(intervals);
        for (let i = 0; i + 1 < m.length; i += 2) {
          expect(m[i + 1]).toBeGreaterThan(m[i]);
          if (i + 2 < m.length) expect(m[i + 2]).toBeGreaterThan(m[i + 1]);
        }
      }),
    );
    expect([
      ...merged([
        [5, 9],
        [0, 2],
        [2, 4],
        [7, 12],
        [20, 20],
      ]),
    ]).toEqual([0, 4, 5, 12]);
  });
});

/** A Kineto trace of CPU ops, a launch and kernels, written by hand (ts and dur in µs). */
function trace(events: Record<string, unknown>[]) {
  const profile = importTraceBytes(
    'collectives.json',
    new TextEncoder().encode(JSON.stringify({ traceEvents: events, distributedInfo: { rank: 0 } })),
  );
  return rankCollectives(analyze(profile));
}

const op = (
  name: string,
  ts: number,
  dur: number,
  args: Record<string, unknown> = {},
  cat = 'cpu_op',
  tid = 10,
) => ({
  ph: 'X',
  cat,
  name,
  pid: 10,
  tid,
  ts,
  dur,
  args,
});
const launch = (ts: number, correlation: number) => ({
  ph: 'X',
  cat: 'cuda_runtime',
  name: 'cudaLaunchKernel',
  pid: 10,
  tid: 10,
  ts,
  dur: 2,
  args: { correlation },
});
const kernel = (name: string, ts: number, dur: number, correlation: number, stream = 20, device = 0) => ({
  ph: 'X',
  cat: 'kernel',
  name,
  pid: device,
  tid: stream,
  ts,
  dur,
  args: { correlation, device, stream },
});

describe('one rank’s collectives', () => {
  const comms = {
    'Collective name': 'allreduce',
    'Process Group Name': '0',
    'Process Group Description': 'default_pg',
    'Process Group Ranks': '[0, 1]',
    dtype: 'BFloat16',
    'In msg nelems': 1000,
    'Out msg nelems': 1000,
    'Group size': 2,
  };

  it('makes one instance of c10d op ⊃ record_param_comms ⊃ nccl: annotation, with its kernel', () => {
    const rank = trace([
      op('c10d::allreduce_', 100, 50),
      op('record_param_comms', 105, 40, comms),
      op('nccl:all_reduce', 110, 30, {}, 'user_annotation'),
      launch(115, 1),
      kernel('ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)', 200, 100, 1),
      // Compute on another stream of the same device covers the collective's first 40 µs.
      op('aten::mm', 150, 10),
      launch(152, 2),
      kernel('ampere_sgemm_128x64_tn', 160, 80, 2, 21),
    ]);
    expect(rank.device).toBe(true);
    expect(rank.instances).toHaveLength(1);
    const [c] = rank.instances;
    expect(c).toMatchObject({
      name: 'allreduce',
      group: '0',
      groupDescription: 'default_pg',
      index: 0,
      part: 'device',
      startNs: 100_000,
      endNs: 200_000,
      durationNs: 100_000,
    });
    expect(c.size).toMatchObject({ inBytes: 2000, outBytes: 2000, groupSize: 2, from: 'comms' });
    expect(rank.unionNs).toBe(100_000);
    expect(rank.exposedNs).toBe(60_000);
    expect(rank.overlapShare).toBeCloseTo(0.4, 9);
  });

  it('does not hide communication under compute on another device', () => {
    const rank = trace([
      op('record_param_comms', 100, 20, comms),
      launch(105, 1),
      kernel('ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)', 200, 100, 1),
      op('aten::mm', 150, 10),
      launch(152, 2),
      kernel('ampere_sgemm_128x64_tn', 200, 100, 2, 21, 1),
    ]);
    expect(rank.exposedNs).toBe(100_000);
    expect(rank.unionNs).toBe(100_000);
  });

  it('numbers each (name, group) in issue order; concurrent collectives count once in the union', () => {
    const rank = trace([
      op('record_param_comms', 100, 20, comms),
      launch(105, 1),
      op('record_param_comms', 130, 20, { ...comms, 'Collective name': 'broadcast' }),
      launch(135, 2),
      op('record_param_comms', 160, 20, comms),
      launch(165, 3),
      kernel('ncclDevKernel_AllReduce(x)', 200, 100, 1, 30),
      kernel('ncclDevKernel_Broadcast(x)', 250, 100, 2, 31),
      kernel('ncclDevKernel_AllReduce(x)', 400, 10, 3, 30),
    ]);
    expect(rank.instances.map((c) => `${c.name}#${c.index}`)).toEqual([
      'allreduce#0',
      'broadcast#0',
      'allreduce#1',
    ]);
    expect(rank.sumNs).toBe(210_000);
    expect(rank.unionNs).toBe(160_000);
    expect(rank.exposedNs).toBe(160_000);
  });

  it('names a kernel without its op from the kernel, and skips the profiler’s wait records', () => {
    const rank = trace([
      op('record_param_comms', 50, 3),
      op('record_param_comms', 60, 3, { 'Collective name': 'wait', 'Process Group Name': '0' }),
      kernel(
        'ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)',
        100,
        10,
        77,
      ),
    ]);
    expect(rank.instances.map((c) => [c.name, c.op, c.part])).toEqual([['SendRecv', -1, 'device']]);
  });

  it('times a run without a device by its CPU ops, all exposed, and says so', () => {
    const rank = trace([
      op('gloo:all_reduce', 100, 50, { 'Input Dims': [[256]], 'Input type': ['float'] }, 'user_annotation'),
      // Another thread's all_reduce at the same time: the union counts the overlap once.
      op(
        'gloo:all_reduce',
        120,
        50,
        { 'Input Dims': [[256]], 'Input type': ['float'] },
        'user_annotation',
        11,
      ),
      op('aten::add', 300, 5),
    ]);
    expect(rank.device).toBe(false);
    expect(rank.instances.map((c) => [c.name, c.part, c.index])).toEqual([
      ['all_reduce', 'cpu', 0],
      ['all_reduce', 'cpu', 1],
    ]);
    expect(rank.instances[0].size).toMatchObject({ inBytes: 1024, from: 'input' });
    expect(rank.unionNs).toBe(70_000);
    expect(rank.exposedNs).toBe(70_000);
    expect(rank.note).toMatch(/no device/);
  });

  it('knows the sizes of torch’s dtypes and the kernel families’ names', () => {
    expect(dtypeBytes('BFloat16')).toBe(2);
    expect(dtypeBytes('c10::BFloat16')).toBe(2);
    expect(dtypeBytes('Float')).toBe(4);
    expect(dtypeBytes('long int')).toBe(8);
    expect(dtypeBytes('Float8_e4m3fn')).toBe(1);
    expect(dtypeBytes('mystery')).toBeUndefined();
    expect(kernelDerivedName('ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)')).toBe(
      'AllGather',
    );
    expect(kernelDerivedName('ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)')).toBe('AllReduce');
    expect(
      kernelDerivedName(
        'void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)',
      ),
    ).toBe('multimem_all_reduce_kernel');
    expect(kernelDerivedName('one_shot_all_reduce')).toBe('one_shot_all_reduce');
  });
});

describe('real traces', () => {
  it('B200: the all-gather’s message from In/Out msg nelems, BFloat16 = 2 bytes', async () => {
    const profile = await importTrace(tracePath('tracelens_b200x8_eager.trace.json.gz'));
    const rank = rankCollectives(analyze(profile));
    const gathers = rank.instances.filter((c) => c.name === '_allgather_base');
    expect(gathers).toHaveLength(1);
    const [c] = gathers;
    expect(c).toMatchObject({ group: '3', groupRanks: '[0, 1, 2, 3, 4, 5, 6, 7]', part: 'device' });
    // The trace: "In msg nelems": 25136, "Out msg nelems": 201088, "dtype": "BFloat16", "Group size": 8.
    expect(c.size).toEqual({
      inElements: 25136,
      outElements: 201088,
      inBytes: 50272,
      outBytes: 402176,
      dtype: 'BFloat16',
      groupSize: 8,
      from: 'comms',
    });
    // Its one kernel, ncclDevKernel_AllGather_RING_LL, 21.953 µs.
    expect(c.kernels.map((k) => profile.nameOf(k))).toEqual([
      'ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)',
    ]);
    expect(c.durationNs).toBeCloseTo(21_953, 0);
  });

  it('a CPU-only gloo rank: ten all_reduces timed by their ops', async () => {
    const profile = await importTrace(tracePath('hta_cpu_only_gloo_rank34.pt.trace.json.gz'));
    const rank = rankCollectives(analyze(profile));
    expect(rank.device).toBe(false);
    expect(rank.instances).toHaveLength(10);
    expect(new Set(rank.instances.map((c) => c.name))).toEqual(new Set(['all_reduce']));
    expect(rank.instances.map((c) => c.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(rank.exposedNs).toBe(rank.unionNs);
    expect(rank.unionNs).toBeGreaterThan(0);
    expect(rank.unionNs).toBeLessThanOrEqual(rank.sumNs);
  });

  it('a DLRM worker of 2023 (no comms args): five all-to-alls and three all-reduces, sized from their inputs', async () => {
    const profile = await importTrace(
      tracePath('param_dlrm_v100x8/worker0_step_12.1694128201545.pt.trace.json.gz'),
    );
    const rank = rankCollectives(analyze(profile));
    const names = rank.instances.map((c) => c.name);
    expect(names.filter((n) => n === 'alltoall_base')).toHaveLength(5);
    expect(names.filter((n) => n === 'allreduce')).toHaveLength(3);
    expect(rank.instances.every((c) => c.part === 'device' && c.kernels.length === 1)).toBe(true);
    // nccl:all_reduce's Input Dims [[394241]], float.
    const first = rank.instances.find((c) => c.name === 'allreduce' && c.index === 0)!;
    expect(first.size).toMatchObject({ inElements: 394241, inBytes: 394241 * 4, from: 'input' });
  });
});
