/** The `flagprof summary --json` document: a stable shape other tools (and our tests) read. */
import { SLICE_KIND_NAMES, type SourceFrameKind } from '../model/profile';
import { analyzeMemory } from './memory';
import { analyzeSteps } from './steps';
import type { Analysis } from './types';

export interface SummaryJson {
  source: { path: string; format: string; events: number; warnings: string[] };
  counts: Record<string, number>;
  flows: { paired: number; start_only: number; finish_only: number };
  device_events: {
    total: number;
    linked_to_runtime: number;
    linked_to_op: number;
    by_provenance: { external_id: number; enclosure: number; none: number };
  };
  ops: {
    name: string;
    calls: number;
    cpu_self_us: number;
    cpu_total_us: number;
    device_self_us: number;
    device_total_us: number;
  }[];
  kernels: { name: string; count: number; total_us: number; top_op: string }[];
  /**
   * Every line of the ops' call chains. Self: the ops whose innermost frame is the line; total: with callees (every
   * op with the line anywhere in its chain, once). cpu_us and device_us are the self values (the older shape).
   */
  lines: {
    file: string;
    line: number;
    function: string;
    /** 1-based, where the capture knows the expression's position. */
    column?: number;
    /** Absent on an exact line: 'function' (def line), 'backward' (autograd ops), 'trace' (the trace's frames). */
    kind?: SourceFrameKind;
    exact: boolean;
    cpu_us: number;
    device_us: number;
    cpu_self_us: number;
    cpu_total_us: number;
    device_self_us: number;
    device_total_us: number;
    ops: number;
    /** The line's own top-level ops by name, largest device time first (then CPU); at most TOP_LINE_OPS. */
    top_ops: { name: string; calls: number; cpu_us: number; device_us: number }[];
  }[];
  /** ProfilerStep#N spans, when asked for (SummaryOptions) and the profile has them. */
  steps?: StepsJson;
  /** Allocations and frees, when asked for and the profile recorded them (profile_memory). */
  memory?: MemoryJson;
}

export interface StepsJson {
  count: number;
  /** In time order; start_us from the profile's t = 0; cpu_us: time inside the step's ops. */
  rows: { step: number; start_us: number; wall_us: number; cpu_us: number; device_us: number }[];
  slowest: { step: number; wall_us: number };
  first_us: number;
  /** Median wall time of the steps after the first; absent with one step. */
  steady_median_us?: number;
}

export interface MemoryJson {
  /** Totals 'trace': the allocator's own; 'deltas': summed from the window's Bytes, counted from 0. */
  devices: {
    device: string;
    samples: number;
    allocations: number;
    frees: number;
    allocated_bytes: number;
    freed_bytes: number;
    peak_allocated_bytes: number;
    peak_allocated_at_us: number;
    peak_reserved_bytes?: number;
    peak_reserved_at_us?: number;
    totals: 'trace' | 'deltas';
  }[];
  /** Per line and device, largest allocated first; at_peak_bytes: still held at the device's peak (needs Addr). */
  lines: {
    file: string;
    line: number;
    function: string;
    kind?: SourceFrameKind;
    device: string;
    allocations: number;
    frees: number;
    allocated_bytes: number;
    freed_bytes: number;
    net_bytes: number;
    at_peak_bytes?: number;
  }[];
  /** What happened on no user line (a tensor freed by Python between ops, ops outside the user's code). */
  unattributed: { device: string; allocated_bytes: number; freed_bytes: number }[];
  /** The last allocations before the profile ends, oldest first (what a run killed by OOM was doing). */
  last_allocations: {
    device: string;
    at_us: number;
    bytes: number;
    /** The device's total allocated after it; absent where the trace has no totals. */
    total_allocated_bytes?: number;
    file?: string;
    line?: number;
    function?: string;
  }[];
}

/** Sections beyond the stable core document, each present only when asked for and the profile has the data. */
export interface SummaryOptions {
  steps?: boolean;
  memory?: boolean;
}

/** Ops per line in the document: the few that explain a line, not every name. */
const TOP_LINE_OPS = 5;

/** Microseconds with nanosecond precision kept (3 decimals). */
function us(ns: number): number {
  return Math.round(ns) / 1000;
}

export function buildSummary(analysis: Analysis, options: SummaryOptions = {}): SummaryJson {
  const { profile } = analysis;
  const counts: Record<string, number> = {};
  for (let i = 0; i < profile.slices.length; i++) {
    const name = SLICE_KIND_NAMES[profile.slices.kind[i]];
    counts[name] = (counts[name] ?? 0) + 1;
  }
  counts.flow = profile.flows.length;
  const steps = options.steps ? stepsJson(analysis) : undefined;
  const memory = options.memory ? memoryJson(analysis) : undefined;
  return {
    source: {
      path: profile.path,
      format: profile.format,
      events: profile.eventCount,
      warnings: profile.warnings.map((w) =>
        w.offset === undefined ? w.message : `${w.message} (at byte ${w.offset})`,
      ),
    },
    counts,
    flows: {
      paired: analysis.flows.paired,
      start_only: analysis.flows.startOnly,
      finish_only: analysis.flows.finishOnly,
    },
    device_events: {
      total: analysis.deviceEvents.total,
      linked_to_runtime: analysis.deviceEvents.linkedToRuntime,
      linked_to_op: analysis.deviceEvents.linkedToOp,
      by_provenance: { ...analysis.deviceEvents.byProvenance },
    },
    ops: analysis.ops.map((op) => ({
      name: op.name,
      calls: op.calls,
      cpu_self_us: us(op.cpuSelfNs),
      cpu_total_us: us(op.cpuTotalNs),
      device_self_us: us(op.deviceSelfNs),
      device_total_us: us(op.deviceTotalNs),
    })),
    kernels: analysis.kernels.map((k) => ({
      name: k.name,
      count: k.count,
      total_us: us(k.totalNs),
      top_op: k.topOp,
    })),
    lines: analysis.lines.map((l) => ({
      file: l.file,
      line: l.line,
      function: l.function,
      ...(l.column === undefined ? {} : { column: l.column }),
      ...(l.kind === undefined ? {} : { kind: l.kind }),
      exact: l.exact,
      cpu_us: us(l.cpuSelfNs),
      device_us: us(l.deviceSelfNs),
      cpu_self_us: us(l.cpuSelfNs),
      cpu_total_us: us(l.cpuTotalNs),
      device_self_us: us(l.deviceSelfNs),
      device_total_us: us(l.deviceTotalNs),
      ops: l.ops,
      top_ops: l.topOps.slice(0, TOP_LINE_OPS).map((op) => ({
        name: op.name,
        calls: op.calls,
        cpu_us: us(op.cpuNs),
        device_us: us(op.deviceNs),
      })),
    })),
    ...(steps ? { steps } : {}),
    ...(memory ? { memory } : {}),
  };
}

function stepsJson(analysis: Analysis): StepsJson | undefined {
  const stats = analyzeSteps(analysis);
  if (!stats) return undefined;
  const slowest = stats.steps[stats.slowest];
  return {
    count: stats.steps.length,
    rows: stats.steps.map((s) => ({
      step: s.step,
      start_us: us(s.startNs),
      wall_us: us(s.wallNs),
      cpu_us: us(s.cpuNs),
      device_us: us(s.deviceNs),
    })),
    slowest: { step: slowest.step, wall_us: us(slowest.wallNs) },
    first_us: us(stats.firstNs),
    ...(stats.steadyMedianNs === undefined ? {} : { steady_median_us: us(stats.steadyMedianNs) }),
  };
}

function memoryJson(analysis: Analysis): MemoryJson | undefined {
  const stats = analyzeMemory(analysis);
  if (!stats) return undefined;
  return {
    devices: stats.devices.map((d) => ({
      device: d.device,
      samples: d.samples,
      allocations: d.allocations,
      frees: d.frees,
      allocated_bytes: d.allocatedBytes,
      freed_bytes: d.freedBytes,
      peak_allocated_bytes: d.peakAllocatedBytes,
      peak_allocated_at_us: us(d.peakAllocatedNs),
      ...(d.peakReservedBytes === undefined
        ? {}
        : { peak_reserved_bytes: d.peakReservedBytes, peak_reserved_at_us: us(d.peakReservedNs ?? 0) }),
      totals: d.totals,
    })),
    lines: stats.lines.map((m) => {
      const line = analysis.lines[m.line];
      return {
        file: line.file,
        line: line.line,
        function: line.function,
        ...(line.kind === undefined ? {} : { kind: line.kind }),
        device: m.device,
        allocations: m.allocations,
        frees: m.frees,
        allocated_bytes: m.allocatedBytes,
        freed_bytes: m.freedBytes,
        net_bytes: m.netBytes,
        ...(m.atPeakBytes === undefined ? {} : { at_peak_bytes: m.atPeakBytes }),
      };
    }),
    unattributed: stats.unattributed.map((u) => ({
      device: u.device,
      allocated_bytes: u.allocatedBytes,
      freed_bytes: u.freedBytes,
    })),
    last_allocations: stats.lastAllocations.map((a) => {
      const line = a.line >= 0 ? analysis.lines[a.line] : undefined;
      return {
        device: a.device,
        at_us: us(a.timeNs),
        bytes: a.bytes,
        ...(Number.isNaN(a.allocatedBytes) ? {} : { total_allocated_bytes: a.allocatedBytes }),
        ...(line ? { file: line.file, line: line.line, function: line.function } : {}),
      };
    }),
  };
}
