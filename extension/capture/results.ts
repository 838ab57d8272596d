/**
 * What the Results view shows of a run: built from the analysis (the summary's own tables: the same numbers as
 * `flagprof summary`) and the session's record (how the run ended, the capture mode and why).
 */
import path from 'node:path';
import { activitySpan } from '../analysis/diff';
import { buildSummary, type SummaryJson } from '../analysis/summary';
import type { Analysis } from '../analysis/types';
import { isDeviceKind } from '../model/profile';
import { formatDuration } from '../shared/format';
import type { RanksOverview, ResultsModel, ResultsSeverity } from '../shared/results';
import type { SessionRecord } from './session';

/** Rows per table: what a glance takes in; the timeline's tables have the rest. */
const TOP = 10;
/** Idle gaps listed. */
const GAPS = 5;

export interface RunFacts {
  title: string;
  source: string;
  session?: SessionRecord;
  /** The launcher's wall time, when the run was made here. */
  wallMs?: number;
  /** The run was cancelled (Cancel, Ctrl-C). */
  cancelled?: boolean;
  /** The output of the run can be shown (the run was made in this window). */
  canShowOutput?: boolean;
}

/** The union of the device slices' intervals: busy time, and the largest gaps where no device was busy. */
export function deviceActivity(analysis: Analysis): ResultsModel['device'] {
  const { slices } = analysis.profile;
  const intervals: [number, number][] = [];
  for (let i = 0; i < slices.length; i++)
    if (isDeviceKind(slices.kind[i]) && slices.dur[i] > 0)
      intervals.push([slices.start[i], slices.start[i] + slices.dur[i]]);
  if (intervals.length === 0) return undefined;
  intervals.sort((a, b) => a[0] - b[0]);
  let busyNs = 0;
  const gaps: { startNs: number; durNs: number }[] = [];
  let [start, end] = intervals[0];
  for (const [s, e] of intervals.slice(1)) {
    if (s > end) {
      busyNs += end - start;
      gaps.push({ startNs: end, durNs: s - end });
      [start, end] = [s, e];
    } else end = Math.max(end, e);
  }
  busyNs += end - start;
  const origin = activitySpan(analysis.profile)?.startNs ?? 0;
  gaps.sort((a, b) => b.durNs - a.durNs);
  return {
    busyNs,
    spanNs: end - intervals[0][0],
    gaps: gaps.slice(0, GAPS).map((gap) => ({ startNs: gap.startNs - origin, durNs: gap.durNs })),
  };
}

function ended(facts: RunFacts): { text: string; severity: ResultsSeverity } {
  const record = facts.session;
  if (!record) return { text: 'opened from a trace file', severity: 'ok' };
  const exception = record.exception;
  if (exception) {
    const where = exception.line
      ? ` at ${exception.file ? `${path.basename(exception.file)}:` : 'line '}${exception.line}`
      : '';
    return {
      text: `raised ${exception.type}${where}: ${exception.message} — profile kept`,
      severity: 'error',
    };
  }
  if (facts.cancelled || record.status === 'interrupted')
    return { text: 'cancelled — profile kept', severity: 'warning' };
  if (record.status === 'lost')
    return {
      text: `ended abruptly (exit code ${record.exitCode ?? '?'}) — kept what was written`,
      severity: 'error',
    };
  if (record.exitCode !== undefined && record.exitCode !== 0)
    return { text: `exited with code ${record.exitCode} — profile kept`, severity: 'warning' };
  const wall = facts.wallMs !== undefined ? ` in ${formatDuration(facts.wallMs * 1e6)}` : '';
  return { text: `finished${wall}`, severity: 'ok' };
}

const ns = (us: number): number => Math.round(us * 1000);

/** `summary`: the run's summary when the caller built it already, with steps and memory. */
export function resultsModel(
  analysis: Analysis,
  facts: RunFacts,
  summary: SummaryJson = buildSummary(analysis, { steps: true, memory: true }),
): ResultsModel {
  const device = deviceActivity(analysis);
  const primary = device ? 'device' : 'cpu';
  const span = activitySpan(analysis.profile);
  const lines = summary.lines
    .map((line) => ({
      file: line.file,
      line: line.line,
      column: line.column,
      function: line.function,
      kind: line.kind,
      selfNs: ns(primary === 'device' ? line.device_self_us : line.cpu_self_us),
      totalNs: ns(primary === 'device' ? line.device_total_us : line.cpu_total_us),
      ops: line.ops,
    }))
    // The lines whose own ops cost most: a call line's total would put main() on top of every run.
    .filter((line) => line.selfNs > 0)
    .sort((a, b) => b.selfNs - a.selfNs)
    .slice(0, TOP);
  const ops = summary.ops
    .map((op) => ({
      name: op.name,
      calls: op.calls,
      selfNs: ns(primary === 'device' ? op.device_self_us : op.cpu_self_us),
      totalNs: ns(primary === 'device' ? op.device_total_us : op.cpu_total_us),
    }))
    .sort((a, b) => b.selfNs - a.selfNs)
    .slice(0, TOP);
  const steps = summary.steps && {
    rows: summary.steps.rows.map((r) => ({
      step: r.step,
      wallNs: ns(r.wall_us),
      cpuNs: ns(r.cpu_us),
      deviceNs: ns(r.device_us),
    })),
    slowest: summary.steps.slowest.step,
    firstNs: ns(summary.steps.first_us),
    steadyMedianNs:
      summary.steps.steady_median_us === undefined ? undefined : ns(summary.steps.steady_median_us),
  };
  const record = facts.session;
  return {
    title: facts.title,
    source: facts.source,
    script: record?.script,
    ended: ended(facts),
    mode: record?.mode?.chosen ? { chosen: record.mode.chosen, reason: record.mode.reason } : undefined,
    primary,
    totals: {
      wallNs: facts.wallMs !== undefined ? facts.wallMs * 1e6 : undefined,
      spanNs: span ? span.endNs - span.startNs : 0,
      cpuNs: analysis.ops.reduce((sum, op) => sum + op.cpuSelfNs, 0),
      deviceNs: summary.kernels.reduce((sum, k) => sum + ns(k.total_us), 0),
    },
    device,
    steps: steps && steps.rows.length > 0 ? steps : undefined,
    memory: summary.memory?.devices.map((d) => ({
      device: d.device,
      peakBytes: d.peak_allocated_bytes,
      atNs: ns(d.peak_allocated_at_us),
    })),
    ranks: ranksOf(analysis.profile.metadata.ranks),
    lines,
    ops,
    kernels: summary.kernels
      .slice(0, TOP)
      .map((k) => ({ name: k.name, count: k.count, totalNs: ns(k.total_us), topOp: k.top_op })),
    notes: [...(record?.notes ?? []), ...analysis.profile.warnings.map((w) => w.message)],
    canOpenBringup: record !== undefined,
    canShowOutput: facts.canShowOutput === true,
  };
}

/** The merged run's communication overview (capture/merged.ts writes it), when the profile is one. */
function ranksOf(value: unknown): RanksOverview | undefined {
  const overview = value as RanksOverview | undefined;
  return overview && Array.isArray(overview.rows) && overview.rows.length > 1 ? overview : undefined;
}
