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
import { PLATFORM_CAPABILITIES, info } from './context';
import { detectPlatform } from './platform';
import { runtimeCategory } from './parity';
import { importFailure } from './product';
import { CHECKS, TRACE_IS_JSON } from './registry';
import type { CaptureWindow, CheckReport, CheckResult, SkipGroup } from './types';
import { TraceView } from './view';

export type { CaptureWindow, CheckReport, CheckResult, CheckStatus, EvidenceEvent, SkipGroup } from './types';
export { detectPlatform } from './platform';
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
  const t = { pass: 0, fail: 0, skip: 0, info: 0, requiredFailed: 0 };
  for (const r of results) {
    t[r.status]++;
    if (r.status === 'fail' && r.required) t.requiredFailed++;
  }
  return t;
}

/** Identical skip reasons, once each, in report order: a CPU-only capture skips most checks for one reason. */
export function skipGroups(results: readonly CheckResult[]): SkipGroup[] {
  const groups = new Map<string, string[]>();
  for (const r of results) {
    if (r.status !== 'skip') continue;
    const ids = groups.get(r.summary);
    if (ids) ids.push(r.id);
    else groups.set(r.summary, [r.id]);
  }
  return [...groups].map(([reason, ids]) => ({ reason, ids }));
}

/** Platforms whose stock torch stack writes its own categories instead of Kineto's CUDA names. */
const OWN_CATEGORY_STACKS: Record<string, string> = {
  ascend: "torch_npu's own trace (no Trace span, no kernel/*_runtime categories, HostToDevice flows)",
  mtia: "the MTIA plugin's categories (mtia_runtime, mtia_ccp_events)",
  xpu: "the XPU plugin's categories (xpu_*)",
};

/**
 * Whether the trace comes from a vendor's stock stack that writes its own categories: the platform is one of
 * those stacks and nothing in it is a torch_fl tracer's (no privateuse1_* category, no Kineto device category).
 * The parity checks then compare a format with another by design; a torch_fl trace on the same device is judged.
 */
function ownCategoryStack(ctx: CheckContext): string | undefined {
  const stack = OWN_CATEGORY_STACKS[ctx.platform];
  if (!stack || ctx.captureMode === 'agent') return undefined;
  const cats = ctx.view.completeCategories;
  if ([...cats].some((c) => c.startsWith('privateuse1_'))) return undefined;
  if (ctx.view.eventsIn('kernel').length > 0 || ctx.runtimeCategory) return undefined;
  return `${stack}: a stock ${ctx.platform} trace differs from torch-cuda's structure by design; the checks hold a torch_fl tracer's Kineto export to it`;
}

/** The call site of the op behind a failure's first example that has one (sessions with sites.json only). */
function locate(profile: Profile, result: CheckResult): CheckResult {
  if (result.status !== 'fail' || !profile.sites) return result;
  for (const e of result.examples) {
    const frame = e.externalId === undefined ? undefined : profile.sites.get(e.externalId)?.[0];
    if (!frame) continue;
    const { file, line, column, endLine, endColumn } = frame;
    return { ...result, location: { file, line, column, endLine, endColumn, op: e.name } };
  }
  return result;
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
  const ownStack = ownCategoryStack(ctx);
  const results = CHECKS.map((check) => {
    const result = check.run(ctx, metaOf(check));
    if (cpuOnly && !check.withoutDevice) return skippedWithoutDevice(result, cpuOnly);
    if (ownStack && result.status === 'fail' && check.suite !== 'product') return info(result, ownStack);
    return locate(profile, result);
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
    skipGroups: skipGroups(results),
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
    skipGroups: [],
  };
}
