/**
 * Loads the native addon (native/addon, built by `npm ci` through node-gyp): build/Release first, then
 * prebuilds/<platform>-<arch>. All capture decoding happens in the addon's C++ (the shared tracer); this
 * module only finds it and types what it returns.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { CaptureVendorKey } from '../shared/vendors';

export interface CaptureDiagnostic {
  severity: 'info' | 'warning';
  /** A decoder code (frame-crc, frame-length, layout, dropped, no-end, ...) or the tracer's line id (E1, C8, ...). */
  code: string;
  message: string;
  /** Byte offset in the capture, for problems with the file itself. */
  offset?: number;
  gated: boolean;
  /** Recorded by the agent while capturing (a FLAGOS_TRACE line), rather than found while decoding. */
  fromCapture: boolean;
  realtimeNs?: bigint;
}

export interface CaptureCounts {
  frames: number;
  badFrames: number;
  records: number;
  kernel: number;
  memcpy: number;
  memset: number;
  runtime: number;
  driver: number;
  externalCorrelation: number;
  deviceRecords: number;
  ignored: number;
  noTiming: number;
  implausible: number;
  malformed: number;
  dropped: number;
  /**
   * Records whose 64-bit vendor correlation id (MSPTI, ROCtracer, rocprofiler-sdk) was past 2^32 - 1: folded into
   * 1 .. 2^32 - 1, so every record keeps an id.
   */
  correlationWrapped: number;
  /** Runtime records that gave their launch's correlation id to another record of the launch (MSPTI). */
  runtimeCoalesced: number;
}

/** A decoded capture: one entry per DeviceEvent in each column. */
export interface DecodedCapture {
  formatVersion: number;
  /**
   * Whose activity records the capture holds: a VENDORS key with a capture decoder ('cupti': NVIDIA and
   * CUPTI-compatible, 'mcpti': MetaX, 'mspti': Huawei Ascend, 'roctracer': AMD ROCm, Hygon DCU), or 'unknown'.
   */
  vendor: CaptureVendorKey | 'unknown';
  apiVersion: number;
  pid: number;
  library: string;
  /**
   * The platform row the process named when it was recorded (FLAGOS_ACCELERATOR, PPU's SDK), with what named it;
   * '' when it named none.
   */
  platform: string;
  platformReason: string;
  /** False when the process stopped before closing the capture (a decodable prefix). */
  closed: boolean;
  /** Epoch ns that start/end are relative to: the capture window's start when recorded. */
  baseNs: bigint;
  windowStartNs: bigint | null;
  windowStopNs: bigint | null;
  calibration: { vendorNs: bigint; realtimeNs: bigint }[];
  length: number;
  kind: Uint8Array;
  start: Float64Array;
  end: Float64Array;
  correlation: Uint32Array;
  /** NaN when absent: 0 is a valid torch id. */
  externalId: Float64Array;
  device: Uint32Array;
  stream: Uint32Array;
  thread: Uint32Array;
  process: Uint32Array;
  name: Uint32Array;
  cbid: Uint32Array;
  names: string[];
  /** Each event's metadata as JSON text: bytes[offsets[i], offsets[i + 1]). Only with { args: true }. */
  args?: { bytes: Uint8Array; offsets: Float64Array };
  counts: CaptureCounts;
  devices: {
    id: number;
    numMultiprocessors: number;
    maxWarpsPerMultiprocessor: number;
    computeCapability: string;
  }[];
  diagnostics: CaptureDiagnostic[];
}

/** The addon's Kineto JSON event scanner (native/addon/kineto_scan.h); import/nativeScan.ts drives it. */
export interface KinetoScannerHandle {
  /** The columns to write into; again whenever one of them was replaced. */
  bind(tables: {
    slices: object;
    flows: object;
    argsBytes: Uint8Array;
    argsOffsets: Float64Array;
    notes: Float64Array;
    meta: Float64Array;
  }): void;
  /** Scans events of buf[pos, end); state in and out through io (nativeScan.ts Io). */
  scan(buf: Uint8Array, pos: number, end: number, io: Float64Array): void;
  /**
   * Drops the callbacks and columns it holds (strong references: roots, through which the callbacks kept the whole
   * import alive). Absent from addons built before it.
   */
  release?(): void;
}

export interface KinetoScannerHost {
  instantKind: number;
  otherKind: number;
  /**
   * The string id of JSON string content [start, end) of the buffer being scanned; `text` is that content as a
   * string where it holds no escape (absent: decode the bytes).
   */
  intern(start: number, end: number, text?: string): number;
  track(pidToken: number, tidToken: number): number;
  kind(catId: number): number;
}

export interface FlagprofAddon {
  /** Throws an Error whose message is one line naming the file for a file that is not a readable capture. */
  decodeCapture(file: string, options?: { args?: boolean }): DecodedCapture;
  /** Absent from addons built before the native parse path. */
  KinetoScanner?: new (host: KinetoScannerHost) => KinetoScannerHandle;
  /**
   * finish.ts sortByTrack + nest over the columns, writing order, offsets, depth, parent and per-track maxDepth;
   * false when a slice names a track past trackCount. Absent from addons built before it.
   */
  orderAndNest?(
    track: Uint32Array,
    start: Float64Array,
    dur: Float64Array,
    length: number,
    trackCount: number,
    order: Uint32Array,
    offsets: Uint32Array,
    depth: Uint16Array,
    parent: Int32Array,
    maxDepth: Uint32Array,
  ): boolean;
  /** finish.ts rebase's shift, subtracted from both columns in place (0: none; NaN: no times). */
  shiftToZero?(start: Float64Array, n: number, flowTs: Float64Array, m: number): number;
  /** Per track, the slices of class 1 (device) and 2 (CPU) by classOfKind[kind]; false on an index out of range. */
  countByClass?(
    kind: Uint8Array,
    track: Uint32Array,
    n: number,
    classOfKind: Uint8Array,
    device: Uint32Array,
    cpu: Uint32Array,
    trackCount: number,
  ): boolean;
  /** finish.ts bindFlows over the order orderAndNest made, looking in lookIn[track] (-1: skip the half). */
  bindFlows?(
    flowTrack: Uint32Array,
    flowTs: Float64Array,
    m: number,
    lookIn: Int32Array,
    order: Uint32Array,
    offsets: Uint32Array,
    start: Float64Array,
    dur: Float64Array,
    parent: Int32Array,
    slice: Int32Array,
  ): boolean;
  formatVersion: number;
}

/** The addon could not be loaded; the message lists every place tried. */
export class AddonLoadError extends Error {
  constructor(readonly tried: string[]) {
    super(`the flagprof native addon could not be loaded; tried ${tried.join('; ')}`);
    this.name = 'AddonLoadError';
  }
}

let cached: FlagprofAddon | undefined;

/** Directories that may be the package root: this file lives in extension/import/ (sources) or dist/ (bundle). */
function packageRoots(): string[] {
  const roots: string[] = [];
  let dir = __dirname;
  for (let i = 0; i < 4; i++) {
    if (existsSync(path.join(dir, 'package.json'))) roots.push(dir);
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return roots;
}

export function addonCandidates(): string[] {
  const platform = `${process.platform}-${process.arch}`;
  const candidates: string[] = [];
  for (const root of packageRoots()) {
    candidates.push(path.join(root, 'build', 'Release', 'flagprof.node'));
    candidates.push(path.join(root, 'prebuilds', platform, 'flagprof.node'));
  }
  return candidates;
}

export function loadAddon(): FlagprofAddon {
  if (cached) return cached;
  const tried: string[] = [];
  for (const file of addonCandidates()) {
    if (!existsSync(file)) {
      tried.push(`${file} (not found)`);
      continue;
    }
    try {
      // process.dlopen works the same from the CommonJS bundle and from sources run by the test runner.
      const module = { exports: {} as unknown };
      process.dlopen(module, file);
      cached = module.exports as FlagprofAddon;
      return cached;
    } catch (error) {
      tried.push(`${file} (${String((error as Error).message).split('\n')[0]})`);
    }
  }
  if (tried.length === 0) tried.push(`no package root above ${__dirname}`);
  throw new AddonLoadError(tried);
}
