/**
 * The rows down the canvas: a header per process, then each of its tracks with one lane per nesting depth,
 * unless the process is collapsed. Positions are content coordinates (0 at the top of the first row).
 */
import type { Lane, TimelineModel } from '../model';

export const ROW_HEIGHT = 18;
export const PROCESS_HEIGHT = 22;
/** Space between two tracks, half above and half below the lanes. */
export const TRACK_GAP = 6;

export interface Row {
  kind: 'process' | 'track';
  y: number;
  height: number;
  label: string;
  detail: string;
  process: string;
  lanes: Lane[];
}

/** The process a lane's track belongs to, as the rows name it. */
export function processOf(lane: Lane): string {
  return `${lane.track.pid}`;
}

export class TrackLayout {
  rows: Row[] = [];
  /** Height of all rows. */
  height = 0;
  /** Per lane of the model's lanes now: y of its top, -1 when hidden (process collapsed). */
  laneY: Float64Array;
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

  build(): void {
    const rows: Row[] = [];
    // The model's lanes change when the profiler's frames are shown or hidden.
    if (this.laneY.length !== this.model.lanes.length) this.laneY = new Float64Array(this.model.lanes.length);
    this.laneY.fill(-1);
    let y = 0;
    let process = '';
    for (const track of this.model.header.tracks) {
      const processKey = `${track.pid}`;
      if (processKey !== process) {
        process = processKey;
        const label = track.processName || `process ${track.pid}`;
        rows.push({
          kind: 'process',
          y,
          height: PROCESS_HEIGHT,
          label,
          detail: '',
          process: processKey,
          lanes: [],
        });
        y += PROCESS_HEIGHT;
      }
      if (this.collapsed.has(processKey)) continue;
      const lanes = (this.model.lanesOfTrack.get(track.id) ?? []).filter(Boolean);
      if (lanes.length === 0) continue;
      const height = lanes.length * ROW_HEIGHT + TRACK_GAP;
      for (const lane of lanes) this.laneY[lane.index] = y + TRACK_GAP / 2 + lane.depth * ROW_HEIGHT;
      rows.push({
        kind: 'track',
        y,
        height,
        label: track.name || track.tid,
        detail: `${this.model.shownSliceCount(track).toLocaleString('en-US')} slices`,
        process: processKey,
        lanes,
      });
      y += height;
    }
    this.rows = rows;
    this.height = y;
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
