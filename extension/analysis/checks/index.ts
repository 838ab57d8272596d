/**
 * runChecks(profile, analysis): every structural check on one profile. The capture window is the longest "Trace"
 * span when the trace has one (what torch.profiler writes and what upstream's checks read); otherwise the
 * profiling window of the session (session.json), when the profile comes from a session; otherwise none, and the
 * window checks fail saying so.
 */
import type { Profile } from '../../model/profile';
import type { Analysis } from '../types';
import type { Baseline } from './baseline';
import { shippedBaseline } from './baseline';
import type { CheckContext, CheckDefinition, CheckMeta } from './context';
import { PLATFORM_CAPABILITIES } from './context';
import { runtimeCategory } from './parity';
import { importFailure } from './product';
import { CHECKS, TRACE_IS_JSON } from './registry';
import type { CaptureWindow, CheckReport, CheckResult } from './types';
import { TraceView } from './view';

export type { CaptureWindow, CheckReport, CheckResult, CheckStatus, EvidenceEvent } from './types';
export { BaselineError, deriveBaseline, parseBaseline, shippedBaseline } from './baseline';
export type { Baseline } from './baseline';

export interface CheckOptions {
  baseline?: Baseline;
  /** A platform name of the contract's capability table; detected from the data when absent. */
  platform?: string;
  /** The profiling window from session.json, absolute epoch ns. */
  sessionWindow?: { startNs: bigint; endNs: bigint };
  /**
   * Set when the session recorded no device activity on purpose (capture mode cpu) and why: device checks are
   * then skipped with that reason instead of failing.
   */
  cpuOnlyReason?: string;
  /** The session's capture mode, when the profile comes from a session. */
  captureMode?: string;
}

/**
 * The longest "Trace" span, as both upstream checks pick it. A session written in segments (the profiler restarted
 * every few seconds so a killed run keeps its profile) has one Trace span per segment: its window runs from the
 * first span's start to the last one's end.
 */
export function traceSpanWindow(profile: Profile): CaptureWindow | undefined {
  const s = profile.slices;
  let best = -1;
  let first = -1;
  let last = -1;
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    if (profile.categoryOf(i) !== 'Trace') continue;
    count++;
    if (best < 0 || s.dur[i] > s.dur[best]) best = i;
    if (first < 0 || s.start[i] < s.start[first]) first = i;
    if (last < 0 || s.start[i] + s.dur[i] > s.start[last] + s.dur[last]) last = i;
  }
  if (best < 0) return undefined;
  const session = profile.metadata.session as { trace?: { segments?: unknown } } | undefined;
  const segments = Number(session?.trace?.segments ?? 0);
  if (count > 1 && segments > 1) {
    return {
      startNs: s.start[first],
      endNs: s.start[last] + s.dur[last],
      source: `${count} Trace spans of a session written in ${segments} segments`,
    };
  }
  return {
    startNs: s.start[best],
    endNs: s.start[best] + s.dur[best],
    source: `Trace span "${profile.nameOf(best)}"`,
  };
}

export function captureWindow(profile: Profile, options: CheckOptions = {}): CaptureWindow | undefined {
  const span = traceSpanWindow(profile);
  if (span) return span;
  if (options.sessionWindow) {
    const { startNs, endNs } = options.sessionWindow;
    return {
      startNs: Number(startNs - profile.originNs),
      endNs: Number(endNs - profile.originNs),
      source: 'session.json profiling window',
    };
  }
  return undefined;
}

/** Which row of the capability table applies, and why. */
export function detectPlatform(profile: Profile, explicit?: string): { platform: string; reason: string } {
  if (explicit) {
    const p = explicit.toLowerCase();
    return { platform: p in PLATFORM_CAPABILITIES ? p : 'other', reason: 'set by the user' };
  }
  const md = profile.metadata;
  const props = (md.deviceProperties ?? md.computeProperties) as unknown;
  const names = Array.isArray(props)
    ? props.map((p) => String((p as { name?: unknown })?.name ?? '')).join(' ')
    : '';
  if (
    md.roctracer_version !== undefined ||
    md.hip_runtime_version !== undefined ||
    /AMD|Instinct|Radeon|Hygon|DCU/i.test(names)
  )
    return { platform: 'dcu', reason: 'ROCm trace (roctracer/hip versions or an AMD/Hygon device)' };
  if (/Ascend|NPU/i.test(names)) return { platform: 'ascend', reason: `device ${names}` };
  if (/MetaX|\bC5\d\d\b/i.test(names)) return { platform: 'metax', reason: `device ${names}` };
  if (/MTT|Moore/i.test(names)) return { platform: 'musa', reason: `device ${names}` };
  if (/Enflame|GCU/i.test(names)) return { platform: 'gcu', reason: `device ${names}` };
  if (
    md.cupti_version !== undefined ||
    md.cuda_runtime_version !== undefined ||
    /NVIDIA|Tesla|Quadro|GeForce|RTX/i.test(names)
  )
    return {
      platform: 'cuda',
      reason: names
        ? `device ${names.split(' ').slice(0, 3).join(' ')}…`
        : 'CUPTI/CUDA versions in the trace',
    };
  // An agent-mode capture says whose activity API recorded it; MSPTI is Ascend's alone (CUPTI-compatible libraries
  // are several vendors', so a CUPTI capture decides nothing by itself).
  const capture = md.capture as { vendor?: unknown } | undefined;
  if (capture?.vendor === 'mspti')
    return { platform: 'ascend', reason: 'agent-mode capture recorded through MSPTI' };
  // ROCtracer is ROCm's, and Hygon DCUs run a ROCm stack: a ROCtracer capture is judged by the DCU row.
  if (capture?.vendor === 'roctracer')
    return { platform: 'dcu', reason: 'agent-mode capture recorded through ROCtracer' };
  return { platform: 'other', reason: 'no device properties name a known platform' };
}

/** What a result repeats of its check: the definition less how it runs. */
function metaOf(check: CheckDefinition): CheckMeta {
  return { id: check.id, name: check.name, title: check.title, suite: check.suite };
}

/** A check a CPU-only capture cannot be held to, skipped with the session's reason. */
function skippedWithoutDevice(result: CheckResult, reason: string): CheckResult {
  return {
    ...result,
    status: 'skip',
    required: false,
    summary: `CPU-only capture: ${reason}`,
    hint: undefined,
    examples: [],
  };
}

function totals(results: CheckResult[]): CheckReport['totals'] {
  const t = { pass: 0, fail: 0, skip: 0, requiredFailed: 0 };
  for (const r of results) {
    t[r.status]++;
    if (r.status === 'fail' && r.required) t.requiredFailed++;
  }
  return t;
}

export function runChecks(profile: Profile, analysis: Analysis, options: CheckOptions = {}): CheckReport {
  const baseline = options.baseline ?? shippedBaseline();
  const window = captureWindow(profile, options);
  const { platform, reason } = detectPlatform(profile, options.platform);
  const view = new TraceView(profile, window);
  const ctx: CheckContext = {
    profile,
    analysis,
    view,
    window,
    platform,
    capabilities: PLATFORM_CAPABILITIES[platform] ?? PLATFORM_CAPABILITIES.other,
    captureMode: options.captureMode ?? '',
    baseline,
    runtimeCategory: runtimeCategory(view, baseline),
  };
  const cpuOnly = options.cpuOnlyReason;
  const results = CHECKS.map((check) => {
    const result = check.run(ctx, metaOf(check));
    return cpuOnly && !check.withoutDevice ? skippedWithoutDevice(result, cpuOnly) : result;
  });
  return {
    source: {
      path: profile.path,
      format: profile.format,
      events: profile.eventCount,
      warnings: profile.warnings.map((w) => w.message),
    },
    platform,
    platformReason: reason,
    runtimeCategory: ctx.runtimeCategory,
    window,
    baseline: { source: baseline.source, generatedBy: baseline.generatedBy },
    results,
    totals: totals(results),
  };
}

/** The report for a trace the importer rejected: X1 fails with the reason, everything else is skipped. */
export function importFailureReport(
  path: string,
  message: string,
  baseline: Baseline = shippedBaseline(),
): CheckReport {
  const results = [importFailure(metaOf(TRACE_IS_JSON), path, message)];
  return {
    source: { path, format: 'unreadable', events: 0, warnings: [message] },
    platform: 'other',
    platformReason: 'the trace could not be read',
    runtimeCategory: '',
    window: undefined,
    baseline: { source: baseline.source, generatedBy: baseline.generatedBy },
    results,
    totals: totals(results),
  };
}
