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

/** How a source frame was found, when it is not simply the exact line of the expression that called. */
export type SourceFrameKind =
  /** Only the function is known (the op ran in it, on no line the capture could tell): `line` is its def line. */
  | 'function'
  /** Autograd ops: charged to the line that called backward() (the engine runs them with no Python frame). */
  | 'backward'
  /** A `file(line)` frame the trace itself carries (the `Call stack` arg of 2021-era traces). */
  | 'trace';

/** An op name under a line: its calls' CPU wall time and the device time they launched, child ops included. */
export interface LineOpStat {
  name: string;
  calls: number;
  cpuNs: number;
  deviceNs: number;
}

export interface LineKernelStat {
  name: string;
  count: number;
  totalNs: number;
}

/**
 * One source line, keyed by (file, line, kind). `self`: the ops whose innermost user frame is this line. `total`
 * (with callees): every op with this line anywhere in its call-site chain, counted once per line even when the
 * line recurs in the chain. Without call sites the two are equal.
 */
export interface LineStat {
  file: string;
  /** 1-based; the function's def line when kind is 'function'. */
  line: number;
  function: string;
  /** 1-based column of the leftmost expression on the line that ran ops, where the capture knows it. */
  column?: number;
  /** Absent: the exact line of the expression that called. */
  kind?: SourceFrameKind;
  /** true unless kind is 'function' (kept for readers of the older shape). */
  exact: boolean;
  cpuSelfNs: number;
  cpuTotalNs: number;
  deviceSelfNs: number;
  deviceTotalNs: number;
  /** Top-level op calls made from the line itself (self). */
  ops: number;
  /** The line's own top-level ops by name, largest device time first (then CPU time). */
  topOps: LineOpStat[];
  /** Device events launched by the line's own ops, by name, largest time first. */
  topKernels: LineKernelStat[];
}
