import {
  columnNames,
  SLICE_COLUMNS,
  type ColumnArray,
  type ColumnsOf,
  type ColumnSpec,
} from '../shared/columns';
import type { SliceKind, TrackKind } from '../shared/kinds';
import type { SourceFrameKind } from '../shared/stats';
import { StringTable } from './strings';

// What a slice and a track are is defined once, with the timeline payload's shapes (the webview reads the kinds).
export {
  isDeviceKind,
  isLaunchKind,
  isOpKind,
  SLICE_KIND_COUNT,
  SLICE_KIND_NAMES,
  SliceKind,
  type TrackKind,
} from '../shared/kinds';
export type { SourceFrameKind } from '../shared/stats';

export interface Track {
  readonly id: number;
  /** The trace's pid and tid, as written (numbers are kept as their decimal text). */
  readonly pid: string;
  readonly tid: string;
  kind: TrackKind;
  name: string;
  processName: string;
  processSortIndex: number;
  threadSortIndex: number;
  /** Number of slices on the track, and the deepest nesting level (set by finishProfile). */
  sliceCount: number;
  maxDepth: number;
}

/** Raw args texts in one growing byte buffer: no JS object or string per event until someone looks. */
export class ArgsArena {
  private bytes = new Uint8Array(1 << 16);
  private used = 0;
  private offsets = new Float64Array(1024);
  private count = 0;
  /** Its buffers are shared memory (useSharedMemory). */
  private shared = false;

  get length(): number {
    return this.count;
  }

  /** Whether its buffers are shared memory: another thread reads them where they are, without a copy. */
  get isShared(): boolean {
    return this.shared;
  }

  /**
   * Keeps the texts in shared memory from now on. A worker reading a trace (timeline/readWorker.ts) hands the
   * partial profile of a slow read to the extension host while it reads on into the same arena: shared, the
   * texts read so far are not copied (they were hundreds of MB at 1 GB).
   */
  useSharedMemory(): void {
    if (this.shared || typeof SharedArrayBuffer !== 'function') return;
    this.shared = true;
    this.bytes = this.moved(this.bytes, this.bytes.length, this.used);
    this.offsets = this.moved(this.offsets, this.offsets.length, this.count + 1);
  }

  /** `length` elements of the arena's kind of memory, the first `keep` of `array` copied in. */
  private moved<T extends Uint8Array | Float64Array>(array: T, length: number, keep: number): T {
    const Ctor = array.constructor as {
      new (length: number): T;
      new (buffer: ArrayBufferLike): T;
      BYTES_PER_ELEMENT: number;
    };
    const next = this.shared
      ? new Ctor(new SharedArrayBuffer(length * Ctor.BYTES_PER_ELEMENT))
      : new Ctor(length);
    next.set(array.subarray(0, keep));
    return next;
  }

  /** Appends bytes [start, end) of source; returns the args index. */
  append(source: Uint8Array, start: number, end: number): number {
    const n = end - start;
    this.reserve(this.used + n, this.count + 2);
    this.bytes.set(source.subarray(start, end), this.used);
    this.offsets[this.count] = this.used;
    this.used += n;
    this.offsets[this.count + 1] = this.used;
    return this.count++;
  }

  /**
   * Appends entries [from, to) of another arena-shaped block (entry i is source[offsets[i], offsets[i + 1])) with
   * one copy; returns the index of the first. Millions of entries from a decoded capture would otherwise cost a
   * view and a copy each.
   */
  appendBlock(source: Uint8Array, sourceOffsets: Float64Array, from: number, to: number): number {
    const first = this.count;
    if (to <= from) return first;
    const begin = sourceOffsets[from];
    const n = sourceOffsets[to] - begin;
    this.reserve(this.used + n, this.count + (to - from) + 1);
    this.bytes.set(source.subarray(begin, begin + n), this.used);
    const shift = this.used - begin;
    for (let i = from; i <= to; i++) this.offsets[this.count + (i - from)] = sourceOffsets[i] + shift;
    this.used += n;
    this.count += to - from;
    return first;
  }

  private reserve(bytes: number, offsets: number): void {
    if (bytes > this.bytes.length) {
      let cap = this.bytes.length * 2;
      while (cap < bytes) cap *= 2;
      this.bytes = this.moved(this.bytes, cap, this.used);
    }
    if (offsets > this.offsets.length) {
      let cap = this.offsets.length * 2;
      while (cap < offsets) cap *= 2;
      this.offsets = this.moved(this.offsets, cap, this.count + 1);
    }
  }

  /**
   * Room for `bytes` more bytes and `entries` more entries, for a writer that fills the buffers in place (the
   * native scanner) and then says what it wrote with written().
   */
  reserveRoom(bytes: number, entries: number): void {
    this.reserve(this.used + bytes, this.count + entries + 1);
  }

  /** The buffers as they are now, capacity included (they are replaced when they grow). */
  buffers(): { bytes: Uint8Array; offsets: Float64Array; used: number } {
    return { bytes: this.bytes, offsets: this.offsets, used: this.used };
  }

  /** After an in-place writer: it wrote up to `used` bytes and `count` entries (offsets included). */
  written(used: number, count: number): void {
    this.used = used;
    this.count = count;
  }

  /** Appends a JSON text (for args that did not come from bytes, e.g. decoded captures). */
  appendText(text: string): number {
    const encoded = new TextEncoder().encode(text);
    return this.append(encoded, 0, encoded.length);
  }

  /** The arena's bytes and offsets as they are (args i is bytes[offsets[i], offsets[i + 1])): no copy, no decode. */
  raw(): { bytes: Uint8Array; offsets: Float64Array } {
    return { bytes: this.bytes.subarray(0, this.used), offsets: this.offsets.subarray(0, this.count + 1) };
  }

  text(index: number): string {
    return textDecoder.decode(this.bytes.subarray(this.offsets[index], this.offsets[index + 1]));
  }

  byteSize(): number {
    return this.bytes.byteLength + this.offsets.byteLength;
  }
}

const textDecoder = new TextDecoder();

/**
 * Parses an args object's text. Older torch_fl builds wrote bare identifiers as values ("key": N/A, seed 000
 * §3.4); those were reported at import, and here they read as strings instead of losing the whole object.
 */
export function parseArgsText(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    const quoted = text.replace(
      /(:\s*)([^\s"{}[\],][^,}\]]*?)(\s*)(?=[,}\]])/g,
      (whole, colon: string, value: string, space: string) =>
        /^-?\d+(\.\d+)?([eE][+-]?\d+)?$|^(true|false|null)$/.test(value)
          ? whole
          : `${colon}${JSON.stringify(value)}${space}`,
    );
    try {
      const parsed: unknown = JSON.parse(quoted);
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
    } catch {
      return { raw: text };
    }
  }
}

type GrowableColumn = Float64Array | Uint32Array | Int32Array | Int16Array | Uint16Array | Uint8Array;

/** Growable typed columns; capacity doubles, so appends are amortised O(1). */
function grow<T extends GrowableColumn>(array: T, capacity: number): T {
  const Ctor = array.constructor as new (n: number) => T;
  const next = new Ctor(capacity);
  next.set(array);
  return next;
}

/** ArrayBuffer.prototype.transfer (Node 21 and later, as VS Code's and code-server's hosts run): frees at once. */
const canRelease = typeof (ArrayBuffer.prototype as { transfer?: unknown }).transfer === 'function';

/**
 * The first `length` values of a column in a column of their own, the outgrown one released at once. In shared
 * memory where the runtime can release: the analysis worker (analysis/offThread.ts) then reads the finished slices
 * where they are, without a copy (200 MB at 1 GB). Only finished columns are shared, and only where the old one
 * is freed at once: a new shared column beside an old one waiting for a full collection peaked at 1.2–2.0 GB for
 * 10 M slices instead of 0.74 (elsewhere the column is copied as before and the worker gets a copy).
 */
function cutTo<T extends GrowableColumn>(array: T, length: number): T {
  if (!canRelease || typeof SharedArrayBuffer !== 'function') return array.slice(0, length) as T;
  const Ctor = array.constructor as { new (buffer: ArrayBufferLike): T; BYTES_PER_ELEMENT: number };
  const next = new Ctor(new SharedArrayBuffer(length * Ctor.BYTES_PER_ELEMENT));
  next.set(array.subarray(0, length));
  release(array);
  return next;
}

/** Frees a column nothing reads any more now rather than at the next full collection. */
function release(array: GrowableColumn): void {
  const buffer = array.buffer as ArrayBuffer & { transfer(length: number): ArrayBuffer };
  if (buffer instanceof SharedArrayBuffer) return;
  try {
    buffer.transfer(0);
  } catch {
    // Not detachable (an addon's external memory): it goes when it is collected.
  }
}

/** The slice table's columns: a slice's own (shared/columns.ts) and the parent link finishProfile sets. */
const SLICE_TABLE_COLUMNS = { ...SLICE_COLUMNS, parent: 'i32' } as const satisfies ColumnSpec;
type SliceTableColumns = ColumnsOf<typeof SLICE_TABLE_COLUMNS>;
const SLICE_TABLE_COLUMN_NAMES = columnNames(SLICE_TABLE_COLUMNS);

/**
 * Slices in columnar typed arrays. Times are nanoseconds relative to Profile.originNs (epoch nanoseconds exceed
 * 2^53, relative ones do not for 104 days). Correlation and External ids use NaN for "absent", so a torch
 * External id of 0 stays distinct from "no External id". The fields are declared one by one (typed, and read
 * in the importers' hot loops); `implements` holds them to the shared column list, which every whole-table
 * operation iterates.
 */
export class SliceTable implements SliceTableColumns {
  length = 0;
  kind = new Uint8Array(1024);
  track = new Uint32Array(1024);
  depth = new Uint16Array(1024);
  start = new Float64Array(1024);
  dur = new Float64Array(1024);
  name = new Uint32Array(1024);
  cat = new Uint32Array(1024);
  correlation = new Float64Array(1024);
  externalId = new Float64Array(1024);
  /** Enclosing slice on the same track (set by finishProfile), -1 at the top. */
  parent = new Int32Array(1024);
  /** Index into Profile.args, -1 when the event had no args. */
  args = new Int32Array(1024);

  get capacity(): number {
    return this.kind.length;
  }

  /** The columns' names, in the order every whole-table operation takes them. */
  static readonly columnNames: readonly (keyof SliceTableColumns)[] = SLICE_TABLE_COLUMN_NAMES;

  /** The columns by name, for operations on every column alike. */
  get columns(): Record<keyof SliceTableColumns, ColumnArray> {
    return this;
  }

  reserve(capacity: number): void {
    if (capacity <= this.capacity) return;
    let next = this.capacity;
    while (next < capacity) next *= 2;
    const columns = this.columns;
    for (const name of SLICE_TABLE_COLUMN_NAMES) columns[name] = grow(columns[name], next);
  }

  push(
    kind: SliceKind,
    track: number,
    start: number,
    dur: number,
    name: number,
    cat: number,
    correlation: number,
    externalId: number,
    args: number,
  ): number {
    const i = this.length;
    if (i === this.capacity) this.reserve(i + 1);
    this.kind[i] = kind;
    this.track[i] = track;
    this.start[i] = start;
    this.dur[i] = dur;
    this.name[i] = name;
    this.cat[i] = cat;
    this.correlation[i] = correlation;
    this.externalId[i] = externalId;
    this.parent[i] = -1;
    this.args[i] = args;
    this.length = i + 1;
    return i;
  }

  /** A copy of the rows so far, each column cut to them. */
  copy(): SliceTable {
    const copy = new SliceTable();
    const n = Math.max(this.length, 1);
    const from = this.columns;
    const to = copy.columns;
    for (const name of SLICE_TABLE_COLUMN_NAMES) to[name] = from[name].slice(0, n);
    copy.length = this.length;
    return copy;
  }

  /** Shrinks the columns to their length once loading is done (doubling leaves up to half unused). */
  compact(): void {
    if (this.length === this.capacity) return;
    const n = Math.max(this.length, 1);
    const columns = this.columns;
    for (const name of SLICE_TABLE_COLUMN_NAMES) columns[name] = cutTo(columns[name], n);
  }

  end(i: number): number {
    return this.start[i] + this.dur[i];
  }

  /** Bytes held by the columns (capacity, not length): for the memory budget. */
  byteSize(): number {
    const columns = this.columns;
    let bytes = 0;
    for (const name of SLICE_TABLE_COLUMN_NAMES) bytes += columns[name].byteLength;
    return bytes;
  }
}

export const enum FlowPhase {
  Start = 0,
  Finish = 1,
  Step = 2,
}

/** Flow halves (ph s / f / t) as written; pairing is by (category, id) in analysis. */
export class FlowTable {
  /** The columns' names (every column is one value per half). */
  static readonly columnNames = ['cat', 'id', 'phase', 'ts', 'track', 'slice'] as const;
  length = 0;
  cat = new Uint32Array(256);
  /** The flow id as an interned string: ids are numbers in Kineto but strings in some vendors' traces. */
  id = new Uint32Array(256);
  phase = new Uint8Array(256);
  ts = new Float64Array(256);
  track = new Uint32Array(256);
  /** The slice the half binds to (set by finishProfile), -1 when none encloses it. */
  slice = new Int32Array(256);

  get capacity(): number {
    return this.cat.length;
  }

  reserve(capacity: number): void {
    if (capacity <= this.cat.length) return;
    let next = this.cat.length;
    while (next < capacity) next *= 2;
    this.cat = grow(this.cat, next);
    this.id = grow(this.id, next);
    this.phase = grow(this.phase, next);
    this.ts = grow(this.ts, next);
    this.track = grow(this.track, next);
    this.slice = grow(this.slice, next);
  }

  /** A copy of the halves so far. */
  copy(): FlowTable {
    const copy = new FlowTable();
    const n = Math.max(this.length, 1);
    copy.cat = this.cat.slice(0, n);
    copy.id = this.id.slice(0, n);
    copy.phase = this.phase.slice(0, n);
    copy.ts = this.ts.slice(0, n);
    copy.track = this.track.slice(0, n);
    copy.slice = this.slice.slice(0, n);
    copy.length = this.length;
    return copy;
  }

  push(cat: number, id: number, phase: FlowPhase, ts: number, track: number): void {
    const i = this.length;
    if (i === this.cat.length) this.reserve(i + 1);
    this.cat[i] = cat;
    this.id[i] = id;
    this.phase[i] = phase;
    this.ts[i] = ts;
    this.track[i] = track;
    this.slice[i] = -1;
    this.length = i + 1;
  }
}

/**
 * Counter samples (Chrome trace ph "C" events) in columns, in the order read: each key of a counter event's args
 * is one series of that counter, each sample one value of one series at one time. A counter is named by the
 * event's name (with its id, when it has one) and placed by its track (pid, and tid when present).
 *
 * Times are relative to `originNs`, the frame they were read in, not to the profile's own origin: a merge that
 * re-bases the slices (reindex) leaves them valid; timeNs() answers a sample's time in the profile's frame.
 */
export class CounterTable {
  length = 0;
  /** The counter's name (interned): the event's name, or "name id" when it has an id. */
  name = new Uint32Array(64);
  /** The series: the args key the value came from (interned). */
  series = new Uint32Array(64);
  track = new Uint32Array(64);
  ts = new Float64Array(64);
  value = new Float64Array(64);
  /** Epoch ns of ts = 0. */
  originNs = 0n;
  /** Values that were not numbers (skipped), and the first such. */
  skipped = 0;
  skippedExample = '';

  push(name: number, series: number, track: number, ts: number, value: number): void {
    const i = this.length;
    if (i === this.name.length) this.resize(i * 2);
    this.name[i] = name;
    this.series[i] = series;
    this.track[i] = track;
    this.ts[i] = ts;
    this.value[i] = value;
    this.length = i + 1;
  }

  /** Sample i's time relative to the profile's origin. */
  timeNs(profile: { originNs: bigint }, i: number): number {
    return this.ts[i] + Number(this.originNs - profile.originNs);
  }

  /** Shrinks the columns to their length once loading is done. */
  compact(): void {
    if (this.length < this.name.length) this.resize(Math.max(this.length, 1));
  }

  byteSize(): number {
    return this.name.length * (4 + 4 + 4 + 8 + 8);
  }

  private resize(capacity: number): void {
    const fit = <T extends Float64Array | Uint32Array>(array: T): T =>
      capacity < array.length ? (array.slice(0, capacity) as T) : grow(array, capacity);
    this.name = fit(this.name);
    this.series = fit(this.series);
    this.track = fit(this.track);
    this.ts = fit(this.ts);
    this.value = fit(this.value);
  }
}

/** Torch's c10::DeviceType numbers, as `[memory]` events write "Device Type", and the names torch prints. */
const DEVICE_TYPE_NAMES: Record<number, string> = {
  0: 'cpu',
  1: 'cuda',
  6: 'hip',
  9: 'xla',
  12: 'xpu',
  13: 'mps',
  15: 'hpu',
  19: 'mtia',
  20: 'privateuseone',
};

/** A device as torch names it: `cpu`, `cuda:0`; an unknown type keeps its number. */
export function deviceName(deviceType: number, deviceId: number): string {
  const type = DEVICE_TYPE_NAMES[deviceType] ?? `device-type-${deviceType}`;
  return deviceId < 0 ? type : `${type}:${deviceId}`;
}

/**
 * Allocations and frees (torch's `[memory]` instant events, profile_memory=True) in columns, in time order. Each
 * sample keeps its instant's slice index rather than a copy of its time: a merge that re-bases the slices'
 * times (reindex) moves the samples with them. Totals and Addr are NaN where the trace has none (2021 traces
 * write only Bytes).
 */
export class MemoryTable {
  length = 0;
  /** The `[memory]` instant slice; the sample's time is slices.start[event]. */
  event = new Int32Array(64);
  /** c10::DeviceType (0 CPU, 1 CUDA, ...) and the device index (-1 for the CPU). */
  deviceType = new Uint8Array(64);
  deviceId = new Int16Array(64);
  /** Bytes allocated (> 0) or freed (< 0). */
  bytes = new Float64Array(64);
  /** The allocator's totals after the event ("Total Allocated", "Total Reserved"). */
  allocated = new Float64Array(64);
  reserved = new Float64Array(64);
  addr = new Float64Array(64);
  /** The innermost op (cpu_op or user_annotation) running on the event's thread, or -1. */
  op = new Int32Array(64);

  push(
    event: number,
    deviceType: number,
    deviceId: number,
    bytes: number,
    allocated: number,
    reserved: number,
    addr: number,
    op: number,
  ): void {
    const i = this.length;
    if (i === this.event.length) this.resize(i * 2);
    this.event[i] = event;
    this.deviceType[i] = deviceType;
    this.deviceId[i] = deviceId;
    this.bytes[i] = bytes;
    this.allocated[i] = allocated;
    this.reserved[i] = reserved;
    this.addr[i] = addr;
    this.op[i] = op;
    this.length = i + 1;
  }

  /** Shrinks the columns to their length once loading is done. */
  compact(): void {
    if (this.length < this.event.length) this.resize(Math.max(this.length, 1));
  }

  byteSize(): number {
    return this.event.length * (4 + 1 + 2 + 8 * 4 + 4);
  }

  private resize(capacity: number): void {
    const fit = <T extends Float64Array | Int32Array | Int16Array | Uint8Array>(array: T): T =>
      capacity < array.length ? (array.slice(0, capacity) as T) : grow(array, capacity);
    this.event = fit(this.event);
    this.deviceType = fit(this.deviceType);
    this.deviceId = fit(this.deviceId);
    this.bytes = fit(this.bytes);
    this.allocated = fit(this.allocated);
    this.reserved = fit(this.reserved);
    this.addr = fit(this.addr);
    this.op = fit(this.op);
  }
}

/** One frame of a user's call site: an absolute (or trace-relative) file path, a 1-based line, the function. */
export interface SourceFrame {
  file: string;
  /** 1-based. */
  line: number;
  function: string;
  /**
   * The expression's span, 1-based columns, from Python's code-position table (co_positions, Python >= 3.11);
   * absent where the interpreter has none. endLine > line for an expression over several lines.
   */
  column?: number;
  endLine?: number;
  endColumn?: number;
  /** Absent: the exact line of the expression that called. */
  kind?: SourceFrameKind;
}

/** A warning met while importing; the import still succeeded. */
export interface ImportWarning {
  message: string;
  /** Byte offset in the (decompressed) input, where known. */
  offset?: number;
}

export type TraceFormat = 'kineto-object' | 'kineto-array' | 'flagprof-capture';

export class Profile {
  readonly strings = new StringTable();
  readonly slices = new SliceTable();
  readonly flows = new FlowTable();
  readonly tracks: Track[] = [];
  /**
   * Args of each event as the raw bytes of its "args" object, decoded only when asked for (argsOf):
   * most args are never looked at, and parsing them all would double import time and memory.
   */
  readonly args = new ArgsArena();
  /** Absolute time of t = 0, in Unix epoch nanoseconds. */
  originNs = 0n;
  format: TraceFormat = 'kineto-object';
  /** Events read from the file, of every phase. */
  eventCount = 0;
  readonly warnings: ImportWarning[] = [];
  /** Small top-level fields (schemaVersion, deviceProperties, distributedInfo, baseTimeNanoseconds, ...). */
  readonly metadata: Record<string, unknown> = {};
  /**
   * Slices grouped by track, each group sorted by start (longer first on ties, so parents precede children):
   * slices of track t are order[offsets[t] .. offsets[t + 1]). Set by the importer's finishing pass.
   */
  byTrack: { order: Uint32Array; offsets: Uint32Array } = {
    order: new Uint32Array(0),
    offsets: new Uint32Array(1),
  };
  /** Exact call-site chains by External id, innermost first (from the capture agent's sites.json). */
  sites: Map<number, SourceFrame[]> | undefined;
  /** Allocations and frees, where the trace recorded them (profile_memory); undefined otherwise. */
  memory: MemoryTable | undefined;
  /** Counter samples (ph "C" events), where the trace has any; undefined otherwise. */
  counters: CounterTable | undefined;

  constructor(readonly path: string) {}

  /**
   * A copy of a profile being read, to finish as a partial one (ImportOptions.onPartial) while the reading goes on:
   * its own strings, slices, flows, tracks, warnings and metadata; the args arena is shared (it only grows, and the
   * copy's slices point at entries already in it). Counters are left out of the copy.
   */
  partialCopy(): Profile {
    const copy = new Profile(this.path);
    const writable = copy as { -readonly [K in 'strings' | 'slices' | 'flows' | 'args']: Profile[K] };
    writable.strings = this.strings.copy();
    writable.slices = this.slices.copy();
    writable.flows = this.flows.copy();
    writable.args = this.args;
    for (const track of this.tracks) copy.tracks.push({ ...track });
    copy.warnings.push(...this.warnings);
    Object.assign(copy.metadata, this.metadata);
    copy.format = this.format;
    copy.eventCount = this.eventCount;
    copy.originNs = this.originNs;
    return copy;
  }

  nameOf(slice: number): string {
    return this.strings.get(this.slices.name[slice]);
  }

  categoryOf(slice: number): string {
    return this.strings.get(this.slices.cat[slice]);
  }

  argsOf(slice: number): Record<string, unknown> {
    const i = this.slices.args[slice];
    if (i < 0) return {};
    return parseArgsText(this.args.text(i));
  }

  /** Absolute epoch nanoseconds of a relative time. */
  absoluteNs(relativeNs: number): bigint {
    return this.originNs + BigInt(Math.round(relativeNs));
  }
}
