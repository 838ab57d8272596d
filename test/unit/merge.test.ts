/**
 * A run of several processes as one profile (import/merge.ts, capture/merged.ts), on the real 8-rank DLRM set
 * (param, V100×8): every rank's slices on its own clock time, each rank a track group, and no link, flow or
 * call site crossing from one rank to another — the merged analysis is the ranks' analyses added up.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { analyzeSteps } from '../../extension/analysis/steps';
import type { Analysis } from '../../extension/analysis/types';
import { openRun } from '../../extension/capture/merged';
import { openRankTraces } from '../../extension/capture/ranks';
import { ImportCancelled, importTrace } from '../../extension/import/kineto';
import { mergeProfiles, partOfId } from '../../extension/import/merge';
import type { Profile } from '../../extension/model/profile';
import { TRACES } from '../helpers/paths';

const FOLDER = path.join(TRACES, 'param_dlrm_v100x8');

let ranks: { rank: number; profile: Profile; analysis: Analysis }[];
let merged: Profile;
let analysis: Analysis;

beforeAll(async () => {
  const opened = await openRankTraces(FOLDER);
  ranks = opened.map((r) => ({
    rank: Number(r.rank),
    profile: r.opened!.profile,
    analysis: analyze(r.opened!.profile),
  }));
  merged = (await openRun(FOLDER)).profile;
  analysis = analyze(merged);
}, 120_000);

function earliestNs(profile: Profile, track?: (t: number) => boolean): bigint {
  let min = Infinity;
  for (let i = 0; i < profile.slices.length; i++) {
    if (track && !track(profile.slices.track[i])) continue;
    min = Math.min(min, profile.slices.start[i]);
  }
  return profile.absoluteNs(min);
}

describe('the 8-rank DLRM set opened as one run', () => {
  it('holds every rank’s slices and flows, each rank a track group in rank order', () => {
    expect(ranks.map((r) => r.rank)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const sum = (f: (p: Profile) => number) => ranks.reduce((s, r) => s + f(r.profile), 0);
    expect(merged.slices.length).toBe(sum((p) => p.slices.length));
    expect(merged.flows.length).toBe(sum((p) => p.flows.length));
    const groups = [...new Set(merged.tracks.map((t) => t.processName))];
    expect(groups).toEqual(ranks.map((r) => `Rank ${r.rank}`));
    const rank3Devices = merged.tracks.filter((t) => t.processName === 'Rank 3' && t.kind === 'device');
    expect(rank3Devices.map((t) => t.name)).toContain('device 3 · stream 7');
  });

  it('keeps each rank on its own clock: its first slice at the same absolute time', () => {
    for (const { rank, profile } of ranks) {
      const own = new Set(merged.tracks.filter((t) => t.processName === `Rank ${rank}`).map((t) => t.id));
      expect(earliestNs(merged, (t) => own.has(t))).toBe(earliestNs(profile));
    }
  });

  it('links nothing across ranks: device events, flows and ops add up to the ranks’ own', () => {
    const sum = (f: (a: Analysis) => number) => ranks.reduce((s, r) => s + f(r.analysis), 0);
    expect(analysis.deviceEvents.total).toBe(sum((a) => a.deviceEvents.total));
    expect(analysis.deviceEvents.linkedToRuntime).toBe(sum((a) => a.deviceEvents.linkedToRuntime));
    expect(analysis.deviceEvents.byProvenance).toEqual({
      external_id: sum((a) => a.deviceEvents.byProvenance.external_id),
      enclosure: sum((a) => a.deviceEvents.byProvenance.enclosure),
      none: sum((a) => a.deviceEvents.byProvenance.none),
    });
    expect(analysis.flows.paired).toBe(sum((a) => a.flows.paired));
    for (let d = 0; d < merged.slices.length; d++) {
      const op = analysis.opOf[d];
      if (op < 0) continue;
      expect(merged.tracks[merged.slices.track[op]].pid).toBe(merged.tracks[merged.slices.track[d]].pid);
    }
    const mm = (a: Analysis) => a.ops.find((o) => o.name === 'aten::mm');
    expect(mm(analysis)?.calls).toBe(sum((a) => mm(a)?.calls ?? 0));
    expect(mm(analysis)?.deviceSelfNs).toBeCloseTo(
      sum((a) => mm(a)?.deviceSelfNs ?? 0),
      0,
    );
  });

  it('has each step once: as long as its slowest rank, with every rank’s CPU and device time', () => {
    const merged = analyzeSteps(analysis)!;
    const own = ranks.map((r) => analyzeSteps(r.analysis)!.steps);
    expect(own.every((steps) => steps.length === 1 && steps[0].step === 10)).toBe(true);
    expect(merged.steps).toHaveLength(1);
    expect(merged.steps[0].step).toBe(10);
    expect(merged.steps[0].wallNs).toBe(Math.max(...own.map((s) => s[0].wallNs)));
    expect(merged.steps[0].cpuNs).toBeCloseTo(
      own.reduce((sum, s) => sum + s[0].cpuNs, 0),
      0,
    );
    for (const r of ranks) expect(analyzeSteps(r.analysis)!.steps).toHaveLength(1);
  });

  it('moves each rank’s ids into a range of its own, readable back', () => {
    for (let i = 0; i < merged.slices.length; i++) {
      const id = merged.slices.externalId[i];
      if (Number.isNaN(id)) continue;
      const { part, id: own } = partOfId(id);
      expect(merged.tracks[merged.slices.track[i]].processName).toBe(`Rank ${ranks[part].rank}`);
      expect(own).toBeLessThan(2 ** 40);
    }
  });

  it('merges a single trace into itself unchanged in counts and links', async () => {
    const file = path.join(FOLDER, 'worker0_step_12.1694128201545.pt.trace.json.gz');
    const one = await importTrace(file);
    const alone = mergeProfiles([{ label: 'Rank 0', profile: one }], FOLDER);
    const a = analyze(one);
    const b = analyze(alone);
    expect(b.deviceEvents).toEqual(a.deviceEvents);
    expect(b.ops.map((o) => [o.name, o.calls, o.deviceSelfNs])).toEqual(
      a.ops.map((o) => [o.name, o.calls, o.deviceSelfNs]),
    );
  });

  it('carries each part’s memory samples, on their own ops, and its counters', async () => {
    const bert = path.join(TRACES, 'tracelens_h100_bert_small.trace.json.gz');
    const [a, b] = [await importTrace(bert), await importTrace(bert)];
    b.counters = undefined;
    const both = mergeProfiles(
      [
        { label: 'A', profile: a },
        { label: 'B', profile: b },
      ],
      bert,
    );
    expect(a.memory!.length).toBeGreaterThan(10);
    expect(both.memory!.length).toBe(2 * a.memory!.length);
    for (let i = 0; i < a.memory!.length; i++) {
      for (const k of [i, i + a.memory!.length]) {
        expect(both.memory!.allocated[k]).toBe(a.memory!.allocated[i]);
        const op = both.memory!.op[k];
        expect(op < 0 ? '' : both.nameOf(op)).toBe(a.memory!.op[i] < 0 ? '' : a.nameOf(a.memory!.op[i]));
      }
    }
    expect(both.counters?.length ?? 0).toBe(a.counters?.length ?? 0);
  });
});

describe('opening a run part by part (the editor shows its first part while the rest is read)', () => {
  it('hands over rank 0 alone, once, before the whole run; progress covers every part; the whole is unchanged', async () => {
    const events: string[] = [];
    let first: Profile | undefined;
    const fractions: number[] = [];
    const whole = await openRun(FOLDER, {
      onProgress: (f) => fractions.push(f),
      onFirstPart: (part, remaining) => {
        events.push(`first, ${remaining} to come`);
        first = part.profile;
      },
    });
    events.push('whole');
    expect(events).toEqual(['first, 7 to come', 'whole']);
    expect([...new Set(first!.tracks.map((t) => t.processName))]).toEqual(['Rank 0']);
    expect(first!.slices.length).toBe(ranks[0].profile.slices.length);
    expect(whole.profile.slices.length).toBe(merged.slices.length);
    // The share read rises through all eight parts to the end, never back.
    expect(fractions.length).toBeGreaterThanOrEqual(8);
    for (let i = 1; i < fractions.length; i++) expect(fractions[i]).toBeGreaterThanOrEqual(fractions[i - 1]);
    expect(Math.max(...fractions)).toBeGreaterThan(0.95);
    expect(fractions.some((f) => f > 0.2 && f < 0.8)).toBe(true);
  });

  it('a Cancel after the first part stops the run with ImportCancelled, not a part marked unreadable', async () => {
    const controller = new AbortController();
    await expect(
      openRun(FOLDER, { signal: controller.signal, onFirstPart: () => controller.abort() }),
    ).rejects.toBeInstanceOf(ImportCancelled);
  });

  it('a single trace has no first part to show', async () => {
    let called = false;
    await openRun(path.join(FOLDER, 'worker0_step_12.1694128201545.pt.trace.json.gz'), {
      onFirstPart: () => {
        called = true;
      },
    });
    expect(called).toBe(false);
  });
});
