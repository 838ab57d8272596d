/**
 * What a slice, a track and a captured device event are: the one definition the importers, the analysis, the
 * timeline payload and the webview all read. Depends on nothing: the webview bundles it too.
 */

/**
 * What a slice is, independent of the category names each era and vendor uses
 * (cpu_op / Operator, cuda_runtime / Runtime / privateuse1_runtime, kernel / Kernel, ...). The values travel in
 * the timeline payload's `kind` column.
 */
export const enum SliceKind {
  CpuOp = 0,
  PythonFunction = 1,
  UserAnnotation = 2,
  Runtime = 3,
  Driver = 4,
  Kernel = 5,
  Memcpy = 6,
  Memset = 7,
  GpuAnnotation = 8,
  Sync = 9,
  Instant = 10,
  Other = 11,
}

export const SLICE_KIND_COUNT = 12;

/** Names used in summaries, the CLI's JSON (`counts`) and the timeline's details, indexed by SliceKind. */
export const SLICE_KIND_NAMES: readonly string[] = [
  'cpu_op',
  'python_function',
  'user_annotation',
  'runtime',
  'driver',
  'kernel',
  'memcpy',
  'memset',
  'gpu_annotation',
  'sync',
  'instant',
  'other',
];

export function isDeviceKind(kind: number): boolean {
  return kind === SliceKind.Kernel || kind === SliceKind.Memcpy || kind === SliceKind.Memset;
}

export function isLaunchKind(kind: number): boolean {
  return kind === SliceKind.Runtime || kind === SliceKind.Driver;
}

/** Ops that own device time: the External id numbering covers cpu_op and user_annotation alike. */
export function isOpKind(kind: number): boolean {
  return kind === SliceKind.CpuOp || kind === SliceKind.UserAnnotation;
}

/** A track holds CPU threads' slices, one device stream's, or anything else (counters' and markers' rows). */
export type TrackKind = 'cpu' | 'device' | 'other';

/**
 * The kind of a device event the native tracer records (EventKind of native/tracer/device_tracer.h, the values
 * a capture's kind column and FLAGOS_TRACE's `kind=<K>` carry).
 */
export const enum CaptureEventKind {
  Kernel = 0,
  Memcpy = 1,
  Memset = 2,
  Runtime = 3,
  Driver = 4,
}

/** Names of the capture event kinds, indexed by CaptureEventKind. */
export const CAPTURE_EVENT_KIND_NAMES: readonly string[] = [
  'kernel',
  'memcpy',
  'memset',
  'runtime',
  'driver',
];

/** The slice kind each capture event kind becomes in a profile, indexed by CaptureEventKind. */
export const SLICE_KIND_OF_CAPTURE_EVENT: readonly SliceKind[] = [
  SliceKind.Kernel,
  SliceKind.Memcpy,
  SliceKind.Memset,
  SliceKind.Runtime,
  SliceKind.Driver,
];
