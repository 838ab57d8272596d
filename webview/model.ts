/**
 * The profile as the webview holds it: the unpacked columns, the lanes with their level-of-detail pyramids,
 * and the indexes the details panel, search and tables need (built on first use).
 *
 * Two sets of lanes: the payload's, without the profiler's own frames (what is shown first), and, built the first
 * time they are asked for, the lanes of every frame at the slices' own depths.
 */
import {
  buildLanes,
  type LaneColumns,
  type TimelineColumns,
  type TimelineCounterTrack,
  type TimelineHeader,
  type TimelinePayload,
  type TimelineSite,
  type TimelineTrack,
} from '../extension/protocol';
import { isDeviceKind, isLaunchKind, SLICE_KIND_NAMES } from '../extension/shared/kinds';
import { LaneLod } from './lod';
import { SeriesLod } from './timeline/counters';

export interface Lane {
  readonly index: number;
  readonly track: TimelineTrack;
  readonly depth: number;
  readonly order: Int32Array;
  readonly lod: LaneLod;
}

/** The lanes of one view of the tracks, and the lane of each slice. */
interface LaneSet {
  readonly lanes: Lane[];
  /** Per track id: its lanes by depth. */
  readonly lanesOfTrack: Map<number, Lane[]>;
  /** Per slice: its lane index, -1 for a slice in none. */
  readonly laneOfSlice: Int32Array;
  /** Lanes whose every level of detail is built. */
  prebuilt: number;
}

export class TimelineModel {
  readonly header: TimelineHeader;
  readonly columns: TimelineColumns;
  readonly strings: string[];
  /** Per slice, when the profile has any: 1 for a frame of the profiler itself. */
  private readonly profilerFrame: Uint8Array | undefined;
  /** Per track id: how many of its slices are profiler frames. */
  private readonly profilerFramesOnTrack: Map<number, number> = new Map();
  private readonly withoutProfilerFrames: LaneSet;
  private everyFrame: LaneSet | undefined;
  private current: LaneSet;
  private shown = false;
  private launchedIndex: { offset: Uint32Array; items: Int32Array } | undefined;
  private readonly decoder = new TextDecoder();
  private readonly trackById: Map<number, TimelineTrack>;
  /** Per slice: 1 on a track that holds nothing but Kineto's own markers (hidden with the profiler's frames). */
  private readonly onProfilerTrack: Uint8Array | undefined;
  /** Track ids that hold nothing but Kineto's own markers. */
  readonly profilerTracks: ReadonlySet<number>;
  /** The counter rows (header.counters), and each one's series with their levels of detail, built on first use. */
  readonly counters: readonly TimelineCounterTrack[];
  private readonly counterLods: Map<number, SeriesLod[]> = new Map();

  /**
   * `sameSlices`: a model of the same slices (the profile drawn before its analysis, which `payload` completes):
   * its lanes, levels of detail and frame masks are taken over rather than built again.
   */
  constructor(payload: TimelinePayload, sameSlices?: TimelineModel) {
    this.header = payload.header;
    this.columns = payload.columns;
    this.strings = payload.header.strings;
    this.trackById = new Map(this.header.tracks.map((t) => [t.id, t]));
    this.counters = this.header.counters ?? [];
    if (sameSlices && sameSlices.sliceCount === this.header.sliceCount) {
      this.profilerFrame = sameSlices.profilerFrame;
      this.profilerFramesOnTrack = sameSlices.profilerFramesOnTrack;
      this.profilerTracks = sameSlices.profilerTracks;
      this.onProfilerTrack = sameSlices.onProfilerTrack;
      this.withoutProfilerFrames = sameSlices.withoutProfilerFrames;
      this.everyFrame = sameSlices.everyFrame;
      this.counterLods = sameSlices.counterLods;
      this.current = this.withoutProfilerFrames;
      return;
    }
    const frames = this.columns.profilerFrames;
    if (frames.length > 0) {
      this.profilerFrame = new Uint8Array(this.header.sliceCount);
      for (const slice of frames) {
        if (slice >= this.profilerFrame.length) continue;
        this.profilerFrame[slice] = 1;
        const track = this.columns.track[slice];
        this.profilerFramesOnTrack.set(track, (this.profilerFramesOnTrack.get(track) ?? 0) + 1);
      }
    }
    this.profilerTracks = markerOnlyTracks(this.header, this.columns);
    if (this.profilerTracks.size > 0) {
      this.onProfilerTrack = new Uint8Array(this.header.sliceCount);
      for (let i = 0; i < this.header.sliceCount; i++) {
        if (this.profilerTracks.has(this.columns.track[i])) this.onProfilerTrack[i] = 1;
      }
    }
    this.withoutProfilerFrames = laneSet(this.header, this.columns, this.columns);
    this.current = this.withoutProfilerFrames;
  }

  /** A counter row's series, each with its levels of detail. */
  seriesOf(counter: TimelineCounterTrack): SeriesLod[] {
    let lods = this.counterLods.get(counter.id);
    if (!lods) {
      lods = counter.series.map((s) => new SeriesLod(s, this.columns));
      this.counterLods.set(counter.id, lods);
    }
    return lods;
  }

  get lanes(): Lane[] {
    return this.current.lanes;
  }

  /** Per track id: its lanes by depth. */
  get lanesOfTrack(): Map<number, Lane[]> {
    return this.current.lanesOfTrack;
  }

  /** Per slice: its lane index (for hit tests, reveal and flows), -1 when it is in no lane shown. */
  get laneOfSlice(): Int32Array {
    return this.current.laneOfSlice;
  }

  /** How many frames of the profiler itself the profile has (hidden unless shown). */
  get profilerFrameCount(): number {
    return this.columns.profilerFrames.length;
  }

  /** Whether the profiler's frames (and the lines in its files) are shown. */
  get profilerFramesShown(): boolean {
    return this.shown;
  }

  /**
   * Shows or hides the profiler's own frames: the lanes of every frame are built the first time (a counting sort
   * of the slices and their level-of-detail bases), then kept.
   */
  showProfilerFrames(show: boolean): void {
    this.shown = show;
    if (show && this.profilerFrame) {
      const c = this.columns;
      this.everyFrame ??= laneSet(
        this.header,
        c,
        buildLanes(this.header.tracks, {
          count: this.sliceCount,
          track: c.track,
          depth: c.depth,
          start: c.start,
        }),
      );
      this.current = this.everyFrame;
    } else {
      this.current = this.withoutProfilerFrames;
    }
  }

  /** Whether a slice is a profiler frame, or on a track of the profiler's markers, that is hidden now. */
  isHidden(slice: number): boolean {
    if (this.profilerFramesShown) return false;
    return (
      (!!this.profilerFrame && this.profilerFrame[slice] === 1) ||
      (!!this.onProfilerTrack && this.onProfilerTrack[slice] === 1)
    );
  }

  /** Whether a track gets a row: it has slices drawn now, and is not one of the profiler's (unless shown). */
  isTrackShown(track: TimelineTrack): boolean {
    if (this.shownSliceCount(track) === 0) return false;
    return this.profilerFramesShown || !this.profilerTracks.has(track.id);
  }

  /** Builds level-of-detail levels for about `budgetMs`; true while some remain (run it when idle). */
  prebuildLevels(budgetMs: number): boolean {
    const until = performance.now() + budgetMs;
    const set = this.current;
    while (set.prebuilt < set.lanes.length) {
      if (!set.lanes[set.prebuilt].lod.prebuildOne()) set.prebuilt++;
      else if (performance.now() > until) return true;
    }
    return false;
  }

  /** The slices of a track that are drawn now. */
  shownSliceCount(track: TimelineTrack): number {
    if (this.profilerFramesShown) return track.sliceCount;
    return Math.max(0, track.sliceCount - (this.profilerFramesOnTrack.get(track.id) ?? 0));
  }

  trackOf(slice: number): TimelineTrack | undefined {
    return this.trackById.get(this.columns.track[slice]);
  }

  /** The lane a slice is drawn in now, if any. */
  laneOf(slice: number): Lane | undefined {
    return this.lanes[this.laneOfSlice[slice]];
  }

  get sliceCount(): number {
    return this.header.sliceCount;
  }

  nameOf(slice: number): string {
    return this.strings[this.columns.name[slice]] ?? '';
  }

  categoryOf(slice: number): string {
    return this.strings[this.columns.cat[slice]] ?? '';
  }

  kindOf(slice: number): string {
    return SLICE_KIND_NAMES[this.columns.kind[slice]] ?? 'other';
  }

  end(slice: number): number {
    return this.columns.start[slice] + this.columns.dur[slice];
  }

  /**
   * A slice's args; undefined while they are asked of the host (header.argsOnRequest: they are not in the payload,
   * and setArgs brings them).
   */
  argsOf(slice: number): Record<string, unknown> | undefined {
    const a = this.columns.args[slice];
    if (a < 0) return {};
    if (this.header.argsOnRequest) return this.requestedArgs.get(slice);
    return this.parseArgs(
      this.decoder.decode(
        this.columns.argsBytes.subarray(this.columns.argsOffset[a], this.columns.argsOffset[a + 1]),
      ),
    );
  }

  /** The args the host sent for a slice (header.argsOnRequest). */
  setArgs(slice: number, text: string): void {
    if (slice >= 0 && slice < this.header.sliceCount) this.requestedArgs.set(slice, this.parseArgs(text));
  }

  private readonly requestedArgs = new Map<number, Record<string, unknown>>();

  private parseArgs(text: string): Record<string, unknown> {
    try {
      const parsed: unknown = JSON.parse(text);
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : { value: parsed };
    } catch {
      return { raw: text };
    }
  }

  /** The line the one attribution charges the slice to (the hover's line), if any. */
  siteOf(slice: number): TimelineSite | undefined {
    const s = this.columns.site[slice];
    return s >= 0 ? this.header.tables.lines[s] : undefined;
  }

  /** Device slices launched by `op` (or, for a runtime call, the device slices it launched). */
  launchedBy(slice: number): Int32Array {
    this.launchedIndex ??= launchIndex(this.columns, this.sliceCount);
    const { offset, items } = this.launchedIndex;
    return items.subarray(offset[slice], offset[slice + 1]);
  }

  /**
   * The device slices `slice` launched, up to `limit`: for a runtime call those it launched itself, for an op
   * those launched under it.
   */
  launchedFrom(slice: number, limit = Infinity): number[] {
    const launched = this.launchedBy(slice);
    const { kind, runtimeOf } = this.columns;
    const isLaunch = isLaunchKind(kind[slice]);
    const list: number[] = [];
    for (let k = 0; k < launched.length && list.length < limit; k++) {
      if (!isLaunch || runtimeOf[launched[k]] === slice) list.push(launched[k]);
    }
    return list;
  }

  /**
   * The device slices launched by `slice` or anything it encloses on its track (an op's children, a Python
   * function's ops), up to `limit`; for a device slice, itself.
   */
  launchedUnder(slice: number, limit = Infinity): number[] {
    const { kind, start, dur } = this.columns;
    if (isDeviceKind(kind[slice])) return [slice];
    const list = this.launchedFrom(slice, limit);
    const own = this.laneOf(slice);
    if (!own) return list;
    const seen = new Set(list);
    const lanes = this.lanesOfTrack.get(own.track.id) ?? [];
    const from = start[slice];
    const to = from + dur[slice];
    for (let d = own.depth + 1; d < lanes.length && list.length < limit; d++) {
      const order = lanes[d]?.order;
      if (!order) continue;
      for (let k = lowerBound(order, start, from); k < order.length && start[order[k]] <= to; k++) {
        if (start[order[k]] + dur[order[k]] > to) continue;
        // A kernel is reached both through its op and through its runtime call: counted once.
        for (const device of this.launchedFrom(order[k])) {
          if (seen.has(device)) continue;
          seen.add(device);
          list.push(device);
        }
        if (list.length >= limit) break;
      }
    }
    return list.length > limit ? list.slice(0, limit) : list;
  }

  /**
   * The graph launch `slice` is part of: itself for a call that replays a graph, the call that launched it for one
   * of the kernels that call replayed (told by the call's name, or by the kernel's "graph id" when the runtime's
   * name is one we do not know); -1 otherwise.
   */
  graphLaunchOf(slice: number, args?: Record<string, unknown>): number {
    const { kind, runtimeOf } = this.columns;
    if (isLaunchKind(kind[slice])) return isGraphLaunchName(this.nameOf(slice)) ? slice : -1;
    if (!isDeviceKind(kind[slice])) return -1;
    const launch = runtimeOf[slice];
    if (launch < 0) return -1;
    return isGraphLaunchName(this.nameOf(launch)) || graphNodeOf(args) ? launch : -1;
  }

  /** Slices whose name matches, sorted by start; hidden profiler frames are not among them. */
  search(
    pattern: string,
    regex: boolean,
  ): { matches: Int32Array; nameMatches: Uint8Array } | { error: string } {
    const nameMatches = matchNames(this.strings, pattern, regex);
    if ('error' in nameMatches) return nameMatches;
    if (!nameMatches.includes(1)) return { matches: new Int32Array(0), nameMatches };
    const name = this.columns.name;
    let count = 0;
    for (let i = 0; i < this.sliceCount; i++) count += nameMatches[name[i]];
    let matches = new Int32Array(count);
    for (let i = 0, k = 0; i < this.sliceCount; i++) if (nameMatches[name[i]]) matches[k++] = i;
    if ((this.profilerFrame || this.onProfilerTrack) && !this.profilerFramesShown) {
      matches = matches.filter((i) => !this.isHidden(i));
    }
    const start = this.columns.start;
    matches.sort((a, b) => start[a] - start[b] || a - b);
    return { matches, nameMatches };
  }

  /** The longest slice satisfying `accept` that is shown, -1 when none. */
  longest(accept: (slice: number) => boolean): number {
    let best = -1;
    const dur = this.columns.dur;
    for (let i = 0; i < this.sliceCount; i++) {
      if (accept(i) && (best < 0 || dur[i] > dur[best]) && !this.isHidden(i)) best = i;
    }
    return best;
  }
}

/** Whether a runtime or driver call replays a graph: cudaGraphLaunch, hipGraphLaunch, the driver's cuGraphLaunch. */
export function isGraphLaunchName(name: string): boolean {
  return /^(cuda|hip|cu)GraphLaunch/.test(name);
}

/** A kernel's "graph id" and "graph node id" args (newer Kineto writes them for a graph's kernels), if any. */
export function graphNodeOf(
  args: Record<string, unknown> | undefined,
): { graph: string; node: string | undefined } | undefined {
  const graph = args?.['graph id'];
  if (graph === undefined || graph === null || graph === '') return undefined;
  const node = args?.['graph node id'];
  return { graph: String(graph), node: node === undefined || node === null ? undefined : String(node) };
}

/** First k with start[order[k]] >= t, order sorted by start. */
export function lowerBound(order: Int32Array, start: Float64Array, t: number): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (start[order[mid]] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether a slice is one of Kineto's own markers: the trace's span ("PyTorch Profiler (0)", category Trace),
 * its profiler overhead ("Buffer Flush"), the window's start and end instants.
 */
export function isKinetoMarker(name: string, category: string): boolean {
  return (
    category === 'Trace' ||
    category === 'overhead' ||
    name.startsWith('Iteration Start: ') ||
    name === 'Record Window End'
  );
}

/** Tracks with slices that are all Kineto's markers (its "Spans", "Traces" and overhead rows). */
function markerOnlyTracks(header: TimelineHeader, c: TimelineColumns): Set<number> {
  const marker = header.strings.map((text) => isKinetoMarker(text, ''));
  const markerCategory = header.strings.map((text) => isKinetoMarker('', text));
  let ids = 1;
  for (const t of header.tracks) ids = Math.max(ids, t.id + 1);
  // Per track id: 1 with some slice, 2 with some slice that is no marker.
  const seen = new Uint8Array(ids);
  for (let i = 0; i < header.sliceCount; i++) {
    const t = c.track[i];
    if (t >= ids) continue;
    if (!marker[c.name[i]] && !markerCategory[c.cat[i]]) seen[t] = 2;
    else if (seen[t] === 0) seen[t] = 1;
  }
  return new Set(header.tracks.filter((t) => seen[t.id] === 1).map((t) => t.id));
}

/** The lanes of lane columns, each with its level-of-detail pyramid, and the lane of each slice. */
function laneSet(header: TimelineHeader, c: TimelineColumns, lc: LaneColumns): LaneSet {
  const lanes: Lane[] = [];
  const lanesOfTrack = new Map<number, Lane[]>();
  const laneOfSlice = new Int32Array(header.sliceCount).fill(-1);
  const span = Math.max(1, header.endNs - header.startNs);
  const maxShift = Math.ceil(Math.log2(span)) + 1;
  const trackById = new Map(header.tracks.map((t) => [t.id, t]));
  for (let l = 0; l < lc.laneTrack.length; l++) {
    const track = trackById.get(lc.laneTrack[l]);
    if (!track) continue;
    const order = lc.laneOrder.subarray(lc.laneOffset[l], lc.laneOffset[l + 1]);
    for (let k = 0; k < order.length; k++) laneOfSlice[order[k]] = lanes.length;
    const lane: Lane = {
      index: lanes.length,
      track,
      depth: lc.laneDepth[l],
      order,
      lod: new LaneLod(order, c.start, c.dur, maxShift),
    };
    lanes.push(lane);
    let list = lanesOfTrack.get(track.id);
    if (!list) lanesOfTrack.set(track.id, (list = []));
    list[lane.depth] = lane;
  }
  return { lanes, lanesOfTrack, laneOfSlice, prebuilt: 0 };
}

/**
 * Device slices by the slice that launched them, as CSR over opOf and runtimeOf together: opOf for ops,
 * runtimeOf for runtime calls; slice s owns items[offset[s] .. offset[s + 1]).
 */
function launchIndex(c: TimelineColumns, n: number): { offset: Uint32Array; items: Int32Array } {
  const { opOf, runtimeOf, kind } = c;
  const offset = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) {
    if (!isDeviceKind(kind[i])) continue;
    if (opOf[i] >= 0) offset[opOf[i] + 1]++;
    if (runtimeOf[i] >= 0) offset[runtimeOf[i] + 1]++;
  }
  for (let i = 0; i < n; i++) offset[i + 1] += offset[i];
  const items = new Int32Array(offset[n]);
  const cursor = offset.slice(0, n);
  for (let i = 0; i < n; i++) {
    if (!isDeviceKind(kind[i])) continue;
    if (opOf[i] >= 0) items[cursor[opOf[i]]++] = i;
    if (runtimeOf[i] >= 0) items[cursor[runtimeOf[i]]++] = i;
  }
  return { offset, items };
}

/** Per string id: 1 when the string matches (case-insensitive substring, or regex); the regex's error if bad. */
function matchNames(strings: string[], pattern: string, regex: boolean): Uint8Array | { error: string } {
  let test: (name: string) => boolean;
  if (regex) {
    let re: RegExp;
    try {
      re = new RegExp(pattern, 'i');
    } catch (error) {
      return { error: (error as Error).message };
    }
    test = (name) => re.test(name);
  } else {
    const needle = pattern.toLowerCase();
    test = (name) => name.toLowerCase().includes(needle);
  }
  const nameMatches = new Uint8Array(strings.length);
  // String 0 is the empty name.
  for (let s = 1; s < strings.length; s++) if (test(strings[s])) nameMatches[s] = 1;
  return nameMatches;
}
