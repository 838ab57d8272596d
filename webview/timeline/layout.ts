/**
 * The rows down the canvas (in trackOrder.ts's order): a header per group, then each of its tracks with one lane per nesting depth,
 * unless the process is collapsed. Positions are content coordinates (0 at the top of the first row).
 */
import type { TimelineCounterTrack, TimelineTrack } from '../../extension/protocol';
import type { Lane, TimelineModel } from '../model';
import { counterDetail } from './counters';
import { orderTracks, PINNED } from './trackOrder';
import { formatCount } from '../../extension/shared/format';

export const ROW_HEIGHT = 18;
export const PROCESS_HEIGHT = 22;
/** Space between two tracks, half above and half below the lanes. */
export const TRACK_GAP = 6;
/** Height of a counter row (its chart, and the gap). */
export const COUNTER_HEIGHT = 3 * ROW_HEIGHT + TRACK_GAP;

export interface Row {
  kind: 'process' | 'track' | 'counter';
  y: number;
  height: number;
  label: string;
  detail: string;
  process: string;
  lanes: Lane[];
  /** A track's row: its track id, and whether it is pinned. */
  trackId?: number;
  pinned?: boolean;
  /** A counter's row: the counter. */
  counter?: TimelineCounterTrack;
}

export class TrackLayout {
  rows: Row[] = [];
  /** Height of all rows. */
  height = 0;
  /** Height of the pinned group at the top (0 without pins): those rows stay put while the rest scrolls. */
  pinnedHeight = 0;
  /** Per lane of the model's lanes now: y of its top, -1 when hidden (process collapsed, or nothing to draw). */
  laneY: Float64Array;
  /** Track ids pinned to the top. */
  readonly pinned = new Set<number>();
  private readonly collapsed = new Set<string>();

  constructor(private readonly model: TimelineModel) {
    this.laneY = new Float64Array(model.lanes.length).fill(-1);
  }

  isCollapsed(process: string): boolean {
    return this.collapsed.has(process);
  }

  /** Collapses an expanded process, expands a collapsed one (build() lays the rows out again). */
  toggle(process: string): void {
    if (this.collapsed.has(process)) this.collapsed.delete(process);
    else this.collapsed.add(process);
  }

  expand(process: string): void {
    this.collapsed.delete(process);
  }

  /** Pins a track to the top, or unpins it (build() lays the rows out again). */
  togglePin(trackId: number): void {
    if (this.pinned.has(trackId)) this.pinned.delete(trackId);
    else this.pinned.add(trackId);
  }

  /** The group a lane's rows are in: the pinned one, or its process. */
  processOf(lane: Lane): string {
    return this.pinned.has(lane.track.id) ? PINNED : lane.track.pid;
  }

  build(): void {
    const rows: Row[] = [];
    // The model's lanes change when the profiler's frames are shown or hidden.
    if (this.laneY.length !== this.model.lanes.length) this.laneY = new Float64Array(this.model.lanes.length);
    this.laneY.fill(-1);
    this.pinnedHeight = 0;
    let y = 0;
    const groups = orderTracks(
      this.model.header.tracks,
      this.pinned,
      (t) => this.model.isTrackShown(t),
      this.model.counters,
    );
    for (const group of groups) {
      const { label, process } = group;
      rows.push({ kind: 'process', y, height: PROCESS_HEIGHT, label, detail: '', process, lanes: [] });
      y += PROCESS_HEIGHT;
      if (this.collapsed.has(group.process)) continue;
      // Counters go after the device streams, before the CPU threads.
      const streams = group.tracks.filter((t) => t.kind === 'device').length;
      group.tracks.forEach((track, k) => {
        if (k === streams) y = this.counterRows(rows, group.counters, process, y);
        y = this.trackRow(rows, track, group.process, y);
      });
      if (streams === group.tracks.length) y = this.counterRows(rows, group.counters, process, y);
      if (group.process === PINNED) this.pinnedHeight = y;
    }
    this.rows = rows;
    this.height = y;
  }

  /** Adds a track's row (its lanes' positions set); answers the y below it. */
  private trackRow(rows: Row[], track: TimelineTrack, process: string, y: number): number {
    const lanes = (this.model.lanesOfTrack.get(track.id) ?? []).filter(Boolean);
    if (lanes.length === 0) return y;
    const height = lanes.length * ROW_HEIGHT + TRACK_GAP;
    for (const lane of lanes) this.laneY[lane.index] = y + TRACK_GAP / 2 + lane.depth * ROW_HEIGHT;
    rows.push({
      kind: 'track',
      y,
      height,
      label: track.name || track.tid,
      detail: `${formatCount(this.model.shownSliceCount(track))} slices`,
      process,
      lanes,
      trackId: track.id,
      pinned: this.pinned.has(track.id),
    });
    return y + height;
  }

  private counterRows(
    rows: Row[],
    counters: readonly TimelineCounterTrack[],
    process: string,
    y: number,
  ): number {
    for (const counter of counters) {
      rows.push({
        kind: 'counter',
        y,
        height: COUNTER_HEIGHT,
        label: counter.name,
        detail: counterDetail(counter),
        process,
        lanes: [],
        counter,
      });
      y += COUNTER_HEIGHT;
    }
    return y;
  }

  /** The counter row at a content y, if any. */
  counterAt(y: number): Row | undefined {
    return this.rows.find((r) => r.kind === 'counter' && y >= r.y && y < r.y + r.height);
  }

  /** The track row at a content y, if any. */
  trackAt(y: number): Row | undefined {
    return this.rows.find((r) => r.kind === 'track' && y >= r.y && y < r.y + r.height);
  }

  /** The lane at a content y, if any. */
  laneAt(y: number): Lane | undefined {
    for (const row of this.rows) {
      if (row.kind !== 'track' || y < row.y || y >= row.y + row.height) continue;
      for (const lane of row.lanes) {
        const ly = this.laneY[lane.index];
        if (y >= ly && y < ly + ROW_HEIGHT) return lane;
      }
    }
    return undefined;
  }

  /** The process whose header is at a content y, if any. */
  processHeaderAt(y: number): string | undefined {
    for (const row of this.rows) {
      if (row.kind === 'process' && y >= row.y && y < row.y + row.height) return row.process;
    }
    return undefined;
  }

  /** The process of the first row reaching below a content y. */
  processBelow(y: number): string | undefined {
    return this.rows.find((r) => r.y + r.height > y)?.process;
  }
}
