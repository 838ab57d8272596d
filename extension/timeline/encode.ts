/**
 * Profile + Analysis -> the timeline's columnar payload (extension/protocol.ts). Runs in the extension host, the
 * CLI (`flagprof report`) and benchmarks alike, so nothing here imports 'vscode'.
 */
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Analysis } from '../analysis/types';
import type { Profile, Track } from '../model/profile';
import {
  buildLanes,
  PROTOCOL_VERSION,
  packTimeline,
  type LaneColumns,
  type TimelineColumns,
  type TimelinePayload,
  type TimelineTrack,
} from '../protocol';
import {
  SLICE_COLUMN_NAMES,
  type ColumnArray,
  type SliceColumnName,
  type SliceColumns,
} from '../shared/columns';
import { isDeviceKind, isLaunchKind } from '../shared/kinds';
import { isProfilerFile, profilerFrames, type ProfilerFrames } from './profilerFrames';

export interface EncodeOptions {
  /** Panel title; defaults to the profile's file name. */
  title?: string;
  /** What to re-open after a reload; defaults to profile.path. */
  source?: string;
  /** Leave the args texts out; the webview asks for a slice's when it shows them (header.argsOnRequest). */
  argsOnRequest?: boolean;
}

function numericOrText(a: string, b: string): number {
  const x = Number(a);
  const y = Number(b);
  if (Number.isFinite(x) && Number.isFinite(y)) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
}

const TRACK_KIND_RANK = { cpu: 0, other: 1, device: 2 } as const;

/** Display order: processes by sort index then pid; inside one, CPU threads, then others, then device streams. */
export function orderTracks(tracks: readonly Track[]): Track[] {
  const processRank = new Map<string, { sort: number; pid: string; device: boolean }>();
  for (const track of tracks) {
    const entry = processRank.get(track.pid);
    const device = track.kind === 'device';
    if (!entry) processRank.set(track.pid, { sort: track.processSortIndex, pid: track.pid, device });
    else if (!device) entry.device = false;
  }
  return [...tracks].sort((a, b) => {
    const pa = processRank.get(a.pid)!;
    const pb = processRank.get(b.pid)!;
    if (pa !== pb) {
      // Host processes first, then device processes, each by sort index, then pid.
      if (pa.device !== pb.device) return pa.device ? 1 : -1;
      if (pa.sort !== pb.sort) return pa.sort - pb.sort;
      return numericOrText(pa.pid, pb.pid);
    }
    const ka = TRACK_KIND_RANK[a.kind];
    const kb = TRACK_KIND_RANK[b.kind];
    if (ka !== kb) return ka - kb;
    if (a.threadSortIndex !== b.threadSortIndex) return a.threadSortIndex - b.threadSortIndex;
    return numericOrText(a.tid, b.tid);
  });
}

export function encodeTimeline(
  profile: Profile,
  analysis: Analysis,
  options: EncodeOptions = {},
): TimelinePayload {
  const n = profile.slices.length;
  const ordered = orderTracks(profile.tracks);
  const tracks = ordered.map(timelineTrack);
  const frames = profilerFrames(profile);
  const lanes = encodeLanes(profile, ordered, tracks, frames);
  const { startNs, endNs } = timeSpan(profile);
  // Args stay UTF-8 bytes end to end (the arena already holds the texts back to back): the webview decodes one
  // object when the details panel shows it.
  const raw = profile.args.raw();
  const onRequest = options.argsOnRequest === true;
  const columns: TimelineColumns = {
    ...sliceColumns(profile),
    argsBytes: onRequest ? new Uint8Array(0) : raw.bytes.slice(),
    argsOffset: onRequest ? new Float64Array(0) : raw.offsets.slice(),
    opOf: Int32Array.from(analysis.opOf.subarray(0, n)),
    runtimeOf: Int32Array.from(analysis.runtimeOf.subarray(0, n)),
    site: siteColumn(analysis, n),
    profilerFrames: frames.frames,
    ...lanes,
    ...encodeFlows(profile, analysis),
  };
  return {
    header: {
      version: PROTOCOL_VERSION,
      title: options.title ?? path.basename(profile.path),
      source: options.source ?? profile.path,
      originNs: profile.originNs.toString(),
      startNs,
      endNs,
      sliceCount: n,
      strings: [...profile.strings.all()],
      tracks,
      tables: { ops: analysis.ops, kernels: analysis.kernels, lines: analysis.lines },
      profilerLines: profilerLines(analysis),
      warnings: profile.warnings.map((w) => w.message),
      linking: `${analysis.externalIdTrusted ? 'External id' : 'enclosure'}: ${analysis.trustReason}`,
      ...(onRequest ? { argsOnRequest: true } : {}),
    },
    columns,
  };
}

function timelineTrack(t: Track): TimelineTrack {
  return {
    id: t.id,
    name: t.name,
    processName: t.processName,
    pid: t.pid,
    tid: t.tid,
    kind: t.kind,
    maxDepth: t.maxDepth,
    sliceCount: t.sliceCount,
  };
}

/** A slice's own columns, copied to the slice count (the table's columns have spare capacity). */
function sliceColumns(profile: Profile): SliceColumns {
  const slices = profile.slices;
  const columns = {} as Record<SliceColumnName, ColumnArray>;
  for (const name of SLICE_COLUMN_NAMES) columns[name] = slices[name].slice(0, slices.length);
  return columns as SliceColumns;
}

/**
 * The lanes with the profiler's frames hidden (what the timeline shows first): they are left out, and what they
 * enclose moves up a lane per frame. Sets each track's maxDepth to its deepest lane.
 */
function encodeLanes(
  profile: Profile,
  ordered: readonly Track[],
  tracks: TimelineTrack[],
  frames: ProfilerFrames,
): LaneColumns {
  const { track, start, length: count } = profile.slices;
  const { maxDepth, ...lanes } = buildLanes(ordered, {
    count,
    track,
    start,
    depth: frames.depth,
    skip: frames.mask,
  });
  tracks.forEach((t, rank) => (t.maxDepth = maxDepth[rank]));
  return lanes;
}

/** The lines of the analysis that are in the profiler's own files. */
function profilerLines(analysis: Analysis): number[] {
  const lines: number[] = [];
  analysis.lines.forEach((line, index) => {
    if (isProfilerFile(line.file)) lines.push(index);
  });
  return lines;
}

/**
 * Source lines, from the one line attribution (analysis.lineOf into analysis.lines, what the editor's hovers
 * show): a slice's own line, else its launching op's (device slices and runtime calls).
 */
function siteColumn(analysis: Analysis, n: number): Int32Array {
  const site = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    let own = analysis.lineOf[i] ?? -1;
    if (own < 0) {
      const op = analysis.opOf[i] ?? -1;
      if (op >= 0) own = analysis.lineOf[op] ?? -1;
    }
    site[i] = own;
  }
  return site;
}

/**
 * Flows: the trace's own launch -> device pairs, completed by the runtime links analysis made by correlation id
 * (older traces carry no flow events at all); sorted by the launch's start.
 */
function encodeFlows(profile: Profile, analysis: Analysis): Pick<TimelineColumns, 'flowFrom' | 'flowTo'> {
  const { kind, start, length: n } = profile.slices;
  const flowTarget = new Int32Array(n).fill(-1);
  let flowCount = 0;
  for (const pair of analysis.flows.pairs) {
    if (pair.from >= 0 && pair.to >= 0 && pair.from < n && pair.to < n && flowTarget[pair.to] < 0) {
      flowTarget[pair.to] = pair.from;
      flowCount++;
    }
  }
  for (let i = 0; i < n; i++) {
    const runtime = analysis.runtimeOf[i] ?? -1;
    if (runtime >= 0 && flowTarget[i] < 0 && isDeviceKind(kind[i]) && isLaunchKind(kind[runtime])) {
      flowTarget[i] = runtime;
      flowCount++;
    }
  }
  const flowIndex = new Int32Array(flowCount);
  for (let i = 0, k = 0; i < n; i++) if (flowTarget[i] >= 0) flowIndex[k++] = i;
  flowIndex.sort((a, b) => start[flowTarget[a]] - start[flowTarget[b]] || a - b);
  const flowFrom = new Int32Array(flowCount);
  const flowTo = new Int32Array(flowCount);
  for (let k = 0; k < flowCount; k++) {
    flowTo[k] = flowIndex[k];
    flowFrom[k] = flowTarget[flowIndex[k]];
  }
  return { flowFrom, flowTo };
}

/** Earliest start and latest end over all slices; [0, 1] for an empty profile. */
function timeSpan(profile: Profile): { startNs: number; endNs: number } {
  const { start, dur, length: n } = profile.slices;
  if (n === 0) return { startNs: 0, endNs: 1 };
  let startNs = Infinity;
  let endNs = -Infinity;
  for (let i = 0; i < n; i++) {
    if (start[i] < startNs) startNs = start[i];
    const end = start[i] + dur[i];
    if (end > endNs) endNs = end;
  }
  return { startNs, endNs };
}

/** encodeTimeline + packTimeline: the ArrayBuffer the webview's `init` message carries. */
export function encodeTimelineBuffer(
  profile: Profile,
  analysis: Analysis,
  options?: EncodeOptions,
): ArrayBuffer {
  return packTimeline(encodeTimeline(profile, analysis, options));
}

/**
 * The payload gzip-compressed, as the editor sends it to its webview: the columns compress about 5 to 1 in tens of
 * milliseconds, and carrying them from the extension host to the webview costs more than that per megabyte. The
 * webview tells it by gzip's magic bytes (packTimeline's own magic is different) and inflates it natively.
 */
export function compressTimelineBuffer(packed: ArrayBuffer): ArrayBuffer {
  const z = gzipSync(new Uint8Array(packed), { level: 1 });
  return z.buffer.slice(z.byteOffset, z.byteOffset + z.byteLength) as ArrayBuffer;
}
