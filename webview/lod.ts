/**
 * Level of detail for one lane (a track's row at one depth): the lane's slices, and for power-of-two
 * resolutions r = 2^k ns, the same slices with every run of sub-r slices (each shorter than r, separated by gaps
 * shorter than r) merged into one block. Drawing at p ns per pixel uses the coarsest level with r <= p, so the
 * blocks drawn per lane stay proportional to the lane's width in pixels, whatever the number of slices.
 */

export interface LodLevel {
  /** log2 of the resolution in ns. */
  readonly shift: number;
  readonly length: number;
  readonly start: Float64Array;
  readonly end: Float64Array;
  /** Running maximum of `end`: binary-searchable even where blocks overlap. Same array as `end` when sorted. */
  readonly maxEnd: Float64Array;
  /** The slice drawn for the block: the only one, or the longest of a merged run. */
  readonly slice: Int32Array;
  /** Slices in the block; 1 for a slice drawn as itself. */
  readonly count: Uint32Array;
}

function withMaxEnd(
  shift: number,
  start: Float64Array,
  end: Float64Array,
  slice: Int32Array,
  count: Uint32Array,
): LodLevel {
  let sorted = true;
  for (let i = 1; i < end.length; i++) {
    if (end[i] < end[i - 1]) {
      sorted = false;
      break;
    }
  }
  let maxEnd = end;
  if (!sorted) {
    maxEnd = new Float64Array(end.length);
    let m = -Infinity;
    for (let i = 0; i < end.length; i++) {
      if (end[i] > m) m = end[i];
      maxEnd[i] = m;
    }
  }
  return { shift, length: start.length, start, end, maxEnd, slice, count };
}

/** Merges the level below at resolution 2^shift; returns undefined when nothing merges (the level is reused). */
function coarsen(below: LodLevel, shift: number, dur: Float64Array): LodLevel | undefined {
  const r = 2 ** shift;
  const n = below.length;
  // First pass: count the blocks, to allocate exactly and to skip levels that would not shrink.
  let blocks = 0;
  let runEnd = -Infinity;
  let inRun = false;
  for (let i = 0; i < n; i++) {
    const small = below.end[i] - below.start[i] < r;
    if (small && inRun && below.start[i] - runEnd < r) {
      if (below.end[i] > runEnd) runEnd = below.end[i];
      continue;
    }
    blocks++;
    inRun = small;
    runEnd = below.end[i];
  }
  if (blocks === n) return undefined;
  const start = new Float64Array(blocks);
  const end = new Float64Array(blocks);
  const slice = new Int32Array(blocks);
  const count = new Uint32Array(blocks);
  let b = -1;
  inRun = false;
  for (let i = 0; i < n; i++) {
    const small = below.end[i] - below.start[i] < r;
    if (small && inRun && below.start[i] - end[b] < r) {
      if (below.end[i] > end[b]) end[b] = below.end[i];
      count[b] += below.count[i];
      if (dur[below.slice[i]] > dur[slice[b]]) slice[b] = below.slice[i];
      continue;
    }
    b++;
    start[b] = below.start[i];
    end[b] = below.end[i];
    slice[b] = below.slice[i];
    count[b] = below.count[i];
    inRun = small;
  }
  return withMaxEnd(shift, start, end, slice, count);
}

/**
 * Levels are built on first use, each from the nearest finer level already built (or from the slices), so the
 * first frame pays for the levels it draws and not for the whole pyramid; prebuild() fills in the rest when idle.
 */
export class LaneLod {
  private readonly finestLevel: LodLevel;
  /** Per shift (0..maxShift): the level, undefined until built. A level that merges nothing is the finer one. */
  private readonly built: (LodLevel | undefined)[];

  constructor(
    order: Int32Array,
    startCol: Float64Array,
    private readonly durCol: Float64Array,
    private readonly maxShift: number,
  ) {
    const n = order.length;
    const start = new Float64Array(n);
    const end = new Float64Array(n);
    const count = new Uint32Array(n).fill(1);
    for (let k = 0; k < n; k++) {
      const i = order[k];
      start[k] = startCol[i];
      end[k] = startCol[i] + durCol[i];
    }
    this.finestLevel = withMaxEnd(-Infinity, start, end, Int32Array.from(order), count);
    this.built = new Array(maxShift + 1);
  }

  get finest(): LodLevel {
    return this.finestLevel;
  }

  private level(shift: number): LodLevel {
    if (shift < 0 || this.finestLevel.length <= 1) return this.finestLevel;
    if (shift > this.maxShift) shift = this.maxShift;
    const cached = this.built[shift];
    if (cached) return cached;
    let below = this.finestLevel;
    for (let s = shift - 1; s >= 0; s--) {
      const candidate = this.built[s];
      if (candidate) {
        below = candidate;
        break;
      }
    }
    const level = coarsen(below, shift, this.durCol) ?? below;
    this.built[shift] = level;
    return level;
  }

  /**
   * The level for drawing at `nsPerPx`: resolution up to two pixels, so slices and gaps narrower than about a
   * pixel merge, and each lane draws at most a couple of blocks per pixel column.
   */
  levelFor(nsPerPx: number): LodLevel {
    return this.level(Math.floor(Math.log2(Math.max(1e-9, nsPerPx * 2))));
  }

  /** Builds the next missing level, finest first; false once all are built. */
  prebuildOne(): boolean {
    if (this.finestLevel.length <= 1) return false;
    for (let s = 0; s <= this.maxShift; s++) {
      if (!this.built[s]) {
        this.level(s);
        return true;
      }
    }
    return false;
  }
}

/** First block index whose (running max) end is >= t. */
export function firstEndingAfter(level: LodLevel, t: number): number {
  let lo = 0;
  let hi = level.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (level.maxEnd[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The slice under time t in the lane (within `slack` ns), preferring the one containing t; -1 when none. */
export function sliceAt(level: LodLevel, t: number, slack: number): number {
  let best = -1;
  let bestDistance = Infinity;
  for (let k = firstEndingAfter(level, t - slack); k < level.length && level.start[k] <= t + slack; k++) {
    const distance = t < level.start[k] ? level.start[k] - t : t > level.end[k] ? t - level.end[k] : 0;
    if (distance < bestDistance || (distance === bestDistance && distance === 0)) {
      best = level.slice[k];
      bestDistance = distance;
    }
    if (distance === 0 && level.end[k] - level.start[k] < slack) break;
  }
  return bestDistance <= slack ? best : -1;
}
