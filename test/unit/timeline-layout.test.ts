/** The timeline's rows on real traces: device streams first, pinned tracks above them, nothing empty shown. */
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { importTrace } from '../../extension/import/kineto';
import type { TimelineTrack } from '../../extension/protocol';
import { encodeTimeline } from '../../extension/timeline/encode';
import { TimelineModel } from '../../webview/model';
import { TrackLayout, type Row } from '../../webview/timeline/layout';
import { orderTracks, PINNED } from '../../webview/timeline/trackOrder';
import { TRACES } from '../helpers/paths';

async function modelOf(file: string): Promise<TimelineModel> {
  const profile = await importTrace(path.join(TRACES, file));
  return new TimelineModel(encodeTimeline(profile, analyze(profile)));
}

function trackRows(layout: TrackLayout): Row[] {
  return layout.rows.filter((r) => r.kind === 'track');
}

function trackOfRow(model: TimelineModel, row: Row): TimelineTrack {
  return model.header.tracks.find((t) => t.id === row.trackId)!;
}

describe('the rows of the 56 MB OWLv2 trace (H100)', () => {
  let model: TimelineModel;
  beforeAll(async () => {
    model = await modelOf('tracelens_h100_owlv2_large.trace.json.gz');
  }, 120_000);

  it('put the GPU stream first, and leave out the rows of nothing but Kineto markers', () => {
    const layout = new TrackLayout(model);
    layout.build();
    const rows = trackRows(layout);
    expect(trackOfRow(model, rows[0]).kind).toBe('device');
    const kinds = rows.map((r) => trackOfRow(model, r).kind);
    expect(kinds.lastIndexOf('device')).toBeLessThan(kinds.indexOf('cpu'));
    // "-1" (Buffer Flush), "Spans", "Traces" and the unnamed instants' row: the profiler's own.
    const processes = new Set(layout.rows.map((r) => r.process));
    for (const pid of ['-1', 'Spans', 'Traces', '']) expect(processes.has(pid), pid).toBe(false);
    expect(model.profilerTracks.size).toBe(4);
    // The device process shares its name with the host's, so its header says which device it is.
    expect(layout.rows[0]).toMatchObject({ kind: 'process', label: 'python3 · device 0' });
    // Every laid-out lane is on a shown track; every lane of a shown track is laid out.
    for (const lane of model.lanes) {
      expect(layout.laneY[lane.index] >= 0, `lane ${lane.index}`).toBe(model.isTrackShown(lane.track));
    }
  });

  it('show the marker rows with the profiler frames, and keep their slices out of search until then', () => {
    expect(model.search('PyTorch Profiler', false)).toMatchObject({ matches: new Int32Array(0) });
    model.showProfilerFrames(true);
    try {
      const layout = new TrackLayout(model);
      layout.build();
      const processes = new Set(layout.rows.map((r) => r.process));
      for (const pid of ['-1', 'Spans', 'Traces']) expect(processes.has(pid), pid).toBe(true);
      const found = model.search('PyTorch Profiler', false);
      expect('matches' in found && found.matches.length).toBeGreaterThan(0);
    } finally {
      model.showProfilerFrames(false);
    }
  });

  it('pin a CPU thread above the device streams, and unpin it back into its process', () => {
    const layout = new TrackLayout(model);
    layout.build();
    const thread = model.header.tracks.find((t) => t.kind === 'cpu' && model.isTrackShown(t))!;
    layout.togglePin(thread.id);
    layout.build();
    expect(layout.rows[0]).toMatchObject({ kind: 'process', label: 'Pinned', process: PINNED });
    expect(trackRows(layout)[0]).toMatchObject({ trackId: thread.id, pinned: true, process: PINNED });
    expect(trackRows(layout).filter((r) => r.trackId === thread.id)).toHaveLength(1);
    const lane = model.lanesOfTrack.get(thread.id)![0];
    expect(layout.processOf(lane)).toBe(PINNED);
    expect(layout.laneY[lane.index]).toBeLessThan(
      layout.laneY[model.lanesOfTrack.get(trackRows(layout)[1].trackId!)![0].index],
    );
    layout.togglePin(thread.id);
    layout.build();
    expect(layout.rows.some((r) => r.process === PINNED)).toBe(false);
    expect(layout.processOf(lane)).toBe(thread.pid);
  });
});

describe('the order of tracks on other real traces', () => {
  it.each([
    'ascend_npu_trace_view.json',
    'hta_mtia_inference_rank0.trace.json.gz',
    'tracelens_mi300x_bert_small.trace.json.gz',
    'hta_a100_event_sync_multi_stream.trace.json.gz',
  ])(
    '%s: every process with device streams comes before those without, its streams first',
    async (file) => {
      const model = await modelOf(file);
      const groups = orderTracks(model.header.tracks, new Set(), (t) => model.isTrackShown(t));
      const withDevice = groups.map((g) => g.tracks.some((t) => t.kind === 'device'));
      expect(withDevice[0]).toBe(true);
      expect(withDevice.indexOf(false) < 0 || withDevice.lastIndexOf(true) < withDevice.indexOf(false)).toBe(
        true,
      );
      for (const group of groups) {
        const kinds = group.tracks.map((t) => t.kind);
        const rank = { device: 0, cpu: 1, other: 2 };
        expect(kinds).toEqual([...kinds].sort((a, b) => rank[a] - rank[b]));
        expect(group.tracks.length).toBeGreaterThan(0);
      }
      const shown = groups.flatMap((g) => g.tracks.map((t) => t.id)).sort((a, b) => a - b);
      const expected = model.header.tracks.filter((t) => model.isTrackShown(t)).map((t) => t.id);
      expect(shown).toEqual(expected.sort((a, b) => a - b));
    },
    120_000,
  );

  it('a CPU-only run: no device process, and its threads all shown', async () => {
    const model = await modelOf('hta_cpu_only_gloo_rank34.pt.trace.json.gz');
    const groups = orderTracks(model.header.tracks, new Set(), (t) => model.isTrackShown(t));
    expect(groups.map((g) => g.label)).toEqual(['pyper:trainer:8:2']);
    expect(groups[0].tracks.map((t) => t.kind)).toEqual(['cpu', 'cpu', 'cpu']);
  });
});
