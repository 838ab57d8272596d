/** `flagprof diff`: two runs compared by op, kernel, source line and step, on real traces of ../shared/traces. */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import {
  diffAnalyses,
  profilerSteps,
  type DiffRowBase,
  type ProfileDiff,
} from '../../extension/analysis/diff';
import type { Analysis } from '../../extension/analysis/types';
import { openProfile } from '../../extension/capture/open';
import { isOpKind } from '../../extension/model/profile';
import { buildCli, cleanupCliRuns, runCli } from '../helpers/cli';
import { TRACES } from '../helpers/paths';

const BERT_H100 = path.join(TRACES, 'tracelens_h100_bert_small.trace.json.gz');
const BERT_MI300X = path.join(TRACES, 'tracelens_mi300x_bert_small.trace.json.gz');
const DLRM_RANK0 = path.join(TRACES, 'param_dlrm_v100x8', 'worker0_step_12.1694128201545.pt.trace.json.gz');
const DLRM_RANK1 = path.join(TRACES, 'param_dlrm_v100x8', 'worker1_step_12.1694128201556.pt.trace.json.gz');
const V100_STEPS = path.join(TRACES, 'hta_v100_ns_resolution_rank0.pt.trace.json.gz');
const RESNET_2021 = path.join(TRACES, 'kineto_tbplugin_2021_v100_resnet50_w0.pt.trace.json.gz');

const analyses = new Map<string, Promise<Analysis>>();
function analysisOf(file: string): Promise<Analysis> {
  let analysis = analyses.get(file);
  if (!analysis) analyses.set(file, (analysis = openProfile(file).then(({ profile }) => analyze(profile))));
  return analysis;
}

async function diffOf(a: string, b: string): Promise<ProfileDiff> {
  return diffAnalyses({ analysis: await analysisOf(a) }, { analysis: await analysisOf(b) });
}

/** Every table of a diff, as rows. */
function allRows(diff: ProfileDiff): DiffRowBase[] {
  return [...diff.ops, ...diff.kernels, ...diff.lines, ...diff.steps];
}

function sortedByImpact(rows: readonly DiffRowBase[]): boolean {
  return rows.every((r, i) => i === 0 || Math.abs(rows[i - 1].deltaNs) >= Math.abs(r.deltaNs));
}

describe('diffAnalyses on real traces', () => {
  it('a trace against itself: every row in both runs, every Δ zero, every ratio 1', async () => {
    const diff = await diffOf(BERT_H100, BERT_H100);
    expect(diff.primary).toBe('device');
    expect(diff.crossVendor).toBe(false);
    expect(diff.notes).toEqual([]);
    // The four levels are all there: ops, kernels, lines (python_function frames) and the ProfilerStep.
    for (const table of [diff.ops, diff.kernels, diff.lines, diff.steps])
      expect(table.length).toBeGreaterThan(0);
    for (const r of allRows(diff)) {
      expect(r.status).toBe('both');
      expect(r.deltaNs).toBe(0);
      expect(r.a).toEqual(r.b);
      if (r.ratio !== null) expect(r.ratio).toBe(1);
    }
    for (const t of Object.values(diff.totals)) expect(t.deltaNs).toBe(0);
    expect(diff.totals.deviceNs.a).toBeGreaterThan(0);
    // Unchanged rows still lead with what the run spends: the first op is the one with the most device time.
    const analysis = await analysisOf(BERT_H100);
    expect(diff.ops[0].name).toBe(analysis.ops[0].name);
    expect(diff.lines.every((l) => l.lineA === l.lineB && !l.edited)).toBe(true);
  });

  it('two ranks of one job: the same ops and steps, Δs that add up to the totals', async () => {
    const diff = await diffOf(DLRM_RANK0, DLRM_RANK1);
    const [a, b] = await Promise.all([analysisOf(DLRM_RANK0), analysisOf(DLRM_RANK1)]);
    expect(diff.primary).toBe('device');
    expect(diff.crossVendor).toBe(false);
    // One program on both ranks: nearly every op name is in both.
    const both = diff.ops.filter((r) => r.status === 'both').length;
    expect(both / diff.ops.length).toBeGreaterThan(0.9);
    for (const table of [diff.ops, diff.kernels, diff.lines, diff.steps])
      expect(sortedByImpact(table)).toBe(true);
    // Each side is that run's own row of its analysis.
    for (const r of diff.ops) {
      const opA = a.ops.find((op) => op.name === r.name);
      const opB = b.ops.find((op) => op.name === r.name);
      expect(r.a?.deviceSelfNs ?? null).toBe(opA?.deviceSelfNs ?? null);
      expect(r.b?.cpuSelfNs ?? null).toBe(opB?.cpuSelfNs ?? null);
      expect(r.deltaNs).toBeCloseTo((opB?.deviceSelfNs ?? 0) - (opA?.deviceSelfNs ?? 0), 3);
    }
    // Every device event is under one kernel name: the kernel Δs sum to the device total's Δ.
    const kernelDelta = diff.kernels.reduce((sum, r) => sum + r.deltaNs, 0);
    expect(kernelDelta).toBeCloseTo(diff.totals.deviceNs.deltaNs, 0);
    // The step both ranks profiled pairs by its number; the rank that waited longer in NCCL spent longer in it.
    expect(diff.steps.length).toBe(1);
    const [step] = diff.steps;
    expect(step.status).toBe('both');
    expect(step.stepA).toBe(step.stepB);
    expect(Math.sign(step.deltaNs)).toBe(Math.sign(diff.totals.wallNs.deltaNs));
    const nccl = diff.kernels.filter((r) => r.name.startsWith('ncclKernel'));
    expect(nccl.length).toBeGreaterThan(0);
    expect(diff.kernels[0].name).toMatch(/^ncclKernel/);
  });

  it('a CUDA trace against a ROCm one of the same model: the vendor note, ops first, shared op names', async () => {
    const diff = await diffOf(BERT_H100, BERT_MI300X);
    expect(diff.a.platform).toBe('cuda');
    expect(diff.b.platform).toBe('rocm');
    expect(diff.crossVendor).toBe(true);
    expect(diff.order[0]).toBe('op');
    expect(diff.notes.join('\n')).toMatch(/kernel names differ between vendors/);
    // The same model: the aten ops match by name even though no vendor library names its kernels alike.
    const ops = diff.ops.filter((r) => r.status === 'both');
    expect(ops.map((r) => r.name)).toContain('aten::addmm');
    // Only torch's own kernels keep their names across vendors; the vendors' GEMM and attention kernels do not.
    const time = (r: DiffRowBase) => (r.a?.deviceTotalNs ?? 0) + (r.b?.deviceTotalNs ?? 0);
    const shared = diff.kernels.filter((r) => r.status === 'both').reduce((sum, r) => sum + time(r), 0);
    const all = diff.kernels.reduce((sum, r) => sum + time(r), 0);
    expect(shared / all).toBeLessThan(0.5);
    expect(diff.kernels.find((r) => /gemm|Cijk_/i.test(r.name))?.status).not.toBe('both');
    // Lines of the shared Python code match too (same files, same def lines).
    expect(diff.lines.filter((l) => l.status === 'both').length).toBeGreaterThan(0);
  });

  it('ProfilerStep#N spans: the step annotations of the trace, with the device time launched under each', async () => {
    const analysis = await analysisOf(V100_STEPS);
    const steps = profilerSteps(analysis);
    const { profile } = analysis;
    const spans: number[] = [];
    for (let i = 0; i < profile.slices.length; i++)
      if (isOpKind(profile.slices.kind[i]) && /^ProfilerStep#\d+$/.test(profile.nameOf(i))) spans.push(i);
    expect(steps.length).toBeGreaterThan(1);
    expect(steps.length).toBe(new Set(spans.map((i) => profile.nameOf(i))).size);
    for (const s of steps) {
      const slice = spans.find((i) => profile.nameOf(i) === `ProfilerStep#${s.step}`)!;
      expect(s.wallNs).toBe(profile.slices.dur[slice]);
    }
    expect(steps.some((s) => s.deviceNs > 0)).toBe(true);
    const diff = await diffOf(V100_STEPS, V100_STEPS);
    expect(diff.steps.map((s) => s.stepA).sort()).toEqual(steps.map((s) => s.step).sort());
  });

  it('steps of runs that share no step numbers pair in order, and the note says so', async () => {
    const [a, b] = await Promise.all([analysisOf(V100_STEPS), analysisOf(RESNET_2021)]);
    const stepsA = profilerSteps(a).map((s) => s.step);
    const stepsB = profilerSteps(b).map((s) => s.step);
    expect(stepsA.some((n) => stepsB.includes(n))).toBe(false);
    const diff = await diffOf(V100_STEPS, RESNET_2021);
    expect(diff.notes.join('\n')).toMatch(/share no step numbers/);
    const paired = diff.steps.filter((s) => s.status === 'both');
    expect(paired.length).toBe(Math.min(stepsA.length, stepsB.length));
    for (const s of paired) expect(stepsA.indexOf(s.stepA!)).toBe(stepsB.indexOf(s.stepB!));
    expect(diff.steps.length).toBe(Math.max(stepsA.length, stepsB.length));
  });

  it('a CPU-only run against a GPU one compares CPU time and says so', async () => {
    const diff = await diffOf(path.join(TRACES, 'hta_cpu_only_gloo_rank34.pt.trace.json.gz'), BERT_H100);
    expect(diff.primary).toBe('cpu');
    expect(diff.notes.join('\n')).toMatch(/only B has device activity/);
    expect(diff.kernels.every((k) => k.status === 'new')).toBe(true);
  });
});

describe('flagprof diff', () => {
  beforeAll(buildCli);
  afterAll(cleanupCliRuns);

  it('prints the runs, the totals with Δ and ratio, then the tables; --json is the whole diff', async () => {
    const text = await runCli(['diff', DLRM_RANK0, DLRM_RANK1, '--top', '3']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^A {2}.*worker0.*\nB {2}.*worker1/);
    expect(text.stdout).toMatch(/^device +\S+ ms +\S+ ms +\+\S+ ms +\d\.\d\d×$/m);
    for (const title of ['Ops by Δ device self', 'Kernels by Δ time', 'Steps by Δ wall time'])
      expect(text.stdout).toContain(title);
    const json = await runCli(['diff', DLRM_RANK0, DLRM_RANK1, '--json']);
    expect(json.code).toBe(0);
    const diff = JSON.parse(json.stdout) as ProfileDiff;
    expect(diff.ops.length).toBeGreaterThan(3);
    expect(text.stdout).toContain(diff.ops[0].name);
    const kernels = await runCli(['diff', BERT_H100, BERT_MI300X, '--by', 'kernel']);
    expect(kernels.stdout).toContain('names differ across vendors');
    expect(kernels.stdout).not.toContain('Ops by');
  });

  it('bad input is one line and exit 2', async () => {
    for (const args of [
      ['diff', DLRM_RANK0],
      ['diff', DLRM_RANK0, path.join(TRACES, 'no-such.json')],
      ['diff', DLRM_RANK0, DLRM_RANK1, '--by', 'everything'],
      ['diff', DLRM_RANK0, DLRM_RANK1, '--top', '0'],
      ['diff', DLRM_RANK0, path.join(TRACES, 'MANIFEST.md')],
    ]) {
      const result = await runCli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stdout).toBe('');
    }
  });
});
