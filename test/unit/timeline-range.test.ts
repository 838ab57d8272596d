/** Totals over a dragged-out time range, on a real trace, against the analysis's own per-kernel totals. */
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import type { Analysis } from '../../extension/analysis/types';
import { importTrace } from '../../extension/import/kineto';
import { encodeTimeline } from '../../extension/timeline/encode';
import { TimelineModel } from '../../webview/model';
import { rangeTotals, type RangeRow } from '../../webview/timeline/rangeTotals';
import { TRACES } from '../helpers/paths';

const byName = (rows: RangeRow[]) => new Map(rows.map((r) => [r.name, r]));

describe('rangeTotals on the BERT trace (H100)', () => {
  let model: TimelineModel;
  let analysis: Analysis;
  beforeAll(async () => {
    const profile = await importTrace(path.join(TRACES, 'tracelens_h100_bert_small.trace.json.gz'));
    analysis = analyze(profile);
    model = new TimelineModel(encodeTimeline(profile, analysis));
  }, 120_000);

  it('over the whole profile, gives every kernel its count and time as the Kernels table does', () => {
    const { startNs, endNs } = model.header;
    const totals = rangeTotals(model, startNs, endNs);
    const device = byName(totals.device);
    expect(device.size).toBe(analysis.kernels.length);
    for (const kernel of analysis.kernels) {
      expect(device.get(kernel.name), kernel.name).toMatchObject({ count: kernel.count });
      expect(device.get(kernel.name)!.totalNs).toBeCloseTo(kernel.totalNs, 0);
    }
    const ops = byName(totals.ops);
    for (const op of analysis.ops) expect(ops.get(op.name)?.count, op.name).toBe(op.calls);
    // Largest first.
    for (let k = 1; k < totals.device.length; k++) {
      expect(totals.device[k].totalNs).toBeLessThanOrEqual(totals.device[k - 1].totalNs);
    }
  });

  it('splits: the time in two halves adds up to the whole, a slice cut by the edge counted in both', () => {
    const { startNs, endNs } = model.header;
    const mid = (startNs + endNs) / 2;
    const whole = byName(rangeTotals(model, startNs, endNs).device);
    const left = byName(rangeTotals(model, startNs, mid).device);
    const right = byName(rangeTotals(model, mid, endNs).device);
    for (const [name, row] of whole) {
      const sum = (left.get(name)?.totalNs ?? 0) + (right.get(name)?.totalNs ?? 0);
      expect(sum, name).toBeCloseTo(row.totalNs, 0);
      const counted = (left.get(name)?.count ?? 0) + (right.get(name)?.count ?? 0);
      expect(counted).toBeGreaterThanOrEqual(row.count);
      expect(counted).toBeLessThanOrEqual(row.count + 1);
    }
  });

  it('inside one kernel: that kernel alone, with the range length as its time', () => {
    const c = model.columns;
    let kernel = -1;
    for (let i = 0; i < model.sliceCount; i++) {
      if (model.kindOf(i) === 'kernel' && (kernel < 0 || c.dur[i] > c.dur[kernel])) kernel = i;
    }
    const from = c.start[kernel] + c.dur[kernel] * 0.25;
    const to = c.start[kernel] + c.dur[kernel] * 0.75;
    const device = rangeTotals(model, from, to).device;
    const own = device.find((r) => r.name === model.nameOf(kernel))!;
    expect(own.count).toBeGreaterThanOrEqual(1);
    expect(own.totalNs).toBeGreaterThanOrEqual(to - from - 1e-6);
    // An empty stretch before the profile holds nothing.
    expect(rangeTotals(model, model.header.startNs - 1e6, model.header.startNs - 1)).toEqual({
      ops: [],
      device: [],
    });
  });
});
