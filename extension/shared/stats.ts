/**
 * The per-op, per-kernel and per-line totals of an analysis: the CLI's tables and JSON, the editor's hovers and the
 * timeline's tables all show these rows. Plain data that travels in the timeline payload; depends on nothing.
 */

export interface OpStat {
  name: string;
  calls: number;
  cpuSelfNs: number;
  cpuTotalNs: number;
  deviceSelfNs: number;
  deviceTotalNs: number;
}

export interface KernelStat {
  name: string;
  /** kernel, memcpy or memset */
  kind: string;
  count: number;
  totalNs: number;
  /** The op name that launched most of this kernel's time, '' when none is linked. */
  topOp: string;
}

export interface LineStat {
  file: string;
  line: number;
  function: string;
  /** true when the line is the exact call site (capture agent's sites.json); false: the function's def line. */
  exact: boolean;
  cpuNs: number;
  deviceNs: number;
  /** Top-level ops attributed to the line. */
  ops: number;
  /** Op names under this line with their device and CPU time, largest device time first. */
  topOps: { name: string; cpuNs: number; deviceNs: number; calls: number }[];
  /** Kernel names launched from this line with their time, largest first. */
  topKernels: { name: string; count: number; totalNs: number }[];
}
