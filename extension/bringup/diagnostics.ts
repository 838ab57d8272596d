/**
 * FLAGOS_TRACE output -> Diagnostic[]. Patterns follow the torch_fl tracer family's stderr lines (both the
 * per-component *_DEBUG vintage and the FLAGOS_TRACE vintage); the product's agent adds structured frames.
 * Matching is on full patterns, never on the prefix alone: other torch_fl code prints '[flagos] ...' too.
 * The patterns and what each line means are the catalogue in ./rules: one file per component, and one for the
 * templates several vendors print in the same words. Vendors are shared/vendors.ts's rows.
 */
import {
  VENDORS,
  VENDOR_COMPONENTS,
  VENDOR_KEYS,
  vendorOfLabel,
  vendorRow,
  type VendorKey,
} from '../shared/vendors';
import type { Rule } from './rules';
import { RULES } from './rules';
import type { Component, Diagnostic, DiagnosticFrame, DiagnosticsSummary, Severity } from './types';
import { COMPONENTS, SEVERITIES } from './types';

/** Continuation of a multi-line warning: '[flagos]' and three spaces, but not a ROCtracer '  -> ' sub-line. */
const CONTINUATION = /^\[flagos\] {3}(?!-> )/;
const OTHER_TORCH_FL = /^\[flagos(?:[ -][a-z0-9_-]+)?\]/;

function makeDiagnostic(rule: Rule, m: RegExpExecArray, raw: string, line: number): Diagnostic {
  const parsed = rule.parse(m);
  const id = parsed.line ?? rule.lines[0];
  return {
    component: id.component,
    severity: parsed.severity,
    code: id.code,
    message: parsed.message,
    counts: parsed.counts ?? {},
    fields: parsed.fields ?? {},
    raw,
    line,
    ungated: rule.ungated ?? false,
  };
}

/** A line no rule reads, kept as printed. */
function uncatalogued(
  component: Component,
  severity: Severity,
  message: string,
  raw: string,
  line: number,
): Diagnostic {
  return { component, severity, code: '', message, counts: {}, fields: {}, raw, line, ungated: false };
}

/** One line and the rule that read it, if any. */
function readLine(raw: string, line: number): { diagnostic: Diagnostic; rule?: Rule } {
  const text = raw.replace(/\r$/, '');
  // Lines may carry a prefix of their own (a timestamp, another thread's half-written output): match from '[flagos'.
  const at = text.indexOf('[flagos');
  if (at >= 0) {
    const body = text.slice(at).trimEnd();
    for (const rule of RULES) {
      const m = rule.pattern.exec(body);
      if (m) return { diagnostic: makeDiagnostic(rule, m, text, line), rule };
    }
    if (OTHER_TORCH_FL.test(body)) {
      const severity = /\bfail(ed|ure)?\b|\berror\b/i.test(body) ? 'warning' : 'info';
      return {
        diagnostic: uncatalogued('torch_fl', severity, 'torch_fl output not from the profiler.', text, line),
      };
    }
  }
  return { diagnostic: uncatalogued('unknown', 'info', 'Unrecognised line (kept as printed).', text, line) };
}

/** Parses one line (no continuation handling). Unknown lines come back with component 'unknown' or 'torch_fl'. */
export function parseLine(raw: string, line = 1): Diagnostic {
  return readLine(raw, line).diagnostic;
}

/** Parses a whole stderr log. Continuation lines join the warning they continue; empty lines are skipped. */
export function parseTraceLog(text: string, firstLine = 1): Diagnostic[] {
  const out: Diagnostic[] = [];
  let open: { diagnostic: Diagnostic; rule?: Rule } | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].replace(/\r$/, '');
    if (raw.trim() === '') continue;
    if (open && CONTINUATION.test(raw.slice(Math.max(0, raw.indexOf('[flagos'))))) {
      open.diagnostic.raw += `\n${raw}`;
      const { fields, code, component } = open.diagnostic;
      open.rule?.continuation?.(fields, raw, { code, component });
      continue;
    }
    const read = readLine(raw, firstLine + i);
    out.push(read.diagnostic);
    open = read.rule?.multiline ? read : undefined;
  }
  return out;
}

function asSeverity(value: unknown): Severity {
  const s = String(value ?? '').toLowerCase();
  if ((SEVERITIES as readonly string[]).includes(s)) return s as Severity;
  if (s === 'warn') return 'warning';
  if (s === 'fatal' || s === 'err') return 'error';
  if (s === 'trace') return 'debug';
  return 'info';
}

function asComponent(value: unknown): Component {
  const s = String(value ?? '').toLowerCase();
  if ((COMPONENTS as readonly string[]).includes(s)) return s as Component;
  // The agent names vendors by their API (mcpti): keep them in the catalogue's components.
  const vendor = vendorRow(s);
  if (vendor) return vendor.component;
  const alias: Record<string, Component> = {
    kineto: 'adaptor',
    shim: 'cupti-shim',
    rocprofiler: 'roctracer',
    env_helper: 'env',
  };
  return Object.hasOwn(alias, s) ? alias[s] : 'agent';
}

/** A structured frame of the native agent: {component, severity, message, counts}. */
export function fromFrame(frame: DiagnosticFrame, line = 1): Diagnostic {
  const counts: Record<string, number> = {};
  for (const [k, v] of Object.entries(frame.counts ?? {}))
    if (typeof v === 'number' && Number.isFinite(v)) counts[k] = v;
  const severity = asSeverity(frame.severity);
  const message = String(frame.message ?? '');
  return {
    component: asComponent(frame.component),
    severity,
    code: '',
    message,
    counts,
    fields: { source: 'frame', component: String(frame.component ?? '') },
    raw: JSON.stringify(frame),
    line,
    ungated: severity === 'error',
  };
}

function isFrame(value: unknown): value is DiagnosticFrame {
  return (
    !!value &&
    typeof value === 'object' &&
    typeof (value as DiagnosticFrame).message === 'string' &&
    'component' in (value as object)
  );
}

/** The text of a captured stderr line in a JSON line: {line}, {text} or {raw}. */
function capturedLine(value: unknown): string | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const o = value as Record<string, unknown>;
  for (const key of ['line', 'text', 'raw']) if (typeof o[key] === 'string') return o[key] as string;
  return undefined;
}

/** The value of a diagnostics.jsonl line; undefined for a line that is not a JSON object. */
function jsonLine(raw: string): unknown {
  const trimmed = raw.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

/**
 * Parses a diagnostics log of any of the shapes the product meets: plain stderr text, diagnostics.jsonl with
 * captured lines ({"line": "..."}) or structured frames ({component, severity, message, counts}), or a mix.
 */
export function parseDiagnostics(text: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const lines = text.split('\n');
  let pendingText: string[] = [];
  let pendingStart = 1;
  const flush = (): void => {
    if (pendingText.length) out.push(...parseTraceLog(pendingText.join('\n'), pendingStart));
    pendingText = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    const value = jsonLine(raw);
    if (value !== undefined && isFrame(value)) {
      flush();
      out.push(fromFrame(value, i + 1));
      continue;
    }
    const captured = value !== undefined ? capturedLine(value) : undefined;
    const asText = captured ?? raw;
    if (!pendingText.length) pendingStart = i + 1;
    // Keep line numbers aligned with the file: a JSON line holding several lines is rare and gets its first.
    if (pendingText.length && pendingStart + pendingText.length !== i + 1) {
      flush();
      pendingStart = i + 1;
    }
    pendingText.push(asText.replace(/\n+$/, ''));
  }
  flush();
  return out;
}

/** Accepts already-parsed input too: frames as objects, or Diagnostics. */
export function normalizeDiagnostics(
  input: readonly (Diagnostic | DiagnosticFrame | string)[],
): Diagnostic[] {
  const out: Diagnostic[] = [];
  input.forEach((item, i) => {
    if (typeof item === 'string') out.push(...parseTraceLog(item, i + 1));
    else if ('raw' in item && 'code' in item) out.push(item as Diagnostic);
    else out.push(fromFrame(item as DiagnosticFrame, i + 1));
  });
  return out;
}

function emptySummary(total: number): DiagnosticsSummary {
  return {
    tracer: '',
    vintage: '',
    library: '',
    apiVersion: '',
    registered: undefined,
    sessions: 0,
    eventsDrained: undefined,
    linked: undefined,
    candidates: undefined,
    resolver: '',
    inWindow: undefined,
    totalDevice: undefined,
    window: undefined,
    enableResults: {},
    buffersRequested: 0,
    buffersCompleted: 0,
    emptyBuffers: 0,
    recordsDropped: {},
    byComponent: {},
    bySeverity: { error: 0, warning: 0, info: 0, debug: 0 },
    total,
  };
}

/**
 * What the summary gathers across lines before it settles: tracer votes, what says no vendor library loaded, and
 * the two counts of window drops.
 */
interface Tally {
  /** Lines per vendor component. */
  tracerVotes: Record<string, number>;
  /** The agent's lines that name their tracer (A20, A21), per vendor. */
  namedVotes: Record<string, number>;
  /** component/code of every catalogued line. */
  lines: Set<string>;
  /** The libraries the agent's load failure names (its last A22 saying so). */
  tried: string[] | undefined;
  /** FLAGOS_TRACER_LIBRARY paths that could not be loaded (S1). */
  overrides: string[];
  /** A14 lines: one per device event dropped outside the window. */
  droppedLines: number;
  /** A16's count of every window drop, when printed. */
  droppedTotal: number | undefined;
}

function drop(s: DiagnosticsSummary, reason: string, count: number): void {
  if (count > 0) s.recordsDropped[reason] = (s.recordsDropped[reason] ?? 0) + count;
}

/** What a catalogued line adds to the summary; false when its code adds nothing beyond the counts by kind. */
function addCatalogued(s: DiagnosticsSummary, d: Diagnostic, tally: Tally): boolean {
  const c = d.counts;
  switch (d.code) {
    case 'A1':
    case 'A2':
      s.registered = d.code === 'A1';
      return true;
    case 'A3':
    case 'U4':
    case 'T4':
      s.sessions++;
      return true;
    case 'A4':
      s.eventsDrained = c.eventsDrained;
      if (c.recordsDropped) drop(s, 'agent', c.recordsDropped);
      return true;
    case 'A6':
      s.window = [d.fields.windowStart, d.fields.windowEnd];
      return true;
    case 'A11':
      s.inWindow = c.inWindow;
      s.totalDevice = c.total;
      return true;
    case 'A14':
      tally.droppedLines++;
      return true;
    case 'A16':
      s.linked = c.linked;
      s.candidates = c.candidates;
      s.resolver = d.fields.resolver;
      tally.droppedTotal = (tally.droppedTotal ?? 0) + c.dropped;
      return true;
    case 'C4':
    case 'C8':
    case 'M4':
    case 'U2':
      for (const [k, v] of Object.entries(c)) if (/^[A-Z_]+$/.test(k)) s.enableResults[k] = v;
      return true;
    case 'M5':
    case 'M6':
    case 'T2':
      for (const k of Object.keys(c)) s.enableResults[k] = 1;
      return true;
    case 'C13':
      s.buffersRequested++;
      return true;
    case 'C14':
    case 'R11':
      s.buffersCompleted++;
      if (c.validSize === 0) s.emptyBuffers++;
      return true;
    case 'C15':
      drop(s, 'no timing', 1);
      return true;
    case 'C17':
      drop(s, 'buffer record bound', 1);
      return true;
    case 'R12':
      drop(s, 'event cap', 1);
      return true;
  }
  return false;
}

/** The agent's frames name their counts directly. */
function addFrame(s: DiagnosticsSummary, c: Record<string, number>): void {
  if (c.eventsDrained !== undefined) s.eventsDrained = c.eventsDrained;
  if (c.buffersRequested !== undefined) s.buffersRequested += c.buffersRequested;
  if (c.buffersCompleted !== undefined) s.buffersCompleted += c.buffersCompleted;
  if (c.recordsDropped !== undefined) drop(s, 'agent', c.recordsDropped);
  if (c.linked !== undefined) s.linked = c.linked;
  if (c.candidates !== undefined) s.candidates = c.candidates;
  if (c.inWindow !== undefined) s.inWindow = c.inWindow;
  if (c.total !== undefined && c.inWindow !== undefined) s.totalDevice = c.total;
}

function addDiagnostic(s: DiagnosticsSummary, d: Diagnostic, tally: Tally): void {
  s.byComponent[d.component] = (s.byComponent[d.component] ?? 0) + 1;
  s.bySeverity[d.severity]++;
  const votes = tally.tracerVotes;
  if (VENDOR_COMPONENTS.includes(d.component)) votes[d.component] = (votes[d.component] ?? 0) + 1;
  if (d.component === 'cupti-shim') votes.cupti = (votes.cupti ?? 0) + 1;
  const named = d.fields.tracer === undefined ? undefined : vendorOfLabel(d.fields.tracer);
  if (named) tally.namedVotes[named] = (tally.namedVotes[named] ?? 0) + 1;
  if (d.code) tally.lines.add(`${d.component}/${d.code}`);
  if (d.code === 'A22' && d.fields.tried !== undefined)
    tally.tried = d.fields.tried.split('; ').filter(Boolean);
  if (d.code === 'S1' && d.fields.path !== undefined) tally.overrides.push(d.fields.path);
  if (d.fields.vintage) s.vintage = d.fields.vintage;
  if (d.fields.library) s.library = d.fields.library;
  if (d.fields.apiVersion) s.apiVersion = d.fields.apiVersion;
  if (!addCatalogued(s, d, tally) && d.fields.source === 'frame') addFrame(s, d.counts);
}

/** The name with the most votes; none on a tie. */
function leader(votes: Record<string, number>): string {
  let best = '';
  let top = 0;
  let tie = false;
  for (const [name, count] of Object.entries(votes)) {
    if (count > top) [best, top, tie] = [name, count, false];
    else if (count === top) tie = true;
  }
  return tie ? '' : best;
}

/**
 * The vendor whose tracer the lines come from: the one the agent's lines name, else the component most lines
 * came from (none on a tie). Where one component serves several APIs (the CUPTI tracer: CUPTI and MCPTI), the
 * library bound tells them apart.
 */
function leadingTracer(tally: Tally, library: string): VendorKey | '' {
  const named = leader(tally.namedVotes);
  const component = named ? VENDORS[named as VendorKey].component : leader(tally.tracerVotes);
  const rows = VENDOR_KEYS.filter((key) => VENDORS[key].component === component);
  if (rows.length === 0) return '';
  const file = library.slice(library.lastIndexOf('/') + 1);
  // The library bound is the strongest evidence: the agent's CUPTI-family binding prints CUPTI's lines for MUPTI's
  // and TOPSPTI's libraries too.
  const bound = file ? VENDOR_KEYS.find((key) => file.startsWith(VENDORS[key].library)) : undefined;
  if (bound && (rows.includes(bound) || component === 'cupti')) return bound;
  return named ? (named as VendorKey) : rows[0];
}

/**
 * Whether the lines say that no vendor activity library loaded: the agent's load failure, or the line of every
 * API that prints one when none of its libraries loaded (the agent prints them all then). Undefined when they do
 * not; else what was tried, as far as the lines name it.
 */
function noLibraryLoaded(tally: Tally): { tried: string[] } | undefined {
  if (tally.tried) return { tried: tally.tried };
  const unavailable = VENDOR_KEYS.flatMap((key) => {
    const { component, unavailableCode } = VENDORS[key];
    return unavailableCode ? [`${component}/${unavailableCode}`] : [];
  });
  if (!unavailable.every((line) => tally.lines.has(line))) return undefined;
  return { tried: tally.overrides.map((path) => `FLAGOS_TRACER_LIBRARY=${path}`) };
}

/** Lifts the counts a bring-up engineer asks for first out of a parsed log. */
export function summarizeDiagnostics(diagnostics: readonly Diagnostic[]): DiagnosticsSummary {
  const s = emptySummary(diagnostics.length);
  const tally: Tally = {
    tracerVotes: {},
    namedVotes: {},
    lines: new Set(),
    tried: undefined,
    overrides: [],
    droppedLines: 0,
    droppedTotal: undefined,
  };
  for (const d of diagnostics) addDiagnostic(s, d, tally);
  // A16's count covers every window drop; the per-event A14 lines only the device ones. Prefer the total.
  drop(s, 'outside window', tally.droppedTotal ?? tally.droppedLines);
  const none = noLibraryLoaded(tally);
  if (none) s.noLibraryLoaded = none;
  else s.tracer = leadingTracer(tally, s.library);
  if (!s.vintage && diagnostics.some((d) => d.component === 'env' && d.code === 'E1')) s.vintage = 'B';
  return s;
}

/** The clock domain: device timestamps ~1e17 ns and more away from the window are another clock's. */
function clockFinding(diagnostics: readonly Diagnostic[]): Diagnostic | undefined {
  const window = [...diagnostics].reverse().find((d) => d.code === 'A6');
  const first = [...diagnostics].reverse().find((d) => d.code === 'A8' || d.code === 'A10');
  if (!window || !first) return undefined;
  const start = BigInt(first.fields.start);
  const lo = BigInt(window.fields.windowStart);
  const gap = start > lo ? start - lo : lo - start;
  if (gap <= 100_000_000_000_000_000n) return undefined;
  return {
    component: 'adaptor',
    severity: 'error',
    code: 'F-clock',
    message: `Device timestamps are ${Number(gap / 1_000_000_000n).toExponential(2)} s away from the capture window: one side reads CLOCK_MONOTONIC/BOOTTIME, the other CLOCK_REALTIME (epoch ns). Convert vendor timestamps to epoch ns (affine fit of clock samples).`,
    counts: {},
    fields: { start: first.fields.start, windowStart: window.fields.windowStart, gapNs: gap.toString() },
    raw: `${first.raw}\n${window.raw}`,
    line: first.line,
    ungated: false,
  };
}

/** An unbalanced correlation stack: the ROCtracer push lines' depth keeps growing. */
function stackFinding(diagnostics: readonly Diagnostic[]): Diagnostic | undefined {
  const pushes = diagnostics.filter((d) => d.code === 'R9');
  if (pushes.length < 20) return undefined;
  const firstDepth = pushes[0].counts.depth;
  const last = pushes[pushes.length - 1];
  const lastDepth = last.counts.depth;
  if (lastDepth - firstDepth < 10) return undefined;
  return {
    component: 'roctracer',
    severity: 'error',
    code: 'F-stack',
    message: `The correlation stack grew from depth ${firstDepth} to ${lastDepth}: push and pop are unbalanced, so launches carry the External id of a later op.`,
    counts: { firstDepth, lastDepth },
    fields: {},
    raw: last.raw,
    line: last.line,
    ungated: false,
  };
}

/**
 * Findings that no single line states but two lines together do: the clock domain (first event against the
 * window) and an unbalanced correlation stack. Returned as extra diagnostics with component of the line that
 * carries the evidence.
 */
export function deriveFindings(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return [clockFinding(diagnostics), stackFinding(diagnostics)].filter(
    (d): d is Diagnostic => d !== undefined,
  );
}

/** The catalogue codes this parser knows, for tests and documentation. */
export const KNOWN_CODES: readonly string[] = RULES.flatMap((r) => r.lines.map((line) => line.code));

/**
 * The log as a person reads it: diagnostics.jsonl lines shown as the text they captured (frames as
 * "[component] severity: message"), one output line per input line so line numbers still point into the file.
 */
export function displayLog(text: string): string {
  return text
    .split('\n')
    .map((raw) => {
      const value = jsonLine(raw);
      if (value === undefined) return raw;
      if (isFrame(value)) return `[${String(value.component)}] ${String(value.severity)}: ${value.message}`;
      return capturedLine(value)?.replace(/\n/g, ' ') ?? raw;
    })
    .join('\n');
}
