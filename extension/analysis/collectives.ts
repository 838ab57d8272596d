/**
 * One rank's collectives (NCCL / RCCL / HCCL / gloo, through c10d): each instance is its CPU op — the outermost of
 * c10d::allreduce_ ⊃ record_param_comms ⊃ nccl:all_reduce — with the device kernels the analysis linked to it, named
 * and sized from the profiler's comms args where the trace has them. Then the rank's time in collectives (a union of
 * intervals, not a sum) and its exposed communication: collective device time that no other kernel, copy or fill on
 * the same device overlaps. Matching instances across ranks is ranksCollectives.ts.
 */
import { isDeviceKind, isOpKind, type Profile } from '../model/profile';
import type { Analysis } from './types';

/** CPU ops of a collective: c10d's dispatcher ops, the profiler's comms record, a backend's own annotation. */
const COLLECTIVE_OP =
  /^(c10d::|_?c10d_functional::|record_param_comms$|(nccl|rccl|hccl|gloo|mpi|ucc|xccl|mccl|cncl|eccl|tccl):)/i;
/** Functional collectives' wait is the caller blocking on a collective already issued, not one of its own. */
const NOT_COLLECTIVE_OP = /wait_tensor$/i;
/** Device kernels that move data between ranks: the collective libraries' kernels and comms kernels by name. */
const COLLECTIVE_KERNEL =
  /nccl|rccl|hccl|mccl|cncl|eccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|send_?recv/i;

export function isCollectiveOpName(name: string): boolean {
  return COLLECTIVE_OP.test(name) && !NOT_COLLECTIVE_OP.test(name);
}

export function isCollectiveKernelName(name: string): boolean {
  return COLLECTIVE_KERNEL.test(name);
}

/** Bytes per element of torch's scalar types, by the names traces write (`dtype`, and `Input type` C++ names). */
const DTYPE_BYTES: Record<string, number> = {
  bool: 1,
  byte: 1,
  char: 1,
  uint8: 1,
  int8: 1,
  'unsigned char': 1,
  'signed char': 1,
  qint8: 1,
  quint8: 1,
  quint4x2: 1,
  float8_e4m3fn: 1,
  float8_e5m2: 1,
  float8_e4m3fnuz: 1,
  float8_e5m2fnuz: 1,
  float8_e8m0fnu: 1,
  short: 2,
  'short int': 2,
  int16: 2,
  uint16: 2,
  half: 2,
  float16: 2,
  bfloat16: 2,
  int: 4,
  int32: 4,
  uint32: 4,
  qint32: 4,
  float: 4,
  float32: 4,
  complexhalf: 4,
  long: 8,
  'long int': 8,
  'long long': 8,
  int64: 8,
  uint64: 8,
  double: 8,
  float64: 8,
  complexfloat: 8,
  complexdouble: 16,
};

/** Bytes per element of a dtype name ("BFloat16", "c10::BFloat16", "float", "long int"), or undefined. */
export function dtypeBytes(dtype: string): number | undefined {
  return DTYPE_BYTES[
    dtype
      .replace(/^(c10|at|torch)::/, '')
      .trim()
      .toLowerCase()
  ];
}

/** Which clock an instance's times come from: its device kernels, or (no kernel) its CPU op. */
export type CollectivePart = 'device' | 'cpu';

export interface MessageSize {
  /** Bytes sent (In msg nelems × dtype) and received (Out msg nelems × dtype), where known. */
  inBytes?: number;
  outBytes?: number;
  inElements?: number;
  outElements?: number;
  dtype?: string;
  groupSize?: number;
  /** `comms`: the profiler's In/Out msg nelems; `input`: the first tensor of the backend op's Input Dims. */
  from: 'comms' | 'input';
}

export interface CollectiveInstance {
  /** "allreduce", "_allgather_base", "all_to_all", …: the Collective name arg, else from the op, else the kernel. */
  name: string;
  /** The process group's name (Process Group Name / ID), else its ranks, else '' (the trace does not say). */
  group: string;
  groupRanks?: string;
  groupDescription?: string;
  /** The i-th instance of (name, group, part) on this rank, in issue order. */
  index: number;
  part: CollectivePart;
  /** The outermost collective op (a slice index), -1 for a kernel whose op is not in the trace. */
  op: number;
  /** A CPU backend's own op that ran it on the backend's worker thread (gloo:all_reduce), where one did. */
  run?: number;
  /** Its collective device slices (slice indices), in time order. */
  kernels: number[];
  size?: MessageSize;
  /**
   * Of the device part (first kernel start to last kernel end), else of the backend's run, else of the CPU op; ns
   * from profile.originNs.
   */
  startNs: number;
  endNs: number;
  /** Busy time: the union of its kernels (so a kernel split in pieces is not stretched over the gaps), or the op's. */
  durationNs: number;
  /** When it was issued (the op's start, else the kernel's): the order instances are numbered in. */
  issueNs: number;
}

export interface RankCollectives {
  instances: CollectiveInstance[];
  /** Whether the profile has device activity: without it, times are the CPU ops' and nothing can overlap them. */
  device: boolean;
  /** Union of the collectives' intervals, per device then summed (CPU ops' on a run without a device). */
  unionNs: number;
  /** The part of that union no non-collective device event on the same device overlaps (all of it without one). */
  exposedNs: number;
  /** Sum of the instances' durations (≥ unionNs: concurrent collectives count once in the union). */
  sumNs: number;
  /** 1 − exposed / union: the share of communication hidden under compute; 0 without a device. */
  overlapShare: number;
  /** Why the figures are what they are, where a reader needs to know (a run without a device). */
  note?: string;
}

/** One rank's collectives from its profile and analysis. */
export function rankCollectives(analysis: Analysis): RankCollectives {
  const profile = analysis.profile;
  const { collectiveOp, collectiveKernel, device } = classify(profile);
  const { members, kernelsOf, orphanKernels } = groupByRoot(analysis, collectiveOp, collectiveKernel);
  const { slices } = profile;
  const built: BuiltInstance[] = [];
  for (const [root, ops] of members) {
    const kernels = (kernelsOf.get(root) ?? []).sort((a, b) => slices.start[a] - slices.start[b]);
    const facts = commsFacts(profile, ops, kernels);
    // A bare record_param_comms with no comms args and no kernel is the profiler's record of a wait, as is one
    // that names its collective "wait": the caller blocking on work issued before, not a collective of its own.
    const bare = ops.every((o) => profile.nameOf(o) === 'record_param_comms');
    if (kernels.length === 0 && bare && (facts.name === undefined || facts.name === 'wait')) continue;
    built.push({ instance: makeInstance(profile, root, kernels, facts, opDerivedName(profile, ops)), ops });
  }
  const instances = joinBackendRuns(profile, built);
  for (const k of orphanKernels) {
    const facts = commsFacts(profile, [], [k]);
    const instance = makeInstance(profile, -1, [k], facts, kernelDerivedName(profile.nameOf(k)));
    // Issued when its runtime call ran, where the trace has that call.
    const runtime = analysis.runtimeOf[k];
    if (runtime >= 0) instance.issueNs = slices.start[runtime];
    instances.push(instance);
  }
  numberInstances(instances);

  const figures = device ? deviceFigures(profile, collectiveKernel) : cpuFigures(instances);
  const sumNs = instances.reduce(
    (total, c) => total + (device === (c.part === 'device') ? c.durationNs : 0),
    0,
  );
  return {
    instances,
    device,
    unionNs: figures.unionNs,
    exposedNs: figures.exposedNs,
    sumNs,
    overlapShare: figures.unionNs > 0 ? 1 - figures.exposedNs / figures.unionNs : 0,
    note: device
      ? undefined
      : 'no device activity: collective times are the CPU ops’, all exposed (no device work to overlap them)',
  };
}

interface BuiltInstance {
  instance: CollectiveInstance;
  ops: number[];
}

const C10D_OP = /^_?c10d(_functional)?::/;
const BACKEND_OP = /^[a-z]+:[^:]/i;

/**
 * CPU backends (gloo) run a collective on a worker thread of their own: the c10d op on the caller's thread only
 * queues it, and the backend's annotation there (gloo:all_reduce) is the communication itself. Each such run joins
 * the earliest queued op of the same collective not joined yet (the backend runs its queue in order): the times are
 * the run's, the name, group and issue time the op's.
 */
function joinBackendRuns(profile: Profile, built: BuiltInstance[]): CollectiveInstance[] {
  const key = (name: string): string => name.toLowerCase().replace(/[^a-z]/g, '');
  const queued = new Map<string, CollectiveInstance[]>();
  const out: CollectiveInstance[] = [];
  built.sort((a, b) => a.instance.issueNs - b.instance.issueNs);
  for (const { instance, ops } of built) {
    const names = ops.map((o) => profile.nameOf(o));
    if (instance.part === 'cpu' && names.some((name) => C10D_OP.test(name))) {
      const list = queued.get(key(instance.name));
      if (list) list.push(instance);
      else queued.set(key(instance.name), [instance]);
    } else if (instance.part === 'cpu' && names.every((name) => BACKEND_OP.test(name))) {
      const issued = queued.get(key(instance.name))?.shift();
      if (issued) {
        issued.run = instance.op;
        issued.startNs = instance.startNs;
        issued.endNs = instance.endNs;
        issued.durationNs = instance.durationNs;
        issued.size ??= instance.size;
        continue;
      }
    }
    out.push(instance);
  }
  return out;
}

/** Per slice: whether it is a collective op, a collective device event; and whether the profile has a device. */
function classify(profile: Profile): {
  collectiveOp: Uint8Array;
  collectiveKernel: Uint8Array;
  device: boolean;
} {
  const { slices } = profile;
  const n = slices.length;
  const collectiveOp = new Uint8Array(n);
  const collectiveKernel = new Uint8Array(n);
  let device = false;
  // Names are interned: test each distinct name once.
  const opName = new Map<number, boolean>();
  const kernelName = new Map<number, boolean>();
  for (let i = 0; i < n; i++) {
    const kind = slices.kind[i];
    const id = slices.name[i];
    if (isOpKind(kind)) {
      let is = opName.get(id);
      if (is === undefined) opName.set(id, (is = isCollectiveOpName(profile.strings.get(id))));
      collectiveOp[i] = is ? 1 : 0;
    } else if (isDeviceKind(kind)) {
      device = true;
      let is = kernelName.get(id);
      if (is === undefined) kernelName.set(id, (is = isCollectiveKernelName(profile.strings.get(id))));
      collectiveKernel[i] = is ? 1 : 0;
    }
  }
  return { collectiveOp, collectiveKernel, device };
}

/**
 * Collective ops and kernels by their root, the outermost collective op of the op's enclosing chain: a kernel
 * belongs to the root of the op the analysis linked it to; one whose op is not a collective's is an orphan.
 */
function groupByRoot(
  analysis: Analysis,
  collectiveOp: Uint8Array,
  collectiveKernel: Uint8Array,
): { members: Map<number, number[]>; kernelsOf: Map<number, number[]>; orphanKernels: number[] } {
  const rootOf = (op: number): number => {
    let root = -1;
    for (let a = op; a >= 0; a = analysis.opParent[a]) if (collectiveOp[a]) root = a;
    return root;
  };
  const add = (map: Map<number, number[]>, key: number, value: number) => {
    const list = map.get(key);
    if (list) list.push(value);
    else map.set(key, [value]);
  };
  const members = new Map<number, number[]>();
  const kernelsOf = new Map<number, number[]>();
  const orphanKernels: number[] = [];
  for (let i = 0; i < collectiveOp.length; i++) {
    if (collectiveOp[i]) add(members, rootOf(i), i);
    else if (collectiveKernel[i]) {
      const op = analysis.opOf[i];
      const root = op >= 0 ? rootOf(op) : -1;
      if (root < 0) orphanKernels.push(i);
      else add(kernelsOf, root, i);
    }
  }
  return { members, kernelsOf, orphanKernels };
}

/** What the comms args (record_param_comms, and the kernels on newer traces) say about an instance. */
interface CommsFacts {
  name?: string;
  group?: string;
  groupRanks?: string;
  groupDescription?: string;
  size?: MessageSize;
}

function commsFacts(profile: Profile, ops: number[], kernels: number[]): CommsFacts {
  const facts: CommsFacts = {};
  let comms: Record<string, unknown> | undefined;
  let input: MessageSize | undefined;
  for (const slice of [...ops, ...kernels]) {
    const args = profile.argsOf(slice);
    const text = (key: string): string | undefined => {
      const value = args[key];
      return typeof value === 'string' && value !== ''
        ? value
        : typeof value === 'number'
          ? String(value)
          : undefined;
    };
    facts.name ??= text('Collective name');
    facts.group ??= text('Process Group Name') ?? text('Process Group ID');
    facts.groupRanks ??= text('Process Group Ranks');
    const description = text('Process Group Description');
    if (description !== undefined && description !== 'undefined') facts.groupDescription ??= description;
    if (!comms && (typeof args['In msg nelems'] === 'number' || typeof args['Out msg nelems'] === 'number'))
      comms = args;
    if (!input && BACKEND_OP.test(profile.nameOf(slice))) input = inputSize(args);
  }
  facts.size = comms ? commsSize(comms) : input;
  return facts;
}

function commsSize(args: Record<string, unknown>): MessageSize {
  const number = (key: string): number | undefined => (typeof args[key] === 'number' ? args[key] : undefined);
  const dtype = typeof args.dtype === 'string' ? args.dtype : undefined;
  const bytes = dtype === undefined ? undefined : dtypeBytes(dtype);
  const inElements = number('In msg nelems');
  const outElements = number('Out msg nelems');
  return {
    inElements,
    outElements,
    inBytes: inElements !== undefined && bytes !== undefined ? inElements * bytes : undefined,
    outBytes: outElements !== undefined && bytes !== undefined ? outElements * bytes : undefined,
    dtype,
    groupSize: number('Group size'),
    from: 'comms',
  };
}

/** Older traces have no comms args: the backend op's (nccl:all_reduce's) first input tensor is the message. */
function inputSize(args: Record<string, unknown>): MessageSize | undefined {
  const dims = args['Input Dims'];
  const types = args['Input type'];
  if (!Array.isArray(dims) || !Array.isArray(types) || !Array.isArray(dims[0])) return undefined;
  const shape = dims[0] as unknown[];
  if (shape.length === 0 || !shape.every((d) => typeof d === 'number')) return undefined;
  const dtype = typeof types[0] === 'string' ? types[0] : undefined;
  const bytes = dtype === undefined ? undefined : dtypeBytes(dtype);
  const elements = (shape as number[]).reduce((a, b) => a * b, 1);
  return {
    inElements: elements,
    inBytes: bytes === undefined ? undefined : elements * bytes,
    dtype,
    from: 'input',
  };
}

/** c10d::allreduce_ → allreduce, c10d::_allgather_base_ → _allgather_base; else nccl:all_to_all → all_to_all. */
function opDerivedName(profile: Profile, ops: number[]): string {
  const names = ops.map((o) => profile.nameOf(o));
  const c10d = names.find((name) => C10D_OP.test(name));
  if (c10d) return c10d.replace(C10D_OP, '').replace(/_$/, '');
  const backend = names.find((name) => BACKEND_OP.test(name));
  if (backend) return backend.slice(backend.indexOf(':') + 1);
  return names[0] ?? 'collective';
}

/**
 * ncclKernel_AllReduce_RING_LL_Sum_float(…) → AllReduce, ncclDevKernel_AllGather_RING_LL(…) → AllGather; any
 * other kernel by its function's own name: void (anonymous namespace)::multimem_all_reduce_kernel<…>(…) →
 * multimem_all_reduce_kernel.
 */
export function kernelDerivedName(kernel: string): string {
  const family = /(?:nccl|rccl|hccl)(?:Dev)?Kernel_([A-Za-z]+)/i.exec(kernel);
  if (family) return family[1];
  const name = kernel
    .replace(/^void\s+/, '')
    .replace(/\(anonymous namespace\)::/g, '')
    .replace(/[(<].*$/s, '');
  const scope = name.lastIndexOf('::');
  return (scope < 0 ? name : name.slice(scope + 2)) || kernel;
}

function makeInstance(
  profile: Profile,
  op: number,
  kernels: number[],
  facts: CommsFacts,
  derivedName: string,
): CollectiveInstance {
  const { slices } = profile;
  const part: CollectivePart = kernels.length > 0 ? 'device' : 'cpu';
  let startNs: number;
  let endNs: number;
  let durationNs: number;
  if (part === 'device') {
    const merged = mergeIntervals(
      kernels.map((k) => slices.start[k]),
      kernels.map((k) => slices.end(k)),
    );
    // Kernels of no duration (a trace's rounding) still place the collective in time.
    startNs = merged.length > 0 ? merged[0] : Math.min(...kernels.map((k) => slices.start[k]));
    endNs = merged.length > 0 ? merged[merged.length - 1] : startNs;
    durationNs = intervalsLength(merged);
  } else {
    startNs = slices.start[op];
    endNs = slices.end(op);
    durationNs = slices.dur[op];
  }
  const issueNs = op >= 0 ? slices.start[op] : startNs;
  return {
    name: facts.name ?? derivedName,
    group: facts.group ?? facts.groupRanks ?? '',
    groupRanks: facts.groupRanks,
    groupDescription: facts.groupDescription,
    index: 0,
    part,
    op,
    kernels,
    size: facts.size,
    startNs,
    endNs,
    durationNs,
    issueNs,
  };
}

/** The i-th of each (name, group, part), in issue order (ties: by start). */
function numberInstances(instances: CollectiveInstance[]): void {
  instances.sort((a, b) => a.issueNs - b.issueNs || a.startNs - b.startNs);
  const next = new Map<string, number>();
  for (const c of instances) {
    const key = instanceKey(c);
    const index = next.get(key) ?? 0;
    c.index = index;
    next.set(key, index + 1);
  }
}

/** What an instance is matched on across ranks, with its index. */
export function instanceKey(c: Pick<CollectiveInstance, 'name' | 'group' | 'part'>): string {
  return `${c.part}\u0000${c.name}\u0000${c.group}`;
}

/** Device figures: per device (the device tracks' pid), the collectives' union and what compute leaves exposed. */
function deviceFigures(
  profile: Profile,
  collectiveKernel: Uint8Array,
): { unionNs: number; exposedNs: number } {
  const { slices } = profile;
  const perDevice = new Map<string, { comm: [number[], number[]]; compute: [number[], number[]] }>();
  for (let i = 0; i < slices.length; i++) {
    if (!isDeviceKind(slices.kind[i])) continue;
    const deviceId = profile.tracks[slices.track[i]]?.pid ?? '';
    let entry = perDevice.get(deviceId);
    if (!entry) perDevice.set(deviceId, (entry = { comm: [[], []], compute: [[], []] }));
    const side = collectiveKernel[i] ? entry.comm : entry.compute;
    side[0].push(slices.start[i]);
    side[1].push(slices.end(i));
  }
  let unionNs = 0;
  let exposedNs = 0;
  for (const { comm, compute } of perDevice.values()) {
    if (comm[0].length === 0) continue;
    const communication = mergeIntervals(comm[0], comm[1]);
    unionNs += intervalsLength(communication);
    exposedNs += exposedLength(communication, mergeIntervals(compute[0], compute[1]));
  }
  return { unionNs, exposedNs };
}

/** Without a device: the CPU ops' union, all of it exposed. */
function cpuFigures(instances: CollectiveInstance[]): { unionNs: number; exposedNs: number } {
  const cpu = instances.filter((c) => c.part === 'cpu');
  const unionNs = intervalsLength(
    mergeIntervals(
      cpu.map((c) => c.startNs),
      cpu.map((c) => c.endNs),
    ),
  );
  return { unionNs, exposedNs: unionNs };
}

/**
 * Intervals [starts[i], ends[i]) merged: sorted, disjoint, as a flat [s0, e0, s1, e1, …]. Touching intervals join;
 * empty ones vanish.
 */
export function mergeIntervals(starts: ArrayLike<number>, ends: ArrayLike<number>): Float64Array {
  const order = Array.from({ length: starts.length }, (_, i) => i)
    .filter((i) => ends[i] > starts[i])
    .sort((a, b) => starts[a] - starts[b]);
  const merged: number[] = [];
  for (const i of order) {
    const last = merged.length - 1;
    if (last > 0 && starts[i] <= merged[last]) merged[last] = Math.max(merged[last], ends[i]);
    else merged.push(starts[i], ends[i]);
  }
  return Float64Array.from(merged);
}

export function intervalsLength(merged: Float64Array): number {
  let total = 0;
  for (let i = 0; i < merged.length; i += 2) total += merged[i + 1] - merged[i];
  return total;
}

/** The length of `a` not covered by `b` (both merged): a two-pointer sweep. */
export function exposedLength(a: Float64Array, b: Float64Array): number {
  let exposed = 0;
  let j = 0;
  for (let i = 0; i < a.length; i += 2) {
    let cursor = a[i];
    const end = a[i + 1];
    while (j < b.length && b[j + 1] <= cursor) j += 2;
    for (let k = j; k < b.length && b[k] < end; k += 2) {
      if (b[k] > cursor) exposed += b[k] - cursor;
      cursor = Math.max(cursor, b[k + 1]);
      if (cursor >= end) break;
    }
    if (cursor < end) exposed += end - cursor;
  }
  return exposed;
}
