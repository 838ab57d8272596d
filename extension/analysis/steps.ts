/**
 * Training steps: the `ProfilerStep#N` spans torch.profiler's schedule writes around each `prof.step()` (a
 * user_annotation on the CPU thread since 2021; an Operator / cpu_op in older traces). Per step: its wall time,
 * the CPU time spent in ops inside it, and the device time of what those ops launched (which may run after the
 * span ends: kernels are asynchronous). The first step is set against the steady state, the median of the rest.
 * The GPU-row copies (gpu_user_annotation) are not steps of their own.
 */
import { isOpKind } from '../model/profile';
import type { Analysis } from './types';

const STEP_NAME = /^ProfilerStep#(\d+)$/;

export interface StepStat {
  /** N of ProfilerStep#N. */
  step: number;
  /** The span's slice. */
  slice: number;
  startNs: number;
  wallNs: number;
  /** Time inside the step's ops (the span minus what ran outside any op: Python, the data loader's own code). */
  cpuNs: number;
  /** Device time launched by the step's ops. */
  deviceNs: number;
}

export interface StepsStats {
  /** In time order. */
  steps: StepStat[];
  /** Index into steps of the longest. */
  slowest: number;
  /** The first step's wall time, and the median of the others' (undefined with a single step). */
  firstNs: number;
  steadyMedianNs?: number;
}

/** The profile's steps; undefined when it has none. */
export function analyzeSteps(analysis: Analysis): StepsStats | undefined {
  const { profile, cpuSelfNs, deviceTotalNs, opParent } = analysis;
  const { slices } = profile;
  const steps: StepStat[] = [];
  const stepNames = new Map<number, number>();
  const nameOf = (id: number): string => profile.strings.get(id);
  for (let i = 0; i < slices.length; i++) {
    if (!isOpKind(slices.kind[i])) continue;
    const step = stepNumber(nameOf, slices.name[i], stepNames);
    if (step < 0) continue;
    // A step nested in a span of the same name (a cpu_op copy inside the annotation) is the same step.
    const parent = opParent[i];
    if (parent >= 0 && slices.name[parent] === slices.name[i]) continue;
    steps.push({
      step,
      slice: i,
      startNs: slices.start[i],
      wallNs: slices.dur[i],
      cpuNs: Math.max(0, slices.dur[i] - cpuSelfNs[i]),
      deviceNs: deviceTotalNs[i],
    });
  }
  if (steps.length === 0) return undefined;
  steps.sort((a, b) => a.startNs - b.startNs || a.step - b.step);
  const run = acrossProcesses(analysis, steps);
  if (run) steps.splice(0, steps.length, ...run);
  let slowest = 0;
  for (let k = 1; k < steps.length; k++) if (steps[k].wallNs > steps[slowest].wallNs) slowest = k;
  const rest = steps.slice(1).map((s) => s.wallNs);
  return {
    steps,
    slowest,
    firstNs: steps[0].wallNs,
    ...(rest.length > 0 ? { steadyMedianNs: median(rest) } : {}),
  };
}

/**
 * A run of several processes (the ranks of a merged run) has each step once per rank: step N is then one row, as
 * long as its slowest rank took (the others wait for it at the next collective), with the CPU and device time of
 * every rank. undefined when no step number repeats across processes.
 */
function acrossProcesses(analysis: Analysis, steps: StepStat[]): StepStat[] | undefined {
  const { profile } = analysis;
  const pidOf = (step: StepStat): string => profile.tracks[profile.slices.track[step.slice]].pid;
  const byNumber = new Map<number, StepStat[]>();
  for (const step of steps) {
    const list = byNumber.get(step.step);
    if (list) list.push(step);
    else byNumber.set(step.step, [step]);
  }
  const repeated = [...byNumber.values()].some((list) => new Set(list.map(pidOf)).size > 1);
  if (!repeated) return undefined;
  return [...byNumber.values()]
    .map((list) => ({
      step: list[0].step,
      slice: list.reduce((a, b) => (b.wallNs > a.wallNs ? b : a)).slice,
      startNs: Math.min(...list.map((s) => s.startNs)),
      wallNs: Math.max(...list.map((s) => s.wallNs)),
      cpuNs: list.reduce((sum, s) => sum + s.cpuNs, 0),
      deviceNs: list.reduce((sum, s) => sum + s.deviceNs, 0),
    }))
    .sort((a, b) => a.startNs - b.startNs || a.step - b.step);
}

/** N for a ProfilerStep#N name id, else -1 (memoised per name: millions of ops share a few names). */
function stepNumber(nameOf: (id: number) => string, name: number, memo: Map<number, number>): number {
  let step = memo.get(name);
  if (step === undefined) {
    const match = STEP_NAME.exec(nameOf(name));
    step = match ? Number(match[1]) : -1;
    memo.set(name, step);
  }
  return step;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
