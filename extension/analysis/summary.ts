/** The `flagprof summary --json` document: a stable shape other tools (and our tests) read. */
import { SLICE_KIND_NAMES, type SourceFrameKind } from '../model/profile';
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
}

/** Ops per line in the document: the few that explain a line, not every name. */
const TOP_LINE_OPS = 5;

/** Microseconds with nanosecond precision kept (3 decimals). */
function us(ns: number): number {
  return Math.round(ns) / 1000;
}

export function buildSummary(analysis: Analysis): SummaryJson {
  const { profile } = analysis;
  const counts: Record<string, number> = {};
  for (let i = 0; i < profile.slices.length; i++) {
    const name = SLICE_KIND_NAMES[profile.slices.kind[i]];
    counts[name] = (counts[name] ?? 0) + 1;
  }
  counts.flow = profile.flows.length;
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
  };
}
