/**
 * Profile + Analysis -> the timeline's columnar payload (extension/protocol.ts). Runs in the extension host, the
 * CLI (`flagprof report`) and benchmarks alike, so nothing here imports 'vscode'.
 */
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Analysis } from '../analysis/types';
import { deviceName, type MemoryTable, type Profile, type Track } from '../model/profile';
import {
  buildLanes,
  COUNTER_BUCKETS,
  MAX_COUNTER_POINTS,
  PROTOCOL_VERSION,
  packAnalysis,
  packTimeline,
  type LaneColumns,
  type TimelineColumns,
  type TimelineAnalysis,
  type TimelineCounterTrack,
  type TimelineHeader,
  type TimelinePayload,
  type TimelineOpened,
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
  /** A partial profile, shown while the rest is read (header.partial): the status line saying so. */
  partial?: string;
  /** When the user asked for it and the host's steps so far (header.opened). */
  opened?: TimelineOpened;
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

/**
 * The payload; without `analysis`, the profile's slices as read (header.linkingPending): what the editor draws
 * first, the analysis following as encodeAnalysis's payload.
 */
export function encodeTimeline(
  profile: Profile,
  analysis: Analysis | undefined,
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
  const counters = encodeCounters(profile);
  const onRequest = options.argsOnRequest === true;
  const columns: TimelineColumns = {
    ...sliceColumns(profile, onRequest),
    argsBytes: onRequest ? new Uint8Array(0) : raw.bytes.slice(),
    argsOffset: onRequest ? new Float64Array(0) : raw.offsets.slice(),
    ...(analysis ? analysisColumns(profile, analysis) : pendingColumns(n)),
    profilerFrames: frames.frames,
    ...lanes,
    ...counters.columns,
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
      ...(analysis
        ? analysisFields(analysis)
        : { tables: { ops: [], kernels: [], lines: [] }, profilerLines: [], linking: '' }),
      warnings: profile.warnings.map((w) => w.message),
      counters: counters.counters,
      ...(onRequest ? { argsOnRequest: true } : {}),
      ...(options.partial ? { partial: options.partial } : {}),
      ...(options.opened ? { opened: options.opened } : {}),
      ...(analysis ? {} : { linkingPending: LINKING_PENDING }),
    },
    columns,
  };
}

/** The status line's words while the analysis of a profile already drawn is under way. */
export const LINKING_PENDING = 'linking kernels to ops and source lines…';

/** What the analysis adds to the payload, for a profile drawn before it (header.linkingPending). */
export function encodeAnalysis(profile: Profile, analysis: Analysis, analysisMs?: number): TimelineAnalysis {
  return {
    header: { ...analysisFields(analysis), ...(analysisMs !== undefined ? { analysisMs } : {}) },
    columns: analysisColumns(profile, analysis),
  };
}

function analysisFields(analysis: Analysis): Pick<TimelineHeader, 'tables' | 'profilerLines' | 'linking'> {
  return {
    tables: { ops: analysis.ops, kernels: analysis.kernels, lines: analysis.lines },
    profilerLines: profilerLines(analysis),
    linking: `${analysis.externalIdTrusted ? 'External id' : 'enclosure'}: ${analysis.trustReason}`,
  };
}

function analysisColumns(profile: Profile, analysis: Analysis): TimelineAnalysis['columns'] {
  const n = profile.slices.length;
  return {
    opOf: Int32Array.from(analysis.opOf.subarray(0, n)),
    runtimeOf: Int32Array.from(analysis.runtimeOf.subarray(0, n)),
    site: siteColumn(analysis, n),
    ...encodeFlows(profile, analysis),
  };
}

/** The analysis's columns before it: no launching op, runtime call or line for any slice, no flows. */
function pendingColumns(n: number): TimelineAnalysis['columns'] {
  return {
    opOf: new Int32Array(n).fill(-1),
    runtimeOf: new Int32Array(n).fill(-1),
    site: new Int32Array(n).fill(-1),
    flowFrom: new Int32Array(0),
    flowTo: new Int32Array(0),
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
/**
 * The slices' columns. With the args on request the page needs only whether a slice has args (the host looks its
 * own index up): 0 or -1, which compress to nothing where the indices were a fifth of the compressed payload.
 */
function sliceColumns(profile: Profile, argsOnRequest: boolean): SliceColumns {
  const slices = profile.slices;
  const columns = {} as Record<SliceColumnName, ColumnArray>;
  for (const name of SLICE_COLUMN_NAMES) columns[name] = slices[name].slice(0, slices.length);
  if (argsOnRequest) {
    const has = columns.args as Int32Array;
    for (let i = 0; i < has.length; i++) has[i] = has[i] < 0 ? -1 : 0;
  }
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
    byStart: profile.byTrack.order,
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
  analysis: Analysis | undefined,
  options?: EncodeOptions,
): ArrayBuffer {
  return packTimeline(encodeTimeline(profile, analysis, options));
}

/**
 * The payload gzip-compressed, as the editor sends it to its webview: the columns compress about 5 to 1 in tens of
 * milliseconds, and carrying them from the extension host to the webview costs more than that per megabyte. The
 * webview tells it by gzip's magic bytes (packTimeline's own magic is different) and inflates it natively.
 */
/** encodeAnalysis + packAnalysis, compressed: the ArrayBuffer the webview's `analysis` message carries. */
export function encodeAnalysisBuffer(profile: Profile, analysis: Analysis, analysisMs?: number): ArrayBuffer {
  return compressTimelineBuffer(packAnalysis(encodeAnalysis(profile, analysis, analysisMs)));
}

export function compressTimelineBuffer(packed: ArrayBuffer): ArrayBuffer {
  const z = gzipSync(new Uint8Array(packed), { level: 1 });
  return z.buffer.slice(z.byteOffset, z.byteOffset + z.byteLength) as ArrayBuffer;
}

// ---------------------------------------------------------------------------------------------------------------
// Counter tracks

/** One series' points as read, before they go into the payload's columns. */
interface SeriesPoints {
  name: string;
  ts: number[];
  value: number[];
}

interface CounterRow {
  name: string;
  pid: string;
  processName: string;
  unit: TimelineCounterTrack['unit'];
  series: SeriesPoints[];
}

/** The counter rows: each device's memory, then the trace's counters, with their points in two columns. */
function encodeCounters(profile: Profile): {
  counters: TimelineCounterTrack[];
  columns: Pick<TimelineColumns, 'counterTs' | 'counterValue'>;
} {
  const rows = [...memoryRows(profile), ...counterRows(profile)];
  let total = 0;
  const packed = rows.map((row) =>
    row.series.map((s) => {
      const sorted = sortedPoints(s);
      const points = downsampleSeries(sorted.ts, sorted.value);
      total += points.ts.length;
      return { name: s.name, count: sorted.ts.length, all: sorted, points };
    }),
  );
  const counterTs = new Float64Array(total);
  const counterValue = new Float64Array(total);
  let at = 0;
  const counters = rows.map((row, id): TimelineCounterTrack => ({
    id,
    name: row.name,
    pid: row.pid,
    processName: row.processName,
    unit: row.unit,
    series: packed[id].map(({ name, count, all, points }) => {
      counterTs.set(points.ts, at);
      counterValue.set(points.value, at);
      const from = at;
      at += points.ts.length;
      let peak = 0;
      let min = Infinity;
      for (let k = 0; k < all.value.length; k++) {
        if (all.value[k] > all.value[peak]) peak = k;
        if (all.value[k] < min) min = all.value[k];
      }
      return { name, from, to: at, min, max: all.value[peak], peakNs: all.ts[peak], points: count };
    }),
  }));
  return { counters, columns: { counterTs, counterValue } };
}

/** The device in a memory row's name: "CUDA 0", "CPU". */
function deviceLabel(deviceType: number, deviceId: number): string {
  const [type, index] = deviceName(deviceType, deviceId).split(':');
  return index === undefined ? type.toUpperCase() : `${type.toUpperCase()} ${index}`;
}

/**
 * Per device, what its allocator held after each allocation and free: allocated and reserved, from the
 * `[memory]` events. A device's row goes in the process of its streams (Kineto's pid for a device is its index),
 * else in the process that allocated.
 */
function memoryRows(profile: Profile): CounterRow[] {
  const memory = profile.memory;
  if (!memory) return [];
  const { start, track } = profile.slices;
  const byDevice = new Map<number, { type: number; id: number; first: number; rows: number[] }>();
  for (let i = 0; i < memory.length; i++) {
    const key = memory.deviceType[i] * 65536 + memory.deviceId[i];
    const entry = byDevice.get(key);
    if (entry) entry.rows.push(i);
    else byDevice.set(key, { type: memory.deviceType[i], id: memory.deviceId[i], first: i, rows: [i] });
  }
  const deviceTracks = profile.tracks.filter((t) => t.kind === 'device');
  const rows: CounterRow[] = [];
  for (const device of [...byDevice.values()].sort((a, b) => a.type - b.type || a.id - b.id)) {
    const series: SeriesPoints[] = [];
    for (const [name, column] of [
      ['allocated', memory.allocated],
      ['reserved', memory.reserved],
    ] as const) {
      const ts: number[] = [];
      const value: number[] = [];
      for (const i of device.rows) {
        if (Number.isNaN(column[i])) continue;
        ts.push(start[memory.event[i]]);
        value.push(column[i]);
      }
      if (ts.length > 0) series.push({ name, ts, value });
    }
    // 2021 traces write only each event's Bytes: what was allocated since the trace began is their running sum.
    if (series.length === 0) series.push(netAllocated(profile, memory, device.rows));
    const host = profile.tracks[track[memory.event[device.first]]];
    const own =
      device.type !== 0 && device.id >= 0 ? deviceTracks.find((t) => t.pid === String(device.id)) : undefined;
    const place = own ?? host;
    rows.push({
      name: `Memory · ${deviceLabel(device.type, device.id)}`,
      pid: place.pid,
      processName: place.processName,
      unit: 'bytes',
      series,
    });
  }
  return rows;
}

function netAllocated(profile: Profile, memory: MemoryTable, rows: readonly number[]): SeriesPoints {
  const ts: number[] = [];
  const value: number[] = [];
  let held = 0;
  for (const i of rows) {
    held += memory.bytes[i];
    ts.push(profile.slices.start[memory.event[i]]);
    value.push(held);
  }
  return { name: 'allocated since the trace began', ts, value };
}

/** The trace's counters: a row per counter name and track, a series per args key, in the order first seen. */
function counterRows(profile: Profile): CounterRow[] {
  const counters = profile.counters;
  if (!counters) return [];
  const rows = new Map<string, CounterRow & { byName: Map<number, SeriesPoints> }>();
  for (let i = 0; i < counters.length; i++) {
    const track = profile.tracks[counters.track[i]];
    const key = `${counters.track[i]}:${counters.name[i]}`;
    let row = rows.get(key);
    if (!row) {
      row = {
        name: profile.strings.get(counters.name[i]),
        pid: track.pid,
        processName: track.processName,
        unit: 'count',
        series: [],
        byName: new Map(),
      };
      rows.set(key, row);
    }
    let series = row.byName.get(counters.series[i]);
    if (!series) {
      series = { name: profile.strings.get(counters.series[i]), ts: [], value: [] };
      row.byName.set(counters.series[i], series);
      row.series.push(series);
    }
    series.ts.push(counters.timeNs(profile, i));
    series.value.push(counters.value[i]);
  }
  return [...rows.values()].map(({ byName: _, ...row }) => row);
}

/** A series' points in time order (a trace's events need not be; the same time keeps the order read). */
function sortedPoints(points: SeriesPoints): { ts: Float64Array; value: Float64Array } {
  const n = points.ts.length;
  const ts = Float64Array.from(points.ts);
  const value = Float64Array.from(points.value);
  let sorted = true;
  for (let k = 1; k < n && sorted; k++) sorted = ts[k] >= ts[k - 1];
  if (sorted) return { ts, value };
  const order = Array.from({ length: n }, (_, k) => k).sort((a, b) => ts[a] - ts[b] || a - b);
  return { ts: Float64Array.from(order, (k) => ts[k]), value: Float64Array.from(order, (k) => value[k]) };
}

/**
 * A series as the payload carries it: whole up to `maxPoints`; above, per time bucket (`buckets` of them over
 * the series' span, about a pixel each when the whole series fills a screen zoomed in 16 times) its minimum, its
 * maximum and its last point, in time order, so that every peak and dip survives and a step drawn from them ends
 * each bucket at the right value.
 */
export function downsampleSeries(
  ts: Float64Array,
  value: Float64Array,
  maxPoints = MAX_COUNTER_POINTS,
  buckets = COUNTER_BUCKETS,
): { ts: Float64Array; value: Float64Array } {
  const n = ts.length;
  if (n <= maxPoints) return { ts, value };
  const t0 = ts[0];
  const width = Math.max((ts[n - 1] - t0) / buckets, Number.MIN_VALUE);
  const keepTs: number[] = [];
  const keepValue: number[] = [];
  let k = 0;
  while (k < n) {
    const bucket = Math.min(buckets - 1, Math.floor((ts[k] - t0) / width));
    let lo = k;
    let hi = k;
    let last = k;
    for (
      ;
      last + 1 < n && Math.min(buckets - 1, Math.floor((ts[last + 1] - t0) / width)) === bucket;
      last++
    ) {
      if (value[last + 1] < value[lo]) lo = last + 1;
      if (value[last + 1] > value[hi]) hi = last + 1;
    }
    for (const j of [...new Set([lo, hi, last])].sort((a, b) => a - b)) {
      keepTs.push(ts[j]);
      keepValue.push(value[j]);
    }
    k = last + 1;
  }
  return { ts: Float64Array.from(keepTs), value: Float64Array.from(keepValue) };
}
