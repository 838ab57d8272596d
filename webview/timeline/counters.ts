/**
 * Counter rows: each series drawn as a step area chart (a value holds until the next point), the peak marked.
 * Each series keeps a pyramid of its points (level L: buckets of 2^L points with their minimum, maximum and last
 * value), so a frame costs pixels, not points, at every zoom, as the slices' levels of detail do.
 */
import type { TimelineColumns, TimelineCounterSeries, TimelineCounterTrack } from '../../extension/protocol';
import { formatBytes, formatCount, formatDuration } from '../../extension/shared/format';
import type { Frame } from './frame';
import { LABEL_WIDTH } from './viewport';

/** Room above and below a counter's chart inside its row, CSS px (the rows' gap, and a little for the peak mark). */
const CHART_PAD_TOP = 5;
const CHART_PAD_BOTTOM = 3;

/** One level of a series' pyramid: bucket k starts at start[k] and holds values min[k]..max[k], ending at last[k]. */
export interface CounterLevel {
  readonly length: number;
  readonly start: Float64Array;
  readonly min: Float64Array;
  readonly max: Float64Array;
  readonly last: Float64Array;
}

/** A series' points and its pyramid (coarser levels built on first use). */
export class SeriesLod {
  private readonly levels: CounterLevel[];

  constructor(
    readonly series: TimelineCounterSeries,
    columns: Pick<TimelineColumns, 'counterTs' | 'counterValue'>,
  ) {
    const start = columns.counterTs.subarray(series.from, series.to);
    const value = columns.counterValue.subarray(series.from, series.to);
    this.levels = [{ length: start.length, start, min: value, max: value, last: value }];
  }

  get finest(): CounterLevel {
    return this.levels[0];
  }

  /** The coarsest level that still has about two buckets per pixel for `pointsInView` points over `pixels`. */
  levelFor(pointsInView: number, pixels: number): CounterLevel {
    let level = 0;
    while (pointsInView >> (level + 1) >= pixels * 2 && this.level(level + 1).length > 1) level++;
    return this.level(level);
  }

  private level(index: number): CounterLevel {
    while (this.levels.length <= index) {
      const below = this.levels[this.levels.length - 1];
      const n = Math.ceil(below.length / 2);
      const next = {
        length: n,
        start: new Float64Array(n),
        min: new Float64Array(n),
        max: new Float64Array(n),
        last: new Float64Array(n),
      };
      for (let k = 0; k < n; k++) {
        const a = 2 * k;
        const b = Math.min(a + 1, below.length - 1);
        next.start[k] = below.start[a];
        next.min[k] = Math.min(below.min[a], below.min[b]);
        next.max[k] = Math.max(below.max[a], below.max[b]);
        next.last[k] = below.last[b];
      }
      this.levels.push(next);
    }
    return this.levels[index];
  }
}

/** First k with level.start[k] > t. */
export function upperBound(level: CounterLevel, t: number): number {
  let lo = 0;
  let hi = level.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (level.start[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The value a series holds at time t (its last point at or before t), undefined before its first point. */
export function valueAt(lod: SeriesLod, t: number): { value: number; ts: number } | undefined {
  const level = lod.finest;
  const k = upperBound(level, t) - 1;
  return k < 0 ? undefined : { value: level.last[k], ts: level.start[k] };
}

/** A counter's value as its unit reads: bytes as kB / MB / GB, counts as they are. */
export function formatCounterValue(track: TimelineCounterTrack, value: number): string {
  if (track.unit === 'bytes') return formatBytes(value);
  return Math.abs(value) >= 1e6 || Number.isInteger(value) ? formatCount(value) : value.toPrecision(4);
}

/** The one-line summary under a counter row's name (the tooltip says how far a downsampled row was thinned). */
export function counterDetail(track: TimelineCounterTrack): string {
  const peak = Math.max(...track.series.map((s) => s.max));
  const { points, shown } = pointCounts(track);
  const what = shown < points ? 'downsampled' : `${formatCount(points)} points`;
  return `peak ${formatCounterValue(track, peak)} · ${what}`;
}

/** Points in the profile and in the payload, over a row's series. */
function pointCounts(track: TimelineCounterTrack): { points: number; shown: number } {
  let points = 0;
  let shown = 0;
  for (const s of track.series) {
    points += s.points;
    shown += s.to - s.from;
  }
  return { points, shown };
}

/** Series colours: the first in the focus colour, the second orange, then the slice palette. */
function seriesColour(frame: Frame, index: number): string {
  const { theme } = frame;
  if (index === 0) return theme.focus;
  if (index === 1) return theme.flowSelected;
  return theme.palette[(index * 7) % theme.palette.length];
}

/**
 * The value range a counter row's chart spans: from 0 (or below, for negative values) to its peak; when every
 * value is above half the peak (a model's weights held all along), from a little below the lowest, so the
 * changes are seen. The row then writes its floor's value.
 */
export function chartRange(track: TimelineCounterTrack): { lo: number; hi: number } {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of track.series) {
    lo = Math.min(lo, s.min);
    hi = Math.max(hi, s.max);
  }
  if (!Number.isFinite(lo)) return { lo: 0, hi: 1 };
  if (lo > 0 && lo <= hi / 2) lo = 0;
  else if (lo > 0) lo = Math.max(0, lo - (hi - lo) * 0.1);
  else lo = Math.min(lo, 0);
  return { lo, hi: hi > lo ? hi : lo + 1 };
}

/**
 * Draws one counter row at screen y (its top) and `height`: the series back to front (the first on top), each a
 * filled step area with its outline, and a mark with the value at each series' peak.
 */
export function drawCounterRow(
  frame: Frame,
  track: TimelineCounterTrack,
  lods: readonly SeriesLod[],
  y: number,
  height: number,
): number {
  const { ctx, viewport } = frame;
  const top = y + CHART_PAD_TOP;
  const base = y + height - CHART_PAD_BOTTOM;
  const { lo, hi } = chartRange(track);
  const yOf = (v: number): number => base - ((v - lo) / (hi - lo)) * (base - top);
  let points = 0;
  for (let s = lods.length - 1; s >= 0; s--) {
    const colour = seriesColour(frame, s);
    points += drawSeries(frame, lods[s], yOf, base, colour, s === 0 ? 0.4 : 0.2);
    const peak = lods[s].series;
    const x = viewport.xOf(peak.peakNs);
    if (x < LABEL_WIDTH || x > viewport.width) continue;
    ctx.fillStyle = colour;
    ctx.beginPath();
    const py = yOf(peak.max);
    ctx.moveTo(x, py);
    ctx.lineTo(x - 4, py - 5);
    ctx.lineTo(x + 4, py - 5);
    ctx.closePath();
    ctx.fill();
    if (s === 0) {
      const label = `peak ${formatCounterValue(track, peak.max)}`;
      const w = ctx.measureText(label).width;
      ctx.fillStyle = frame.theme.foreground;
      ctx.fillText(label, Math.min(x + 6, viewport.width - w - 2), Math.max(top + 5, py - 2));
    }
  }
  // The zero line, when the chart reaches below it; the floor's value, when it is not zero.
  if (lo < 0) {
    ctx.fillStyle = frame.theme.border;
    ctx.fillRect(LABEL_WIDTH, Math.round(yOf(0)), viewport.width - LABEL_WIDTH, 1);
  } else if (lo > 0) {
    ctx.fillStyle = frame.theme.muted;
    ctx.fillText(`from ${formatCounterValue(track, lo)}`, LABEL_WIDTH + 4, base - 6);
  }
  return points;
}

/** The pointer over a counter row: a line at its time, and a dot on each series at the value held then. */
export function drawCounterHover(
  frame: Frame,
  track: TimelineCounterTrack,
  lods: readonly SeriesLod[],
  y: number,
  height: number,
  t: number,
): void {
  const { ctx, viewport, theme } = frame;
  const x = Math.round(viewport.xOf(t)) + 0.5;
  if (x < LABEL_WIDTH || x > viewport.width) return;
  const top = y + CHART_PAD_TOP;
  const base = y + height - CHART_PAD_BOTTOM;
  const { lo, hi } = chartRange(track);
  ctx.fillStyle = theme.muted;
  ctx.fillRect(x - 0.5, y + 1, 1, height - 2);
  lods.forEach((lod, s) => {
    const at = valueAt(lod, t);
    if (!at) return;
    ctx.fillStyle = seriesColour(frame, s);
    ctx.beginPath();
    ctx.arc(x, base - ((at.value - lo) / (hi - lo)) * (base - top), 3, 0, Math.PI * 2);
    ctx.fill();
  });
}

/** One series as a step area from the left edge of the view to the right; answers the buckets drawn. */
function drawSeries(
  frame: Frame,
  lod: SeriesLod,
  yOf: (v: number) => number,
  floorY: number,
  colour: string,
  alpha: number,
): number {
  const { ctx, viewport } = frame;
  const { viewStart, viewEnd } = viewport;
  const finest = lod.finest;
  if (finest.length === 0) return 0;
  const first = Math.max(0, upperBound(finest, viewStart) - 1);
  const end = upperBound(finest, viewEnd);
  const level = lod.levelFor(end - first, Math.max(1, viewport.width - LABEL_WIDTH));
  // The bucket in effect at the left edge, then each one starting in view.
  let k = Math.max(0, upperBound(level, viewStart) - 1);
  const x0 = Math.max(LABEL_WIDTH, viewport.xOf(level.start[k]));
  const right = viewport.width;
  const zero = floorY;
  ctx.beginPath();
  ctx.moveTo(x0, zero);
  let drawn = 0;
  let lastY = zero;
  for (; k < level.length; k++) {
    const x = Math.max(LABEL_WIDTH, viewport.xOf(level.start[k]));
    if (x > right) break;
    ctx.lineTo(x, lastY);
    ctx.lineTo(x, yOf(level.max[k]));
    if (level.min[k] !== level.max[k]) ctx.lineTo(x, yOf(level.min[k]));
    lastY = yOf(level.last[k]);
    ctx.lineTo(x, lastY);
    drawn++;
  }
  // The last value holds to the end of the profile (an allocator keeps what it last held).
  const endNs = Math.max(frame.model.header.endNs, level.start[level.length - 1]);
  const xEnd = k < level.length ? right : Math.min(right, viewport.xOf(endNs));
  ctx.lineTo(Math.max(xEnd, x0), lastY);
  ctx.strokeStyle = colour;
  ctx.lineWidth = 1;
  ctx.stroke();
  ctx.lineTo(Math.max(xEnd, x0), zero);
  ctx.closePath();
  ctx.globalAlpha = alpha;
  ctx.fillStyle = colour;
  ctx.fill();
  ctx.globalAlpha = 1;
  return drawn;
}

/** "allocated 87.3 MB · reserved 116.0 MB at 1.23 s": the tooltip's line for a counter row at time t. */
export function describeCounterAt(
  track: TimelineCounterTrack,
  lods: readonly SeriesLod[],
  t: number,
  origin: number,
): string {
  const parts: string[] = [];
  for (const lod of lods) {
    const at = valueAt(lod, t);
    if (at) parts.push(`${lod.series.name} ${formatCounterValue(track, at.value)}`);
  }
  const { points, shown } = pointCounts(track);
  const sampled =
    shown < points
      ? ` (downsampled: ${formatCount(shown)} of ${formatCount(points)} points, the least, most and last of each bucket)`
      : '';
  if (parts.length === 0) return `no value yet at ${formatDuration(t - origin)}${sampled}`;
  return `${parts.join(' · ')} at ${formatDuration(t - origin)}${sampled}`;
}
