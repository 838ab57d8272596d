import type { Profile } from '../model/profile';
import type { KernelStat, LineStat, OpStat } from '../shared/stats';
import type { CallChains } from './lines';

// The per-op, per-kernel and per-line rows travel to the webview: they are defined with the other wire shapes.
export type { KernelStat, LineStat, OpStat } from '../shared/stats';

/** How a device event (or runtime call) was tied to the CPU op that launched it. */
export const enum LinkProvenance {
  None = 0,
  /** args["External id"] of the device event or its runtime call matched an op's External id. */
  ExternalId = 1,
  /** The innermost op on the runtime call's thread whose interval contains the call. */
  Enclosure = 2,
}

export const PROVENANCE_NAMES = ['none', 'external_id', 'enclosure'] as const;

export interface FlowStats {
  /** Ids (per category) with both an s and an f half. */
  paired: number;
  startOnly: number;
  finishOnly: number;
  /** For each paired id: the slice the s half binds to and the slice the f half binds to (-1 when unbound). */
  pairs: { cat: number; id: number; from: number; to: number }[];
  /** Per category name: paired / start-only / finish-only ids. */
  byCategory: Record<string, { paired: number; startOnly: number; finishOnly: number }>;
}

export interface Analysis {
  readonly profile: Profile;
  /** Per slice: the runtime/driver call that launched this device slice (by correlation id), or -1. */
  readonly runtimeOf: Int32Array;
  /** Per slice: for device slices and runtime calls, the CPU op that launched them, or -1. */
  readonly opOf: Int32Array;
  /** Per slice: LinkProvenance of opOf. */
  readonly provenance: Uint8Array;
  /** Per slice: for op slices, the enclosing op on the same thread (python_function frames skipped), or -1. */
  readonly opParent: Int32Array;
  /** Per slice: for op slices, CPU self time (total minus direct child ops) in ns. */
  readonly cpuSelfNs: Float64Array;
  /** Per slice: for op slices, device time of device events it launched directly / including child ops. */
  readonly deviceSelfNs: Float64Array;
  readonly deviceTotalNs: Float64Array;
  /** Per slice: for op slices, the user's source line (the innermost frame of its call chain) into `lines`, or -1. */
  readonly lineOf: Int32Array;
  /** The call chains of the ops: what a line's total (with callees) and a function's time are summed over. */
  readonly chains: CallChains;
  /** Per line (index into `lines`): its top-level op slices, and the device slices its ops launched. */
  readonly lineOps: readonly Int32Array[];
  readonly lineKernels: readonly Int32Array[];
  /** Whether the trace's External ids were trusted for linking, and why (decided from the data). */
  readonly externalIdTrusted: boolean;
  readonly trustReason: string;
  readonly flows: FlowStats;
  readonly deviceEvents: {
    total: number;
    linkedToRuntime: number;
    linkedToOp: number;
    byProvenance: { external_id: number; enclosure: number; none: number };
  };
  /** Sorted by deviceSelfNs, then cpuSelfNs, descending. */
  readonly ops: OpStat[];
  /** Sorted by totalNs descending. */
  readonly kernels: KernelStat[];
  /** Every line of a call chain (lines.ts), sorted by device self time, then CPU self time, then the totals. */
  readonly lines: LineStat[];
}
