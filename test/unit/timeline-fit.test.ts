/**
 * "Fit selection" on a real trace: an op's device slices (its own and its children's) found through the lanes
 * agree with the trace's own nesting, and the fitted view holds the op and all of them.
 */
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { importTrace } from '../../extension/import/kineto';
import type { Profile } from '../../extension/model/profile';
import { isDeviceKind, SliceKind } from '../../extension/shared/kinds';
import { encodeTimeline } from '../../extension/timeline/encode';
import { TimelineModel } from '../../webview/model';
import { fitView, type Placed } from '../../webview/timeline/fit';
import { ROW_HEIGHT, TrackLayout } from '../../webview/timeline/layout';
import { TRACES } from '../helpers/paths';

/** The device slices whose launching op is `op` or nested under it, by the Profile's own parent links. */
function launchedByNesting(profile: Profile, opOf: Int32Array, op: number): number[] {
  const { parent, kind, length } = profile.slices;
  const under = (s: number): boolean => {
    for (let p = s; p >= 0; p = parent[p]) if (p === op) return true;
    return false;
  };
  const list: number[] = [];
  for (let i = 0; i < length; i++) if (isDeviceKind(kind[i]) && opOf[i] >= 0 && under(opOf[i])) list.push(i);
  return list.sort((a, b) => a - b);
}

describe('fit selection on the OWLv2 trace (H100)', () => {
  let profile: Profile;
  let model: TimelineModel;
  let op = -1;
  beforeAll(async () => {
    profile = await importTrace(path.join(TRACES, 'tracelens_h100_owlv2_large.trace.json.gz'));
    model = new TimelineModel(encodeTimeline(profile, analyze(profile)));
    // The op with the most kernels launched by its children rather than itself.
    let best = 0;
    for (let i = 0; i < model.sliceCount; i++) {
      if (model.columns.kind[i] !== SliceKind.CpuOp) continue;
      const indirect = model.launchedUnder(i).length - model.launchedFrom(i).length;
      if (indirect > best) [best, op] = [indirect, i];
    }
  }, 120_000);

  it("finds an op's children's kernels as well as its own, as the trace nests them", () => {
    expect(op).toBeGreaterThanOrEqual(0);
    const found = [...model.launchedUnder(op)].sort((a, b) => a - b);
    expect(found.length).toBeGreaterThan(model.launchedFrom(op).length);
    expect(found).toEqual(launchedByNesting(profile, model.columns.opOf, op));
  });

  it('fits the op and every device slice it launched in time, and in rows where they fit on the screen', () => {
    const layout = new TrackLayout(model);
    layout.build();
    const place = (s: number): Placed => ({
      start: model.columns.start[s],
      end: model.end(s),
      y: layout.laneY[model.laneOfSlice[s]],
    });
    const launched = model.launchedUnder(op).map(place);
    const anchor = place(op);
    for (const rowsHeight of [2000, 300]) {
      const view = fitView(anchor, launched, ROW_HEIGHT, rowsHeight);
      for (const item of [anchor, ...launched]) {
        expect(item.start).toBeGreaterThanOrEqual(view.start);
        expect(item.end).toBeLessThanOrEqual(view.end);
      }
      const t0 = Math.min(anchor.start, ...launched.map((p) => p.start));
      const t1 = Math.max(anchor.end, ...launched.map((p) => p.end));
      expect(view.end - view.start).toBeLessThan((t1 - t0) * 1.2);
      // The op's own row is always on screen.
      expect(anchor.y).toBeGreaterThanOrEqual(view.scrollTop);
      expect(anchor.y + ROW_HEIGHT).toBeLessThanOrEqual(view.scrollTop + rowsHeight);
      const ys = [anchor, ...launched].map((p) => p.y);
      const tall = Math.max(...ys) + ROW_HEIGHT - Math.min(...ys) + 16 > rowsHeight;
      if (!tall) for (const y of ys) expect(y + ROW_HEIGHT).toBeLessThanOrEqual(view.scrollTop + rowsHeight);
    }
  });
});

describe('fitView', () => {
  it('centres rows that fit, and keeps the anchor on screen when they do not', () => {
    const anchor = { start: 100, end: 200, y: 1000 };
    const kernel = { start: 150, end: 400, y: 40 };
    const fits = fitView(anchor, [kernel], 18, 2000);
    expect(fits.start).toBeCloseTo(100 - 15);
    expect(fits.end).toBeCloseTo(400 + 15);
    expect(fits.scrollTop).toBe(0);
    const short = fitView(anchor, [kernel], 18, 500);
    expect(short.scrollTop).toBe(1000 + 18 + 8 - 500);
    const below = fitView({ ...anchor, y: 40 }, [{ ...kernel, y: 1000 }], 18, 500);
    expect(below.scrollTop).toBe(32);
    // A zero-length slice with nothing launched still gets a view around it.
    const point = fitView({ start: 5_000, end: 5_000, y: 0 }, [], 18, 500);
    expect(point.end - point.start).toBeGreaterThan(0);
    expect((point.start + point.end) / 2).toBe(5_000);
  });
});
