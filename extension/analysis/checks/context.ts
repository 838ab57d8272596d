/** What every check reads, and the constructors of results. */
import type { Profile } from '../../model/profile';
import type { Analysis } from '../types';
import type { Baseline } from './baseline';
import type { CaptureWindow, CheckResult, EvidenceEvent } from './types';
import type { TraceView } from './view';

/**
 * Capability rows of the cross-backend contract (profiler_support.py, newest variant), plus rows of our own for
 * traces upstream has no row for: rocm (AMD Instinct/Radeon through ROCtracer: runtime events carry "cid", not
 * "cbid"), mtia and xpu (stock torch plugins; nothing declared beyond the device rows). dcu stays Hygon's row.
 */
export interface Capabilities {
  cbid: boolean;
  memcpy: boolean;
  memset: boolean;
  /** Upstream marks the linkage case xfail (non-strict) on this platform. */
  linkageXfail: boolean;
}

export const PLATFORM_CAPABILITIES: Record<string, Capabilities> = {
  cuda: { cbid: true, memcpy: true, memset: true, linkageXfail: true },
  metax: { cbid: true, memcpy: true, memset: true, linkageXfail: false },
  ppu: { cbid: true, memcpy: true, memset: false, linkageXfail: false },
  musa: { cbid: true, memcpy: true, memset: false, linkageXfail: false },
  dcu: { cbid: true, memcpy: false, memset: false, linkageXfail: false },
  rocm: { cbid: false, memcpy: true, memset: false, linkageXfail: false },
  ascend: { cbid: false, memcpy: true, memset: false, linkageXfail: false },
  gcu: { cbid: true, memcpy: false, memset: false, linkageXfail: false },
  mtia: { cbid: false, memcpy: false, memset: false, linkageXfail: false },
  xpu: { cbid: false, memcpy: false, memset: false, linkageXfail: false },
  other: { cbid: true, memcpy: false, memset: false, linkageXfail: false },
};

export interface CheckContext {
  profile: Profile;
  analysis: Analysis;
  view: TraceView;
  window: CaptureWindow | undefined;
  platform: string;
  capabilities: Capabilities;
  /** The session's capture mode ('kineto', 'agent', 'cpu'), '' for a bare trace: agent mode is held to strict pairing. */
  captureMode: string;
  baseline: Baseline;
  /** The first of the baseline's runtime categories the trace has (any phase), '' when none: the report's. */
  runtimeCategory: string;
}

/** What a result says about the check it comes from. */
export type CheckMeta = Pick<CheckResult, 'id' | 'name' | 'title' | 'suite'>;

/** One check as the report lists it: the id users see (K1, P3, X2, ...), upstream's test name, and what runs it. */
export interface CheckDefinition extends CheckMeta {
  run(ctx: CheckContext, meta: CheckMeta): CheckResult;
  /** Holds for a CPU-only capture too: not skipped when the session recorded no device activity on purpose. */
  withoutDevice?: boolean;
}

export function pass(
  meta: CheckMeta,
  summary: string,
  counts: Record<string, number> = {},
  examples: EvidenceEvent[] = [],
  details: string[] = [],
): CheckResult {
  return { ...meta, status: 'pass', required: true, summary, counts, examples, details };
}

export function fail(
  meta: CheckMeta,
  summary: string,
  counts: Record<string, number>,
  examples: EvidenceEvent[],
  details: string[],
  hint: string,
): CheckResult {
  return {
    ...meta,
    status: 'fail',
    required: true,
    summary,
    counts,
    examples: examples.slice(0, 10),
    details,
    hint,
  };
}

export function skip(
  meta: CheckMeta,
  reason: string,
  counts: Record<string, number> = {},
  details: string[] = [],
): CheckResult {
  return { ...meta, status: 'skip', required: false, summary: reason, counts, examples: [], details };
}

/** A result that differs from torch-cuda because the trace's stack does so by design: shown, never a failure. */
export function info(result: CheckResult, byDesign: string): CheckResult {
  return { ...result, status: 'info', required: false, byDesign, hint: undefined };
}
