/** What is where: the slice under a point, and a slice's neighbours up and down its track. */
import { firstEndingAfter, sliceAt } from '../lod';
import type { Lane, TimelineModel } from '../model';
import type { TrackLayout } from './layout';
import { LABEL_WIDTH, RULER_HEIGHT, type Viewport } from './viewport';

export interface Hit {
  /** The slice, -1 when none. */
  slice: number;
  /** For a merged block: how many slices it stands for (its `slice` is the longest); 0 for a slice itself. */
  merged: number;
}

const MISS: Hit = { slice: -1, merged: 0 };

/** The slice under a screen point; merged blocks answer with their count for the tooltip. */
export function hitTest(viewport: Viewport, layout: TrackLayout, x: number, y: number): Hit {
  if (x < LABEL_WIDTH || y < RULER_HEIGHT) return { ...MISS };
  const lane = layout.laneAt(viewport.contentY(y));
  if (!lane) return { ...MISS };
  const nsPerPx = viewport.nsPerPx;
  const t = viewport.nsAt(x);
  const slice = sliceAt(lane.lod.finest, t, nsPerPx * 2);
  if (slice >= 0) return { slice, merged: 0 };
  const level = lane.lod.levelFor(nsPerPx);
  const k = firstEndingAfter(level, t - nsPerPx);
  if (k < level.length && level.start[k] <= t + nsPerPx && level.count[k] > 1) {
    return { slice: level.slice[k], merged: level.count[k] };
  }
  return { ...MISS };
}

/** The lane one level above or below a slice's, as drawn now (hidden frames take no lane). */
function laneBeside(model: TimelineModel, slice: number, delta: number): Lane | undefined {
  const own = model.laneOf(slice);
  return own ? model.lanesOfTrack.get(own.track.id)?.[own.depth + delta] : undefined;
}

/** The enclosing slice one level up on the same track, -1 at the top. */
export function parentOf(model: TimelineModel, slice: number): number {
  const lane = laneBeside(model, slice, -1);
  return lane ? sliceAt(lane.lod.finest, model.columns.start[slice], 0) : -1;
}

/** The first slice one level down inside `slice`, -1 when none. */
export function firstChildOf(model: TimelineModel, slice: number): number {
  const start = model.columns.start;
  const lane = laneBeside(model, slice, 1);
  if (!lane) return -1;
  const level = lane.lod.finest;
  const end = model.end(slice);
  for (let k = firstEndingAfter(level, start[slice]); k < level.length && level.start[k] <= end; k++) {
    if (level.start[k] >= start[slice]) return level.slice[k];
  }
  return -1;
}
