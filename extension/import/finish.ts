/**
 * The finishing pass after all events are read: time origin, process and thread names, track kinds, per-track
 * order, nesting (depth and parent) and the slice each flow half binds to.
 */
import { Profile, SliceKind, isDeviceKind, type TrackKind } from '../model/profile';
import { loadAddon, type FlagprofAddon } from './addon';

export interface ProcessInfo {
  name: string;
  labels: string;
  sortIndex: number;
}

export interface TrackTable {
  /** pid token * 2^22 + tid token -> track id */
  byKey: Map<number, number>;
  tokens: [number, number][];
  processes?: Map<number, ProcessInfo>;
}

/** Which code orders and nests the slices: the addon's (where built), or the TypeScript reference. */
export type FinishChoice = 'native' | 'js';

export function finishProfile(
  profile: Profile,
  tracks: TrackTable,
  originUs: number,
  choice: FinishChoice = defaultFinish(),
): void {
  profile.slices.compact();
  setOrigin(profile, originUs);
  nameTracks(profile, tracks);
  classifyUncategorized(profile, tracks);
  reindex(profile, choice);
}

/** The addon's pass unless FLAGPROF_PARSER=js asks for the TypeScript reference throughout. */
export function defaultFinish(): FinishChoice {
  return process.env.FLAGPROF_PARSER === 'js' ? 'js' : 'native';
}

/**
 * What is derived from the slices: t = 0 at the earliest event, per-track order, nesting, track kinds and the slice
 * each flow half binds to. Run again whenever slices are added to a finished profile (merging a capture).
 */
export function reindex(profile: Profile, choice: FinishChoice = defaultFinish()): void {
  const native = choice === 'native' ? finishAddon() : undefined;
  if (native) {
    const shift = native.shiftToZero(
      profile.slices.start,
      profile.slices.length,
      profile.flows.ts,
      profile.flows.length,
    );
    if (shift !== 0 && !Number.isNaN(shift)) profile.originNs += BigInt(shift);
  } else {
    rebase(profile);
  }
  if (!native || !orderAndNestNatively(profile, native)) {
    sortByTrack(profile);
    nest(profile);
  }
  classifyTracks(profile, native);
  bindFlows(profile, native);
}

/** The addon's passes (native/addon/slice_order.cc), all or none. */
type FinishAddon = Required<
  Pick<FlagprofAddon, 'orderAndNest' | 'shiftToZero' | 'countByClass' | 'bindFlows'>
>;

let addon: FinishAddon | null | undefined;

/**
 * The addon where it has the finishing passes: the same results as the TypeScript below (the reference, which the
 * tests compare it with), ~10× faster on a first import, where those loops ran before V8 had optimised them.
 */
function finishAddon(): FinishAddon | undefined {
  if (addon === undefined) {
    addon = null;
    try {
      const loaded = loadAddon();
      if (loaded.orderAndNest && loaded.shiftToZero && loaded.countByClass && loaded.bindFlows)
        addon = loaded as FinishAddon;
    } catch {
      // no addon here: the TypeScript passes
    }
  }
  return addon ?? undefined;
}

function orderAndNestNatively(profile: Profile, native: FinishAddon): boolean {
  const { slices, tracks } = profile;
  const n = slices.length;
  const order = new Uint32Array(n);
  const offsets = new Uint32Array(tracks.length + 1);
  const maxDepth = new Uint32Array(tracks.length);
  const ok = native.orderAndNest(
    slices.track,
    slices.start,
    slices.dur,
    n,
    tracks.length,
    order,
    offsets,
    slices.depth,
    slices.parent,
    maxDepth,
  );
  if (!ok) return false;
  for (let t = 0; t < tracks.length; t++) {
    tracks[t].sliceCount = offsets[t + 1] - offsets[t];
    tracks[t].maxDepth = maxDepth[t];
  }
  profile.byTrack = { order, offsets };
  return true;
}

function setOrigin(profile: Profile, originUs: number): void {
  const base = profile.metadata.baseTimeNanoseconds;
  // Since 2024 Kineto writes ts relative to baseTimeNanoseconds; absolute µs (> 1e14, i.e. after 1973) never are.
  const relative = (typeof base === 'bigint' || typeof base === 'number') && Math.abs(originUs) < 1e14;
  profile.originNs = BigInt(originUs) * 1000n + (relative ? BigInt(base as bigint | number) : 0n);
}

function nameTracks(profile: Profile, tracks: TrackTable): void {
  for (const track of profile.tracks) {
    const [pidTok] = tracks.tokens[track.id];
    const info = tracks.processes?.get(pidTok);
    if (info) {
      track.processName = info.name;
      track.processSortIndex = info.sortIndex;
    }
    if (!track.processName) track.processName = /^\d+$/.test(track.pid) ? `Process ${track.pid}` : track.pid;
    if (!track.name) track.name = /^\d+$/.test(track.tid) ? `Thread ${track.tid}` : track.tid;
  }
}

/**
 * Ascend (torch_npu) writes device and CANN events without a category: the process says what they are
 * ("Ascend Hardware" with label NPU: device tasks; "CANN": runtime calls).
 */
function classifyUncategorized(profile: Profile, tracks: TrackTable): void {
  const kindByTrack = profile.tracks.map((track) => {
    const info = tracks.processes?.get(tracks.tokens[track.id][0]);
    const name = (info?.name ?? '').toLowerCase();
    const labels = (info?.labels ?? '').toLowerCase();
    if (/overlap|analysis/.test(name)) return -1;
    if (name === 'cann') return SliceKind.Runtime;
    if (/hardware|device|gpu|npu/.test(name) || /npu|gpu/.test(labels)) return SliceKind.Kernel;
    return -1;
  });
  const { slices, strings } = profile;
  for (let i = 0; i < slices.length; i++) {
    if (slices.cat[i] !== 0 || slices.kind[i] !== SliceKind.Other) continue;
    const kind = kindByTrack[slices.track[i]];
    if (kind < 0) continue;
    if (kind === SliceKind.Kernel) {
      const name = strings.get(slices.name[i]).toLowerCase();
      slices.kind[i] = name.includes('memcpy')
        ? SliceKind.Memcpy
        : name.includes('memset')
          ? SliceKind.Memset
          : kind;
    } else {
      slices.kind[i] = kind;
    }
  }
}

/** Moves t = 0 to the earliest event so relative times stay small and non-negative. */
function rebase(profile: Profile): void {
  const { slices, flows } = profile;
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < slices.length; i++) if (slices.start[i] < min) min = slices.start[i];
  for (let i = 0; i < flows.length; i++) if (flows.ts[i] < min) min = flows.ts[i];
  if (!Number.isFinite(min)) return;
  const shift = Math.floor(min);
  if (shift === 0) return;
  for (let i = 0; i < slices.length; i++) slices.start[i] -= shift;
  for (let i = 0; i < flows.length; i++) flows.ts[i] -= shift;
  profile.originNs += BigInt(shift);
}

function sortByTrack(profile: Profile): void {
  const { slices } = profile;
  const trackCount = profile.tracks.length;
  const offsets = new Uint32Array(trackCount + 1);
  for (let i = 0; i < slices.length; i++) offsets[slices.track[i] + 1]++;
  for (let t = 0; t < trackCount; t++) offsets[t + 1] += offsets[t];
  const fill = offsets.slice(0, trackCount);
  const order = new Uint32Array(slices.length);
  for (let i = 0; i < slices.length; i++) order[fill[slices.track[i]]++] = i;
  const start = slices.start;
  const dur = slices.dur;
  const before = (a: number, b: number) => start[a] - start[b] || dur[b] - dur[a] || a - b;
  for (let t = 0; t < trackCount; t++) {
    const lo = offsets[t];
    const hi = offsets[t + 1];
    let sorted = true;
    for (let k = lo + 1; k < hi; k++) {
      if (before(order[k - 1], order[k]) > 0) {
        sorted = false;
        break;
      }
    }
    if (!sorted) order.subarray(lo, hi).sort(before);
    profile.tracks[t].sliceCount = hi - lo;
  }
  profile.byTrack = { order, offsets };
}

function nest(profile: Profile): void {
  const { slices } = profile;
  const { order, offsets } = profile.byTrack;
  const stack: number[] = [];
  for (let t = 0; t < profile.tracks.length; t++) {
    stack.length = 0;
    let maxDepth = 0;
    for (let k = offsets[t]; k < offsets[t + 1]; k++) {
      const i = order[k];
      const s = slices.start[i];
      while (
        stack.length > 0 &&
        slices.start[stack[stack.length - 1]] + slices.dur[stack[stack.length - 1]] <= s
      ) {
        // A zero-length parent at the same instant still encloses what starts there.
        const top = stack[stack.length - 1];
        if (slices.dur[top] === 0 && slices.start[top] === s && slices.dur[i] === 0) break;
        stack.pop();
      }
      const depth = Math.min(stack.length, 0xffff);
      slices.depth[i] = depth;
      slices.parent[i] = stack.length > 0 ? stack[stack.length - 1] : -1;
      if (depth > maxDepth) maxDepth = depth;
      stack.push(i);
    }
    profile.tracks[t].maxDepth = maxDepth;
  }
}

/** Per slice kind: 1 device (kernels, copies, GPU annotations), 2 CPU, 0 neither (instants, other). */
const CLASS_OF_KIND = (() => {
  const classes = new Uint8Array(256);
  for (let kind = 0; kind < 256; kind++) {
    if (isDeviceKind(kind) || kind === SliceKind.GpuAnnotation) classes[kind] = 1;
    else if (kind !== SliceKind.Instant && kind !== SliceKind.Other) classes[kind] = 2;
  }
  return classes;
})();

function classifyTracks(profile: Profile, native?: FinishAddon): void {
  const device = new Uint32Array(profile.tracks.length);
  const cpu = new Uint32Array(profile.tracks.length);
  const { kind: kinds, track: trackOf, length } = profile.slices;
  if (!native?.countByClass(kinds, trackOf, length, CLASS_OF_KIND, device, cpu, profile.tracks.length)) {
    device.fill(0);
    cpu.fill(0);
    for (let i = 0; i < length; i++) {
      const kind = CLASS_OF_KIND[kinds[i]];
      if (kind === 1) device[trackOf[i]]++;
      else if (kind === 2) cpu[trackOf[i]]++;
    }
  }
  for (const track of profile.tracks) {
    let kind: TrackKind = 'other';
    if (device[track.id] > 0 && device[track.id] >= cpu[track.id]) kind = 'device';
    else if (cpu[track.id] > 0) kind = 'cpu';
    track.kind = kind;
    if (kind === 'device' && /^\d+$/.test(track.tid) && track.name === `Thread ${track.tid}`) {
      track.name = `stream ${track.tid}`;
    }
  }
}

/** Innermost slice on `track` whose interval contains t, or -1. */
export function enclosingSlice(profile: Profile, track: number, t: number): number {
  const { order, offsets } = profile.byTrack;
  const { start, dur, parent } = profile.slices;
  let lo = offsets[track];
  let hi = offsets[track + 1];
  // last k with start[order[k]] <= t
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (start[order[mid]] <= t) lo = mid + 1;
    else hi = mid;
  }
  if (lo === offsets[track]) return -1;
  let i = order[lo - 1];
  while (i >= 0 && start[i] + dur[i] < t) i = parent[i];
  return i;
}

function bindFlows(profile: Profile, native?: FinishAddon): void {
  const { flows, tracks } = profile;
  // 2021 traces give flow halves integer tids while the stream's slices say "stream 7": look those up by name.
  const byText = new Map<string, number>();
  for (const track of tracks)
    if (track.sliceCount > 0) byText.set(`${track.pid}\u0000${track.tid}`, track.id);
  const lookIn = new Int32Array(tracks.length);
  for (const t of tracks) {
    lookIn[t.id] =
      t.sliceCount > 0
        ? t.id
        : (byText.get(`${t.pid}\u0000stream ${t.tid}`) ?? byText.get(`${t.pid}\u0000${t.tid}`) ?? -1);
  }
  const { order, offsets } = profile.byTrack;
  const { start, dur, parent } = profile.slices;
  if (
    native?.bindFlows(
      flows.track,
      flows.ts,
      flows.length,
      lookIn,
      order,
      offsets,
      start,
      dur,
      parent,
      flows.slice,
    )
  )
    return;
  for (let f = 0; f < flows.length; f++) {
    const track = lookIn[flows.track[f]];
    if (track >= 0) flows.slice[f] = enclosingSlice(profile, track, flows.ts[f]);
  }
}
