/**
 * The profile as the webview holds it: the unpacked columns, the lanes with their level-of-detail pyramids,
 * and the indexes the details panel, search and tables need (built on first use).
 */
import type {
  TimelineColumns,
  TimelineHeader,
  TimelinePayload,
  TimelineSite,
  TimelineTrack,
} from '../extension/protocol';
import { isDeviceKind, isLaunchKind, SLICE_KIND_NAMES } from '../extension/shared/kinds';
import { LaneLod } from './lod';

export interface Lane {
  readonly index: number;
  readonly track: TimelineTrack;
  readonly depth: number;
  readonly order: Int32Array;
  readonly lod: LaneLod;
}

export class TimelineModel {
  readonly header: TimelineHeader;
  readonly columns: TimelineColumns;
  readonly strings: string[];
  readonly lanes: Lane[];
  /** Per track id: its lanes by depth. */
  readonly lanesOfTrack: Map<number, Lane[]>;
  /** Per slice: its lane index (for hit tests, reveal and flows). */
  readonly laneOfSlice: Int32Array;
  private launchedIndex: { offset: Uint32Array; items: Int32Array } | undefined;
  private readonly decoder = new TextDecoder();

  constructor(payload: TimelinePayload) {
    this.header = payload.header;
    this.columns = payload.columns;
    this.strings = payload.header.strings;
    const lanes = buildLanes(this.header, this.columns);
    this.lanes = lanes.lanes;
    this.lanesOfTrack = lanes.lanesOfTrack;
    this.laneOfSlice = lanes.laneOfSlice;
  }

  private prebuildLane = 0;

  /** Builds level-of-detail levels for about `budgetMs`; true while some remain (run it when idle). */
  prebuildLevels(budgetMs: number): boolean {
    const until = performance.now() + budgetMs;
    while (this.prebuildLane < this.lanes.length) {
      if (!this.lanes[this.prebuildLane].lod.prebuildOne()) this.prebuildLane++;
      else if (performance.now() > until) return true;
    }
    return false;
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

  argsOf(slice: number): Record<string, unknown> {
    const a = this.columns.args[slice];
    if (a < 0) return {};
    const text = this.decoder.decode(
      this.columns.argsBytes.subarray(this.columns.argsOffset[a], this.columns.argsOffset[a + 1]),
    );
    try {
      const parsed: unknown = JSON.parse(text);
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : { value: parsed };
    } catch {
      return { raw: text };
    }
  }

  siteOf(slice: number): TimelineSite | undefined {
    const s = this.columns.site[slice];
    return s >= 0 ? this.header.sites[s] : undefined;
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

  /** Slices whose name matches, sorted by start. */
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
    const matches = new Int32Array(count);
    for (let i = 0, k = 0; i < this.sliceCount; i++) if (nameMatches[name[i]]) matches[k++] = i;
    const start = this.columns.start;
    matches.sort((a, b) => start[a] - start[b] || a - b);
    return { matches, nameMatches };
  }

  /** The longest slice satisfying `accept`, -1 when none. */
  longest(accept: (slice: number) => boolean): number {
    let best = -1;
    const dur = this.columns.dur;
    for (let i = 0; i < this.sliceCount; i++) if (accept(i) && (best < 0 || dur[i] > dur[best])) best = i;
    return best;
  }
}

/** The lanes of the payload's lane columns, each with its level-of-detail pyramid, and the lane of each slice. */
function buildLanes(
  header: TimelineHeader,
  c: TimelineColumns,
): { lanes: Lane[]; lanesOfTrack: Map<number, Lane[]>; laneOfSlice: Int32Array } {
  const lanes: Lane[] = [];
  const lanesOfTrack = new Map<number, Lane[]>();
  const laneOfSlice = new Int32Array(header.sliceCount).fill(-1);
  const span = Math.max(1, header.endNs - header.startNs);
  const maxShift = Math.ceil(Math.log2(span)) + 1;
  const trackById = new Map(header.tracks.map((t) => [t.id, t]));
  for (let l = 0; l < c.laneTrack.length; l++) {
    const track = trackById.get(c.laneTrack[l]);
    if (!track) continue;
    const order = c.laneOrder.subarray(c.laneOffset[l], c.laneOffset[l + 1]);
    for (let k = 0; k < order.length; k++) laneOfSlice[order[k]] = lanes.length;
    const lane: Lane = {
      index: lanes.length,
      track,
      depth: c.laneDepth[l],
      order,
      lod: new LaneLod(order, c.start, c.dur, maxShift),
    };
    lanes.push(lane);
    let list = lanesOfTrack.get(track.id);
    if (!list) lanesOfTrack.set(track.id, (list = []));
    list[lane.depth] = lane;
  }
  return { lanes, lanesOfTrack, laneOfSlice };
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
