/**
 * Structured FLAGOS_TRACE diagnostics: one per line the torch_fl tracer family prints (or one per structured frame
 * of our own agent). Lines nobody recognises are kept with component 'unknown': a bring-up log is evidence, and
 * nothing in it may silently disappear. These shapes, with the session header, are what the bring-up view
 * receives; depends on nothing.
 */

export type Severity = 'error' | 'warning' | 'info' | 'debug';

export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'info', 'debug'];

/**
 * Who printed the line. 'adaptor' is the generic kineto plugin (flagos_kineto_profiler.cc); 'cupti-shim' the dlopen
 * shim; 'env' the FLAGOS_* variable readers; 'torch_fl' other torch_fl output sharing the [flagos prefix; 'agent'
 * the product's own native agent; 'unknown' anything else (kept verbatim).
 */
export type Component =
  | 'adaptor'
  | 'cupti'
  | 'cupti-shim'
  | 'mspti'
  | 'mupti'
  | 'topspti'
  | 'roctracer'
  | 'env'
  | 'agent'
  | 'torch_fl'
  | 'unknown';

export const COMPONENTS: readonly Component[] = [
  'adaptor',
  'cupti',
  'cupti-shim',
  'mspti',
  'mupti',
  'topspti',
  'roctracer',
  'env',
  'agent',
  'torch_fl',
  'unknown',
];

export interface Diagnostic {
  component: Component;
  severity: Severity;
  /** Catalogue id of the line (A4, C16, ...), or '' for structured frames and unknown lines. */
  code: string;
  /** One human sentence: what the line means for bring-up, not a copy of the line. */
  message: string;
  /** Numbers lifted out of the line (events drained, linked/candidates, enable results, ...). */
  counts: Record<string, number>;
  /** Non-numeric values: library path, window bounds as decimal epoch ns (beyond 2^53), names. */
  fields: Record<string, string>;
  /** The line as printed (continuation lines of a multi-line warning joined with '\n'). */
  raw: string;
  /** 1-based line number in the log the diagnostic starts on. */
  line: number;
  /** true when the tracer prints it even with FLAGOS_TRACE off. */
  ungated: boolean;
}

/** What the whole log says, lifted out for the session header and the checks. */
export interface DiagnosticsSummary {
  /**
   * The vendor whose tracer the lines come from, by its key in shared/vendors.ts ('cupti', 'mcpti', 'mspti', ...);
   * '' when none spoke, when as many lines came from two vendors, or when no vendor library loaded.
   */
  tracer: string;
  /** Set when the lines say that no vendor activity library loaded: the libraries tried, where the lines name them. */
  noLibraryLoaded?: { tried: string[] };
  /** 'A' (per-component *_DEBUG switches), 'B' (FLAGOS_TRACE) or '' when the log does not tell. */
  vintage: string;
  library: string;
  apiVersion: string;
  /** The plugin registered with kineto (A1) / reported no tracer (A2); undefined when neither was printed. */
  registered: boolean | undefined;
  sessions: number;
  eventsDrained: number | undefined;
  linked: number | undefined;
  candidates: number | undefined;
  resolver: string;
  inWindow: number | undefined;
  totalDevice: number | undefined;
  /** Last processTrace window, decimal epoch ns. */
  window: [string, string] | undefined;
  /** Per activity kind: the last enable/setup result seen (0 = success). */
  enableResults: Record<string, number>;
  buffersRequested: number;
  buffersCompleted: number;
  emptyBuffers: number;
  /** Records lost, by reason. */
  recordsDropped: Record<string, number>;
  byComponent: Record<string, number>;
  bySeverity: Record<Severity, number>;
  total: number;
}

/** The bring-up view's session header (mode, tracer and why, library, API version). */
export interface SessionHeader {
  mode: string;
  modeReason: string;
  /** The vendor tracer chosen and why. */
  tracer: string;
  tracerReason: string;
  library: string;
  apiVersion: string;
  device: string;
  torch: string;
  python: string;
  exitCode: number | undefined;
}
