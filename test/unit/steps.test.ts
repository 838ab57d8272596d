/**
 * ProfilerStep#N spans on the real traces that carry them (user_annotation since 2021, Operator in the 2021
 * TensorBoard plugin's trace), every expectation computed here from the trace's own JSON.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { analyzeSteps } from '../../extension/analysis/steps';
import { buildSummary } from '../../extension/analysis/summary';
import { renderSummary } from '../../extension/cli/summary';
import { importTrace } from '../../extension/import/kineto';
import { buildCli, cleanupCliRuns, runCli } from '../helpers/cli';
import { rawTraceEvents, ROOT, tracePath } from '../helpers/traces';

interface RawEvent {
  ph?: string;
  cat?: string;
  name?: string;
  pid?: number | string;
  tid?: number | string;
  ts: number;
  dur: number;
  args?: Record<string, unknown>;
}

const CPU_STEP_CATEGORIES = new Set(['user_annotation', 'cpu_op', 'Operator']);
const DEVICE_CATEGORIES = new Set(['kernel', 'gpu_memcpy', 'gpu_memset']);

/** The CPU-side ProfilerStep spans of a trace, in time order. */
function rawSteps(events: RawEvent[]): RawEvent[] {
  return events
    .filter((e) => /^ProfilerStep#\d+$/.test(e.name ?? '') && CPU_STEP_CATEGORIES.has(e.cat ?? ''))
    .sort((a, b) => a.ts - b.ts);
}

/** Device time of what the step's thread launched while the step ran (runtime call -> kernel by correlation). */
function launchedDeviceUs(events: RawEvent[], step: RawEvent): number {
  const runtime = new Map<unknown, RawEvent>();
  for (const e of events)
    if ((e.cat === 'cuda_runtime' || e.cat === 'cuda_driver') && e.args?.correlation !== undefined)
      runtime.set(e.args.correlation, e);
  let total = 0;
  for (const k of events) {
    if (!DEVICE_CATEGORIES.has(k.cat ?? '')) continue;
    const call = runtime.get(k.args?.correlation);
    if (!call || call.tid !== step.tid || call.pid !== step.pid) continue;
    if (call.ts >= step.ts && call.ts < step.ts + step.dur) total += k.dur;
  }
  return total;
}

/** Length of the union of the ops' intervals inside the step on its thread: the time spent in ops. */
function inOpsUs(events: RawEvent[], step: RawEvent): number {
  const spans = events
    .filter(
      (e) =>
        e !== step &&
        e.ph === 'X' &&
        (e.cat === 'cpu_op' || e.cat === 'user_annotation') &&
        e.tid === step.tid &&
        e.pid === step.pid &&
        e.ts >= step.ts &&
        e.ts + e.dur <= step.ts + step.dur,
    )
    .sort((a, b) => a.ts - b.ts);
  let total = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const s of spans) {
    const from = Math.max(s.ts, end);
    if (s.ts + s.dur > from) total += s.ts + s.dur - from;
    end = Math.max(end, s.ts + s.dur);
  }
  return total;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function stepsOf(name: string) {
  return analyzeSteps(analyze(await importTrace(path.join(ROOT, tracePath(name)))));
}

describe('steps on real traces', () => {
  it('A100 rank 3 of 8: six steps with their wall, CPU-in-ops and launched device time', async () => {
    const name = 'hta_a100_rank3of8_trace_diff_control.trace.json.gz';
    const events = rawTraceEvents<RawEvent>(name);
    const raw = rawSteps(events);
    const stats = (await stepsOf(name))!;
    expect(stats.steps.map((s) => s.step)).toEqual(raw.map((e) => Number(e.name!.slice(13))));
    expect(stats.steps.length).toBe(6);
    for (let k = 0; k < raw.length; k++) {
      const step = stats.steps[k];
      expect(step.wallNs / 1000).toBeCloseTo(raw[k].dur, 3);
      expect(step.deviceNs / 1000).toBeCloseTo(launchedDeviceUs(events, raw[k]), 3);
      expect(step.cpuNs / 1000).toBeCloseTo(inOpsUs(events, raw[k]), 0);
      expect(step.cpuNs).toBeLessThanOrEqual(step.wallNs);
    }
    const slowest = raw.reduce((a, b) => (b.dur > a.dur ? b : a));
    expect(stats.steps[stats.slowest].step).toBe(Number(slowest.name!.slice(13)));
    expect(stats.firstNs / 1000).toBeCloseTo(raw[0].dur, 3);
    expect(stats.steadyMedianNs! / 1000).toBeCloseTo(median(raw.slice(1).map((e) => e.dur)), 3);
  });

  it('V100 at ns resolution: the first step is far shorter than the steady state', async () => {
    const name = 'hta_v100_ns_resolution_rank0.pt.trace.json.gz';
    const events = rawTraceEvents<RawEvent>(name);
    const raw = rawSteps(events);
    const stats = (await stepsOf(name))!;
    expect(stats.steps.length).toBe(raw.length);
    expect(stats.steadyMedianNs! / 1000).toBeCloseTo(median(raw.slice(1).map((e) => e.dur)), 3);
    expect(stats.firstNs).toBeLessThan(stats.steadyMedianNs! / 2);
    for (let k = 0; k < raw.length; k++)
      expect(stats.steps[k].deviceNs / 1000).toBeCloseTo(launchedDeviceUs(events, raw[k]), 3);
  });

  it('2021 TensorBoard plugin trace: ProfilerStep spans written as Operators are steps', async () => {
    const name = 'kineto_tbplugin_2021_v100_resnet50_w0.pt.trace.json.gz';
    const raw = rawSteps(rawTraceEvents<RawEvent>(name));
    expect(raw.every((e) => e.cat === 'Operator')).toBe(true);
    const stats = (await stepsOf(name))!;
    expect(stats.steps.map((s) => s.step)).toEqual(raw.map((e) => Number(e.name!.slice(13))));
    for (let k = 0; k < raw.length; k++) expect(stats.steps[k].wallNs / 1000).toBeCloseTo(raw[k].dur, 3);
  });

  it('the GPU row’s copy of a step (gpu_user_annotation) is not a second step', async () => {
    const name = 'tracelens_h100_bert_small.trace.json.gz';
    const events = rawTraceEvents<RawEvent>(name);
    expect(
      events
        .filter((e) => e.name === 'ProfilerStep#6')
        .map((e) => e.cat)
        .sort(),
    ).toEqual(['gpu_user_annotation', 'user_annotation']);
    const stats = (await stepsOf(name))!;
    expect(stats.steps.map((s) => s.step)).toEqual([6]);
    expect(stats.steadyMedianNs).toBeUndefined();
  });

  it('a trace without steps has none, and no steps section', async () => {
    const analysis = analyze(
      await importTrace(path.join(ROOT, tracePath('hta_a100_simple_add.trace.json.gz'))),
    );
    expect(analyzeSteps(analysis)).toBeUndefined();
    expect(buildSummary(analysis, { steps: true })).not.toHaveProperty('steps');
  });
});

describe('flagprof summary', () => {
  beforeAll(() => buildCli());
  afterAll(() => cleanupCliRuns());

  it('shows a Steps table, the slowest marked, and the steps in --json', async () => {
    const name = 'hta_a100_rank3of8_trace_diff_control.trace.json.gz';
    const raw = rawSteps(rawTraceEvents<RawEvent>(name));
    const slowest = raw.reduce((a, b) => (b.dur > a.dur ? b : a)).name!.slice(12);
    const text = await runCli(['summary', tracePath(name)], { cwd: ROOT, timeoutMs: 120_000 });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Steps (6 ProfilerStep spans): first 75.47 ms');
    expect(text.stdout).toMatch(new RegExp(`^${slowest} \\(slowest\\) +81\\.12 ms`, 'm'));
    expect(text.stdout).not.toContain('Memory (');
    const json = await runCli(['summary', '--json', tracePath(name)], { cwd: ROOT, timeoutMs: 120_000 });
    const doc = JSON.parse(json.stdout) as { steps: { count: number; rows: { wall_us: number }[] } };
    expect(doc.steps.count).toBe(6);
    expect(doc.steps.rows.map((r) => r.wall_us)).toEqual(raw.map((e) => e.dur));
  });

  it('prints a trace without steps or memory exactly as the core summary reads', async () => {
    const name = tracePath('hta_a100_simple_add.trace.json.gz');
    const text = await runCli(['summary', name], { cwd: ROOT, timeoutMs: 120_000 });
    expect(text.code).toBe(0);
    expect(text.stdout).not.toMatch(/^(Steps|Memory) \(/m);
    const core = buildSummary(analyze(await importTrace(path.join(ROOT, name))));
    expect(text.stdout).toBe(renderSummary({ ...core, source: { ...core.source, path: name } }, 15));
  });
});
