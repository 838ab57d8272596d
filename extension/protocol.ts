/**
 * The one channel between the extension host and the timeline webview (and the standalone HTML report, whose
 * page plays the host's part). Messages are discriminated unions; a request carries a requestId and its answer
 * an inReplyTo. The profile itself travels as one packed ArrayBuffer of typed columns (packTimeline /
 * unpackTimeline), so a million slices cost a few memcpys instead of a JSON round trip.
 *
 * This module is imported by webview/ too: it imports only extension/shared/ and the bring-up messages.
 */

import {
  COLUMN_ARRAY,
  columnNames,
  SLICE_COLUMNS,
  type ColumnArray,
  type ColumnsOf,
  type ColumnSpec,
  type ColumnType,
} from './shared/columns';
import type { TrackKind } from './shared/kinds';
import type { KernelStat, LineStat, OpStat } from './shared/stats';

export const PROTOCOL_VERSION = 4;

// ---------------------------------------------------------------------------------------------------------------
// The payload

export type TimelineTrackKind = TrackKind;

export interface TimelineTrack {
  /** Track id as in the Profile (the value stored in the slice `track` column). */
  id: number;
  name: string;
  processName: string;
  pid: string;
  tid: string;
  kind: TimelineTrackKind;
  /** Its deepest lane with the profiler's frames hidden (the payload's lanes). */
  maxDepth: number;
  /** Its slices, the profiler's frames among them. */
  sliceCount: number;
}

/** One series of a counter track: its points are counterTs / counterValue [from, to), in time order. */
export interface TimelineCounterSeries {
  name: string;
  from: number;
  to: number;
  min: number;
  max: number;
  /** When the series first reached its maximum (relative ns). */
  peakNs: number;
  /**
   * Points in the profile. More than to - from when the payload carries the series downsampled (over
   * MAX_COUNTER_POINTS): the minimum, maximum and last value of each of COUNTER_BUCKETS time buckets, so peaks
   * and dips survive.
   */
  points: number;
}

/**
 * A counter's row: a Chrome trace counter (ph "C", a series per args key), or the memory a device's allocator
 * held (torch's `[memory]` events: allocated and reserved after each). Values hold until the next point.
 */
export interface TimelineCounterTrack {
  /** Index in header.counters. */
  id: number;
  name: string;
  /** The process whose group the row is in (a device's memory: the process of that device's streams). */
  pid: string;
  processName: string;
  /** What the values count: bytes (the memory tracks) are shown as kB / MB / GB. */
  unit: 'bytes' | 'count';
  series: TimelineCounterSeries[];
}

/** A series with more points than this is downsampled for the payload. */
export const MAX_COUNTER_POINTS = 100_000;
/** Time buckets of a downsampled series: up to three points each (minimum, maximum, last). */
export const COUNTER_BUCKETS = 32_768;

/**
 * The source line a slice is attributed to: a row of tables.lines, the one line attribution the editor's hovers
 * show too (column 1-based where known; kind absent for the exact line of the expression that called).
 */
export type TimelineSite = Pick<LineStat, 'file' | 'line' | 'function' | 'column' | 'kind'>;

export interface TimelineTables {
  ops: OpStat[];
  kernels: KernelStat[];
  lines: LineStat[];
}

/** Everything but the big columns; JSON inside the packed buffer. */
export interface TimelineHeader {
  version: number;
  /** Shown in the panel title: the trace's file name. */
  title: string;
  /** The trace (or session folder) the profile came from, to re-open it after a reload. */
  source: string;
  /** Absolute time of t = 0 in Unix epoch ns, as decimal text (it exceeds 2^53). */
  originNs: string;
  /** Earliest start and latest end over all slices, relative ns. */
  startNs: number;
  endNs: number;
  sliceCount: number;
  strings: string[];
  /** Tracks in display order: by process (sort index, then name), CPU threads before device streams. */
  tracks: TimelineTrack[];
  /** The `site` column indexes tables.lines. */
  tables: TimelineTables;
  /** Indices into tables.lines of lines in the profiler's own files (hidden with its frames). */
  profilerLines: number[];
  /** Import warnings, one line each. */
  warnings: string[];
  /** Counter rows: the trace's counters and each device's memory (columns counterTs / counterValue). */
  counters: TimelineCounterTrack[];
  /** Whether linking used External ids (and why), for the details panel. */
  linking: string;
  /**
   * The args texts are not in the payload (argsBytes and argsOffset empty, and the args column only 0 where a
   * slice has args, -1 where none): the webview asks the host for a slice's args when it shows them ('args'). A trace's args are most of its bytes and almost never looked at, so
   * the editor leaves them out of the message that opens the timeline; a standalone report keeps them inline.
   */
  argsOnRequest?: boolean;
  /**
   * A partial profile, shown while the rest is read (a run's first part, or the events of one trace read so far):
   * the status line in the user's words, what is shown and what is still to come ("Rank 0 shown · 7 more ranks
   * opening…", "31% of the trace read · the rest opening…"). The whole profile's payload follows and replaces it.
   */
  partial?: string;
  /**
   * When the user asked for this profile (epoch ms on the host's clock: the command, the click, the tab opened) and
   * the host's steps since, so that the first frame is counted from the user's action, not the data's arrival.
   */
  opened?: TimelineOpened;
  /**
   * Shown before its analysis (the editor's first frame): opOf, runtimeOf and site are all -1, there are no flows
   * and the tables are empty; an 'analysis' message brings them (TimelineAnalysis). The status line's words for
   * what is coming.
   */
  linkingPending?: string;
}

export interface TimelineOpened {
  atMs: number;
  /** Reading the trace (import) and linking and attribution (analysis), in ms, where this open did them. */
  readMs?: number;
  analysisMs?: number;
  /** Of readMs: the addon's native parser (absent where the TypeScript parser read the trace). */
  parseMs?: number;
}

/**
 * The columns: a slice's own (shared/columns.ts), then what the analysis and the encoder add, one entry per
 * slice in the Profile's own order (so slice indices are the same on both sides) unless said otherwise.
 * Lanes are (track, depth) rows: `laneOrder` lists slice indices grouped by lane and sorted by start, lane L
 * owning laneOrder[laneOffset[L] .. laneOffset[L+1]).
 */
export const TIMELINE_COLUMNS = {
  ...SLICE_COLUMNS,
  /** The args texts back to back, UTF-8: args index a is argsBytes[argsOffset[a] .. argsOffset[a + 1]). */
  argsBytes: 'u8',
  argsOffset: 'f64',
  /** The CPU op that launched a device slice or runtime call, -1 when none. */
  opOf: 'i32',
  /** The runtime/driver call that launched a device slice, -1 when none. */
  runtimeOf: 'i32',
  /** Index into header.tables.lines, -1 when unknown; device slices inherit their launching op's line. */
  site: 'i32',
  /**
   * Not per slice: the profiler's own python_function frames (the agent, runpy, torch.profiler), ascending. They
   * are in no lane, and every slice below them sits one lane higher per hidden frame above it.
   */
  profilerFrames: 'i32',
  laneOrder: 'i32',
  /** Per lane. */
  laneTrack: 'u32',
  /** Per lane. */
  laneDepth: 'u16',
  /** laneCount + 1 entries. */
  laneOffset: 'u32',
  /** Launch -> device flow pairs, sorted by the start of `flowFrom`. */
  flowFrom: 'i32',
  flowTo: 'i32',
  /** Not per slice: the counter tracks' points (header.counters' series index them), relative ns and value. */
  counterTs: 'f64',
  counterValue: 'f64',
} as const satisfies ColumnSpec;

export type TimelineColumns = ColumnsOf<typeof TIMELINE_COLUMNS>;

export interface TimelinePayload {
  header: TimelineHeader;
  columns: TimelineColumns;
}

// ---------------------------------------------------------------------------------------------------------------
// Lanes

export type LaneColumns = Pick<TimelineColumns, 'laneOrder' | 'laneTrack' | 'laneDepth' | 'laneOffset'>;

/** Per slice: its track id, the depth of the lane it goes in and its start; slices with `skip[i]` set go in none. */
export interface LaneInput {
  count: number;
  track: Uint32Array;
  depth: Uint16Array;
  start: Float64Array;
  skip?: Uint8Array;
  /**
   * The slices in start order within each track (the importer's Profile.byTrack.order): filled in this order, the
   * lanes need no sort. Ignored unless it is a permutation of 0..count-1.
   */
  byStart?: Uint32Array;
}

/** Whether `order` lists each of 0..n-1 exactly once. */
function isPermutation(order: Uint32Array, n: number): boolean {
  if (order.length !== n) return false;
  const seen = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    const i = order[k];
    if (i >= n || seen[i]) return false;
    seen[i] = 1;
  }
  return true;
}

/**
 * Lanes in the order of `tracks`: one per depth from 0 to the deepest slice of the track (one for a track without
 * slices); `maxDepth` is that deepest depth, per track in the same order. Counting sort by lane, then by start
 * inside each lane (slices usually come in time order per track, so most lanes need no sort at all, and none
 * when they are taken in input.byStart's order). The host
 * encodes the lanes with the profiler's frames hidden; the webview builds the ones with every frame from the
 * slices' own depths, when asked to show them.
 */
export function buildLanes(
  tracks: readonly { id: number }[],
  input: LaneInput,
): LaneColumns & { maxDepth: Uint16Array } {
  const { count: n, track, depth, start, skip } = input;
  let trackIds = 1;
  for (const t of tracks) trackIds = Math.max(trackIds, t.id + 1);
  const trackRank = new Int32Array(trackIds).fill(-1);
  tracks.forEach((t, rank) => (trackRank[t.id] = rank));
  const rankOf = (i: number): number =>
    (skip && skip[i]) || track[i] >= trackIds ? -1 : trackRank[track[i]];
  const maxDepth = new Uint16Array(tracks.length);
  for (let i = 0; i < n; i++) {
    const rank = rankOf(i);
    if (rank >= 0 && depth[i] > maxDepth[rank]) maxDepth[rank] = depth[i];
  }
  const laneBase = new Uint32Array(tracks.length + 1);
  for (let rank = 0; rank < tracks.length; rank++) laneBase[rank + 1] = laneBase[rank] + maxDepth[rank] + 1;
  const laneCount = laneBase[tracks.length];
  const laneTrack = new Uint32Array(laneCount);
  const laneDepth = new Uint16Array(laneCount);
  for (let rank = 0; rank < tracks.length; rank++) {
    for (let d = 0; laneBase[rank] + d < laneBase[rank + 1]; d++) {
      laneTrack[laneBase[rank] + d] = tracks[rank].id;
      laneDepth[laneBase[rank] + d] = d;
    }
  }
  const laneOf = new Int32Array(n);
  const laneOffset = new Uint32Array(laneCount + 1);
  for (let i = 0; i < n; i++) {
    const rank = rankOf(i);
    const lane = rank < 0 ? -1 : laneBase[rank] + depth[i];
    laneOf[i] = lane;
    if (lane >= 0) laneOffset[lane + 1]++;
  }
  for (let l = 0; l < laneCount; l++) laneOffset[l + 1] += laneOffset[l];
  const cursor = laneOffset.slice(0, laneCount);
  const laneOrder = new Int32Array(laneOffset[laneCount]);
  const { byStart } = input;
  if (byStart && isPermutation(byStart, n)) {
    for (let k = 0; k < n; k++) {
      const i = byStart[k];
      if (laneOf[i] >= 0) laneOrder[cursor[laneOf[i]]++] = i;
    }
  } else {
    for (let i = 0; i < n; i++) if (laneOf[i] >= 0) laneOrder[cursor[laneOf[i]]++] = i;
  }
  // Finds every lane in order where byStart was given (a linear check); sorts the others.
  sortLanesByStart(laneOrder, laneOffset, start);
  return { laneOrder, laneTrack, laneDepth, laneOffset, maxDepth };
}

function sortLanesByStart(laneOrder: Int32Array, laneOffset: Uint32Array, start: Float64Array): void {
  for (let l = 0; l + 1 < laneOffset.length; l++) {
    const from = laneOffset[l];
    const to = laneOffset[l + 1];
    let sorted = true;
    for (let k = from + 1; k < to; k++) {
      if (start[laneOrder[k]] < start[laneOrder[k - 1]]) {
        sorted = false;
        break;
      }
    }
    if (!sorted) laneOrder.subarray(from, to).sort((a, b) => start[a] - start[b] || a - b);
  }
}

type ColumnName = keyof TimelineColumns;

const COLUMN_NAMES = columnNames(TIMELINE_COLUMNS);

const MAGIC = 0x50474c46; // "FLGP" little-endian
/** The analysis payload's magic ("FLGA"), so that neither payload is read as the other. */
const ANALYSIS_MAGIC = 0x41474c46;

interface PackedHeader<H, N extends string> {
  header: H;
  layout: { name: N; offset: number; length: number }[];
}

/**
 * Columns that travel as the differences between neighbours (i32 columns only). laneOrder: inside a lane the
 * slices mostly come in the order they were read, so the differences are small and compress to a third (owlv2:
 * 322 KB of its 1.2 MB payload, then about 100 KB). Int32 arithmetic wraps alike both ways: every difference of
 * two indices round-trips.
 */
const DELTA_COLUMNS: readonly ColumnName[] = ['laneOrder'];

/**
 * One ArrayBuffer: magic, format version, JSON length, the JSON (header + column layout), then every column at
 * an 8-byte aligned offset, so the receiver views the columns in place without copying (`deltas`: written as
 * differences, which the receiver sums back in place).
 */
function packColumns<H, N extends string>(
  magic: number,
  header: H,
  names: readonly N[],
  columns: Record<N, ColumnArray>,
  deltas: readonly string[] = [],
): ArrayBuffer {
  const layout: PackedHeader<H, N>['layout'] = [];
  let columnBytes = 0;
  for (const name of names) {
    const column = columns[name];
    layout.push({ name, offset: columnBytes, length: column.length });
    columnBytes += (column.byteLength + 7) & ~7;
  }
  const json = new TextEncoder().encode(JSON.stringify({ header, layout } as PackedHeader<H, N>));
  const base = (12 + json.byteLength + 7) & ~7;
  const buffer = new ArrayBuffer(base + columnBytes);
  const view = new DataView(buffer);
  view.setUint32(0, magic, true);
  view.setUint32(4, PROTOCOL_VERSION, true);
  view.setUint32(8, json.byteLength, true);
  new Uint8Array(buffer, 12, json.byteLength).set(json);
  const bytes = new Uint8Array(buffer);
  for (const entry of layout) {
    const column = columns[entry.name];
    if (deltas.includes(entry.name)) {
      const out = new Int32Array(buffer, base + entry.offset, column.length);
      for (let k = column.length - 1; k > 0; k--) out[k] = (column[k] - column[k - 1]) | 0;
      if (column.length > 0) out[0] = column[0];
    } else {
      bytes.set(new Uint8Array(column.buffer, column.byteOffset, column.byteLength), base + entry.offset);
    }
  }
  return buffer;
}

function unpackColumns<H, N extends string>(
  magic: number,
  what: string,
  buffer: ArrayBuffer,
  spec: Readonly<Record<N, ColumnType>>,
  deltas: readonly string[] = [],
): { header: H; columns: Record<N, ColumnArray> } {
  if (buffer.byteLength < 12) throw new Error(`${what} is truncated`);
  const view = new DataView(buffer);
  if (view.getUint32(0, true) !== magic) throw new Error(`${what} has the wrong format`);
  const version = view.getUint32(4, true);
  if (version !== PROTOCOL_VERSION) {
    throw new Error(`${what} is version ${version}, this viewer reads version ${PROTOCOL_VERSION}`);
  }
  const jsonLength = view.getUint32(8, true);
  const packed = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 12, jsonLength))) as PackedHeader<
    H,
    N
  >;
  const base = (12 + jsonLength + 7) & ~7;
  const columns = {} as Record<N, ColumnArray>;
  for (const entry of packed.layout) {
    // Columns this viewer does not know are skipped (and names like 'constructor' are no columns).
    if (!Object.hasOwn(spec, entry.name)) continue;
    const type = spec[entry.name];
    const column = new COLUMN_ARRAY[type](buffer, base + entry.offset, entry.length);
    if (deltas.includes(entry.name))
      for (let k = 1; k < column.length; k++) column[k] = (column[k] + column[k - 1]) | 0;
    columns[entry.name] = column;
  }
  for (const name of Object.keys(spec) as N[]) {
    if (!columns[name]) throw new Error(`${what} lacks the '${name}' column`);
  }
  return { header: packed.header, columns };
}

export function packTimeline(payload: TimelinePayload): ArrayBuffer {
  return packColumns(
    MAGIC,
    payload.header,
    COLUMN_NAMES,
    payload.columns as unknown as Record<ColumnName, ColumnArray>,
    DELTA_COLUMNS,
  );
}

/** The payload packTimeline packed; its delta columns are summed back in place, so a buffer is unpacked once. */
export function unpackTimeline(buffer: ArrayBuffer): TimelinePayload {
  const { header, columns } = unpackColumns<TimelineHeader, ColumnName>(
    MAGIC,
    'timeline data',
    buffer,
    TIMELINE_COLUMNS,
    DELTA_COLUMNS,
  );
  return { header, columns: columns as unknown as TimelineColumns };
}

// ---------------------------------------------------------------------------------------------------------------
// The analysis, sent after the first frame

/**
 * What the analysis adds to a profile shown without it (header.linkingPending): the columns and header fields
 * that linking and attribution fill. The editor draws the slices as soon as they are read, and sends this when
 * the analysis is done; the page puts it in place of the placeholders (-1 columns, empty tables).
 */
export const ANALYSIS_COLUMNS = {
  opOf: 'i32',
  runtimeOf: 'i32',
  site: 'i32',
  flowFrom: 'i32',
  flowTo: 'i32',
} as const satisfies ColumnSpec;

export type AnalysisColumnName = keyof typeof ANALYSIS_COLUMNS;

const ANALYSIS_COLUMN_NAMES = columnNames(ANALYSIS_COLUMNS);

export type TimelineAnalysisHeader = Pick<TimelineHeader, 'tables' | 'profilerLines' | 'linking'> & {
  /** How long the analysis took on the host, ms, for the status line. */
  analysisMs?: number;
};

export interface TimelineAnalysis {
  header: TimelineAnalysisHeader;
  columns: Pick<TimelineColumns, AnalysisColumnName>;
}

export function packAnalysis(analysis: TimelineAnalysis): ArrayBuffer {
  return packColumns(
    ANALYSIS_MAGIC,
    analysis.header,
    ANALYSIS_COLUMN_NAMES,
    analysis.columns as unknown as Record<AnalysisColumnName, ColumnArray>,
  );
}

export function unpackAnalysis(buffer: ArrayBuffer): TimelineAnalysis {
  const { header, columns } = unpackColumns<TimelineAnalysisHeader, AnalysisColumnName>(
    ANALYSIS_MAGIC,
    'the analysis data',
    buffer,
    ANALYSIS_COLUMNS,
  );
  return { header, columns: columns as unknown as TimelineAnalysis['columns'] };
}

/** A payload shown without its analysis, with the analysis put in: the whole profile's payload. */
export function withAnalysis(payload: TimelinePayload, analysis: TimelineAnalysis): TimelinePayload {
  const { analysisMs: _analysisMs, ...fields } = analysis.header;
  const header: TimelineHeader = { ...payload.header, ...fields };
  delete header.linkingPending;
  return { header, columns: { ...payload.columns, ...analysis.columns } };
}

// ---------------------------------------------------------------------------------------------------------------
// Messages

/** What the webview remembers across hide/show and reloads (vscode getState/setState). */
export interface TimelineViewState {
  /** The trace or session folder, so the panel serializer can re-open it after a reload. */
  source: string;
  viewStartNs?: number;
  viewEndNs?: number;
  scrollTop?: number;
  /** Selected slice index, -1 when none. */
  selected?: number;
  tab?: number;
  /** The profiler's own frames shown (they are hidden unless this is true). */
  profilerFrames?: boolean;
  /** Track ids pinned to the top. */
  pinned?: number[];
  /** Every flow in view drawn, not only the selection's. */
  allFlows?: boolean;
}

export type HostToWebview =
  /**
   * The profile: packTimeline's bytes, or those gzip-compressed (the editor's: compressTimelineBuffer; told by
   * gzip's magic). `select` (a slice index) is selected and revealed once drawn.
   */
  /** sentAtMs: the host's clock (epoch ms) when it posted the payload, for the first frame's account. */
  | { type: 'init'; payload: ArrayBuffer; select?: number; sentAtMs?: number }
  /**
   * The analysis of the profile the last init showed without it (header.linkingPending): packAnalysis's bytes,
   * or those gzip-compressed. `select` as for init.
   */
  | { type: 'analysis'; payload: ArrayBuffer; select?: number }
  /** Work in progress before the profile can be shown (importing, analysing). */
  | { type: 'progress'; title: string; message: string }
  /** The profile cannot be shown: one line, naming the file. */
  | { type: 'error'; title: string; message: string }
  | { type: 'select'; slice: number }
  | { type: 'reply'; inReplyTo: number; ok: boolean; error?: string }
  /** A slice's args as their JSON text (header.argsOnRequest), '{}' for none. */
  | { type: 'args'; slice: number; args: string };

export type WebviewToHost =
  | { type: 'ready' }
  /** The first frame of the profile last sent is on screen (the host starts the work that follows it then). */
  | { type: 'drawn' }
  /** Open `file` at 1-based `line` (and 1-based `column`, where known) in the editor. */
  | { type: 'openSource'; requestId: number; file: string; line: number; column?: number }
  /** Show the one-line error of a webview-side failure to the user as well. */
  | { type: 'log'; level: 'info' | 'error'; message: string }
  /** The args of a slice, for the details panel (header.argsOnRequest). */
  | { type: 'args'; slice: number };

export function isWebviewToHost(value: unknown): value is WebviewToHost {
  if (!value || typeof value !== 'object') return false;
  const message = value as { type?: unknown };
  switch (message.type) {
    case 'ready':
    case 'drawn':
      return true;
    case 'openSource': {
      const m = value as { requestId?: unknown; file?: unknown; line?: unknown; column?: unknown };
      return (
        typeof m.requestId === 'number' &&
        typeof m.file === 'string' &&
        typeof m.line === 'number' &&
        (m.column === undefined || typeof m.column === 'number')
      );
    }
    case 'log': {
      const m = value as { level?: unknown; message?: unknown };
      return (m.level === 'info' || m.level === 'error') && typeof m.message === 'string';
    }
    case 'args': {
      const slice = (value as { slice?: unknown }).slice;
      return typeof slice === 'number' && Number.isInteger(slice) && slice >= 0;
    }
    default:
      return false;
  }
}

// The bring-up view's messages live beside the bring-up code; this module stays the one channel.
export * from './bringup/protocol';
