/**
 * Result shapes of the structural checks (torch_fl profiler.md §5 parity, the cross-backend contract, the
 * product's own): what `flagprof check` prints and the bring-up view shows. Plain data; depends on nothing.
 */

/**
 * 'info': the trace differs from torch-cuda because its stack does so by design (stock torch-cuda's own dangling
 * flow halves, ROCm's "cid" for "cbid", torch_npu's own categories): neither a pass nor a failure, and it never
 * fails `flagprof check`.
 */
export type CheckStatus = 'pass' | 'fail' | 'skip' | 'info';

/** parity: test_profiler_parity.py; contract: test_profiler_contract.py; product: checks this product adds. */
export type CheckSuite = 'parity' | 'contract' | 'product';

export interface EvidenceEvent {
  cat: string;
  name: string;
  /** Microseconds from the capture window's start when there is a window, else from the profile origin. */
  tsUs: number;
  durUs: number;
  correlation?: number;
  externalId?: number;
  /** Why this event is listed (e.g. "starts 12.3 µs before the window"). */
  note?: string;
}

export interface CheckResult {
  /** P1..P7 (parity), K1..K12 (contract), X1.. (product). */
  id: string;
  /** The upstream test name, or the product check's name. */
  name: string;
  title: string;
  suite: CheckSuite;
  status: CheckStatus;
  /** A failing required check makes `flagprof check` exit 1. */
  required: boolean;
  /** One line: what was found. For skips, the reason. */
  summary: string;
  counts: Record<string, number>;
  /** Up to ten events that show the problem (or, on a pass, what was checked). */
  examples: EvidenceEvent[];
  /** Further lines of evidence (histograms, missing keys, ...). */
  details: string[];
  /** What a tracer author should change; present on failures. */
  hint?: string;
  /** With status "info": why the trace differs from torch-cuda by design, in one line. */
  byDesign?: string;
  /** The user's line of the op behind the first example, when the trace is a session with call sites. */
  location?: SourceLocation;
}

export interface SourceLocation {
  file: string;
  /** 1-based, as are the columns. */
  line: number;
  column?: number;
  endLine?: number;
  endColumn?: number;
  /** The op whose call site it is. */
  op?: string;
}

/** Skipped checks that share one reason, listed once. */
export interface SkipGroup {
  reason: string;
  ids: string[];
}

export interface CaptureWindow {
  /** Relative to Profile.originNs, like slice times. */
  startNs: number;
  endNs: number;
  /** Where it came from: 'Trace span "<name>"', 'session.json', ... */
  source: string;
}

export interface CheckReport {
  source: { path: string; format: string; events: number; warnings: string[] };
  platform: string;
  platformReason: string;
  runtimeCategory: string;
  window: CaptureWindow | undefined;
  baseline: { source: string; generatedBy: string };
  results: CheckResult[];
  totals: { pass: number; fail: number; skip: number; info: number; requiredFailed: number };
  skipGroups: SkipGroup[];
}
