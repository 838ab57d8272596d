import { describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { deviceActivity, resultsModel } from '../../extension/capture/results';
import { importTrace } from '../../extension/import/kineto';
import { isDeviceKind } from '../../extension/model/profile';
import { TRACES } from '../helpers/paths';
import path from 'node:path';

async function analysisOf(name: string) {
  return analyze(await importTrace(path.join(TRACES, name)));
}

describe('the Results view model', () => {
  it('device busy time and idle gaps agree with a sweep over the device events (an H100 trace)', async () => {
    const analysis = await analysisOf('tracelens_h100_bert_small.trace.json.gz');
    const activity = deviceActivity(analysis)!;
    // Independently: a sweep over start/end points counting how many device events are open.
    const { slices } = analysis.profile;
    const points: [number, number][] = [];
    for (let i = 0; i < slices.length; i++)
      if (isDeviceKind(slices.kind[i]) && slices.dur[i] > 0)
        points.push([slices.start[i], 1], [slices.start[i] + slices.dur[i], -1]);
    points.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    let open = 0;
    let busy = 0;
    let since = 0;
    let longestGap = 0;
    let idleSince: number | undefined;
    for (const [at, step] of points) {
      if (open === 0 && step > 0) {
        if (idleSince !== undefined) longestGap = Math.max(longestGap, at - idleSince);
        since = at;
      }
      open += step;
      if (open === 0) {
        busy += at - since;
        idleSince = at;
      }
    }
    expect(activity.busyNs).toBeCloseTo(busy, 0);
    expect(activity.gaps[0].durNs).toBeCloseTo(longestGap, 0);
    expect(activity.busyNs).toBeLessThanOrEqual(activity.spanNs);
    for (let i = 1; i < activity.gaps.length; i++)
      expect(activity.gaps[i].durNs).toBeLessThanOrEqual(activity.gaps[i - 1].durNs);
  });

  it('ranks lines and ops by their own time, and keeps the trace-only facts honest', async () => {
    const analysis = await analysisOf('tracelens_h100_bert_small.trace.json.gz');
    const model = resultsModel(analysis, { title: 'bert', source: 'bert.pt.trace.json.gz' });
    expect(model.primary).toBe('device');
    expect(model.ended).toEqual({ text: 'opened from a trace file', severity: 'ok' });
    expect(model.canOpenBringup).toBe(false);
    expect(model.lines.length).toBeGreaterThan(0);
    for (let i = 1; i < model.lines.length; i++)
      expect(model.lines[i].selfNs).toBeLessThanOrEqual(model.lines[i - 1].selfNs);
    for (let i = 1; i < model.ops.length; i++)
      expect(model.ops[i].selfNs).toBeLessThanOrEqual(model.ops[i - 1].selfNs);
    expect(model.totals.deviceNs).toBeGreaterThan(0);
    expect(model.kernels[0].count).toBeGreaterThan(0);
  });

  it('a CPU-only trace with steps: no device section, the steps and their slowest', async () => {
    const analysis = await analysisOf('kineto_tbplugin_2021_v100_resnet50_w0.pt.trace.json.gz');
    const model = resultsModel(analysis, {
      title: 'resnet',
      source: 'x',
      session: { devices: [], notes: [], status: 'interrupted', exitCode: 130 },
      cancelled: true,
    });
    expect(model.ended.severity).toBe('warning');
    expect(model.ended.text).toContain('cancelled');
    expect(model.steps?.rows.length).toBeGreaterThan(1);
    const slowest = model.steps!.rows.reduce((a, b) => (b.wallNs > a.wallNs ? b : a));
    expect(model.steps!.slowest).toBe(slowest.step);
    expect(model.memory?.length).toBeGreaterThan(0);
  });
});
