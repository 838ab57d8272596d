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
import { LaneLod } from './lod';
import { SLICE_KIND_NAMES } from '../extension/model/profile';

/** Slice kind names, indexed by the SliceKind values the payload's kind column carries. */
export const KIND_NAMES = SLICE_KIND_NAMES;
export const KIND_KERNEL = 5;
export const KIND_MEMCPY = 6;
export const KIND_MEMSET = 7;
export const KIND_RUNTIME = 3;
export const KIND_DRIVER = 4;
export const KIND_CPU_OP = 0;
export const KIND_USER_ANNOTATION = 2;

export function isDevice(kind: number): boolean {
  return kind === KIND_KERNEL || kind === KIND_MEMCPY || kind === KIND_MEMSET;
}

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
  readonly lanes: Lane[] = [];
  /** Per track id: its lanes by depth. */
  readonly lanesOfTrack = new Map<number, Lane[]>();
  /** Per slice: its lane index (for hit tests, reveal and flows). */
  readonly laneOfSlice: Int32Array;
  private launchedIndex: { offset: Uint32Array; items: Int32Array } | undefined;
  private readonly decoder = new TextDecoder();

  constructor(payload: TimelinePayload) {
    this.header = payload.header;
    this.columns = payload.columns;
    this.strings = payload.header.strings;
    const c = this.columns;
    const span = Math.max(1, this.header.endNs - this.header.startNs);
    const maxShift = Math.ceil(Math.log2(span)) + 1;
    const trackById = new Map(this.header.tracks.map((t) => [t.id, t]));
    this.laneOfSlice = new Int32Array(this.header.sliceCount).fill(-1);
    const laneCount = c.laneTrack.length;
    for (let l = 0; l < laneCount; l++) {
      const track = trackById.get(c.laneTrack[l]);
      if (!track) continue;
      const order = c.laneOrder.subarray(c.laneOffset[l], c.laneOffset[l + 1]);
      for (let k = 0; k < order.length; k++) this.laneOfSlice[order[k]] = this.lanes.length;
      const lane: Lane = {
        index: this.lanes.length,
        track,
        depth: c.laneDepth[l],
        order,
        lod: new LaneLod(order, c.start, c.dur, maxShift),
      };
      this.lanes.push(lane);
      let list = this.lanesOfTrack.get(track.id);
      if (!list) this.lanesOfTrack.set(track.id, (list = []));
      list[lane.depth] = lane;
    }
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
    return KIND_NAMES[this.columns.kind[slice]] ?? 'other';
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

  /** Device slices and runtime calls launched by `op` (or, for a runtime call, the device slices it launched). */
  launchedBy(slice: number): Int32Array {
    if (!this.launchedIndex) {
      // CSR over opOf and runtimeOf together: opOf for ops, runtimeOf for runtime calls.
      const n = this.sliceCount;
      const { opOf, runtimeOf, kind } = this.columns;
      const offset = new Uint32Array(n + 1);
      for (let i = 0; i < n; i++) {
        if (!isDevice(kind[i])) continue;
        if (opOf[i] >= 0) offset[opOf[i] + 1]++;
        if (runtimeOf[i] >= 0) offset[runtimeOf[i] + 1]++;
      }
      for (let i = 0; i < n; i++) offset[i + 1] += offset[i];
      const items = new Int32Array(offset[n]);
      const cursor = offset.slice(0, n);
      for (let i = 0; i < n; i++) {
        if (!isDevice(kind[i])) continue;
        if (opOf[i] >= 0) items[cursor[opOf[i]]++] = i;
        if (runtimeOf[i] >= 0) items[cursor[runtimeOf[i]]++] = i;
      }
      this.launchedIndex = { offset, items };
    }
    return this.launchedIndex.items.subarray(
      this.launchedIndex.offset[slice],
      this.launchedIndex.offset[slice + 1],
    );
  }

  /** Slices whose name matches, sorted by start. */
  search(
    pattern: string,
    regex: boolean,
  ): { matches: Int32Array; nameMatches: Uint8Array } | { error: string } {
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
    const nameMatches = new Uint8Array(this.strings.length);
    let any = false;
    for (let s = 1; s < this.strings.length; s++) {
      if (test(this.strings[s])) {
        nameMatches[s] = 1;
        any = true;
      }
    }
    if (!any) return { matches: new Int32Array(0), nameMatches };
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
