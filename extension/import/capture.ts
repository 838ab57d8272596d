/**
 * Agent-mode captures (.fpc) into the Profile. The addon decodes (native/tracer); this module only places the
 * DeviceEvents: device activity on per-stream device tracks, runtime calls on the thread that made them, one
 * flow per vendor correlation id (runtime call -> device event, both halves or none), the torch External id
 * carried as is (it drives attribution, the correlation id never does), and strict capture-window containment
 * with every event left out counted in profile.warnings.
 */
import { IdIndex } from '../model/idIndex';
import { FlowPhase, Profile, SliceKind, type Track } from '../model/profile';
import { ImportError } from './errors';
import { CaptureEventKind, loadAddon, type DecodedCapture } from './addon';
import { reindex } from './finish';

const SLICE_KIND: readonly SliceKind[] = [
  SliceKind.Kernel,
  SliceKind.Memcpy,
  SliceKind.Memset,
  SliceKind.Runtime,
  SliceKind.Driver,
];
/** The categories Kineto writes for the same device activities (kernel, memcpy, memset) on every vendor. */
const DEVICE_CATEGORY: readonly string[] = ['kernel', 'gpu_memcpy', 'gpu_memset'];

/**
 * How each vendor's own traces name what a capture holds: the device process ("GPU 0"; Ascend traces say
 * "NPU"), its stream tracks, and the runtime category (a PrivateUse1 backend's Kineto plugin writes
 * privateuse1_runtime). Naming only: the events are placed and linked the same way for every vendor.
 */
interface VendorNaming {
  device: string;
  stream: string;
  runtime: string;
  driver: string;
}
const NAMING: Record<string, VendorNaming> = {
  cupti: { device: 'GPU', stream: 'stream', runtime: 'cuda_runtime', driver: 'cuda_driver' },
  mspti: { device: 'NPU', stream: 'Stream', runtime: 'privateuse1_runtime', driver: 'privateuse1_driver' },
  // Kineto's ROCm traces keep the CUDA names: process "GPU N", thread "stream N", category cuda_runtime.
  roctracer: { device: 'GPU', stream: 'stream', runtime: 'cuda_runtime', driver: 'cuda_driver' },
};

export interface MergeResult {
  added: number;
  outsideWindow: number;
  flows: number;
  /** Device events whose runtime call is not in the capture (no flow drawn for them). */
  unpairedDevice: number;
}

/** Decodes a capture, turning a file that is not a capture into an ImportError (one line, names the file). */
export function decodeCaptureFile(file: string, options: { args?: boolean } = {}): DecodedCapture {
  const addon = loadAddon();
  try {
    return addon.decodeCapture(file, options);
  } catch (error) {
    const message = String((error as Error).message ?? error);
    // The addon's messages already start with the file name.
    throw new ImportError(
      file,
      undefined,
      message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message,
    );
  }
}

/** A Profile holding only the capture's device events and runtime calls. */
export function importCapture(file: string): Profile {
  const profile = new Profile(file);
  profile.format = 'flagprof-capture';
  mergeCapture(profile, file);
  return profile;
}

/**
 * Adds the capture's events to a profile imported from the same run's Kineto trace (both clocks are Unix epoch
 * ns), then re-indexes the tracks (order, nesting, flow binding).
 */
export function mergeCapture(profile: Profile, capturePath: string): MergeResult {
  const capture = decodeCaptureFile(capturePath, { args: true });
  const result = placeEvents(profile, capture);
  profile.metadata.capture = {
    path: capturePath,
    vendor: capture.vendor,
    apiVersion: capture.apiVersion,
    library: capture.library,
    closed: capture.closed,
    counts: capture.counts,
    devices: capture.devices,
    // Epoch ns as decimal text: exact, and safe for JSON.stringify (BigInt is not).
    window: {
      startNs: capture.windowStartNs?.toString() ?? null,
      stopNs: capture.windowStopNs?.toString() ?? null,
    },
    ...result,
  };
  for (const d of capture.diagnostics) {
    if (d.fromCapture) continue; // the tracer's own lines: shown by the bring-up view from metadata.captureDiagnostics
    profile.warnings.push({ message: `${capturePath}: ${d.message}`, offset: d.offset });
  }
  profile.metadata.captureDiagnostics = capture.diagnostics
    .filter((d) => d.fromCapture)
    .map((d) => ({ ...d, realtimeNs: d.realtimeNs?.toString() }));
  reindex(profile);
  return result;
}

function placeEvents(profile: Profile, capture: DecodedCapture): MergeResult {
  const { slices, strings, flows } = profile;
  const n = capture.length;
  if (profile.slices.length === 0 && profile.flows.length === 0) profile.originNs = capture.baseNs;
  const shift = Number(capture.baseNs - profile.originNs);

  // Strict containment in [start(), stop()] (seed 000 §3.2): events in flight at either edge are left out.
  const lo = capture.windowStartNs === null ? -Infinity : Number(capture.windowStartNs - capture.baseNs);
  const hi = capture.windowStopNs === null ? Infinity : Number(capture.windowStopNs - capture.baseNs);
  if (capture.windowStopNs === null) {
    profile.warnings.push({
      message: `${profile.path}: the capture has no stop() time (the process ended first): its events are kept up to the last one recorded`,
    });
  }

  const trackByKey = new Map<string, number>();
  for (const track of profile.tracks) trackByKey.set(`${track.pid}\u0000${track.tid}`, track.id);
  const trackFor = (kind: 'cpu' | 'device', pid: string, tid: string, name: string, processName: string) => {
    const key = `${pid}\u0000${tid}`;
    let id = trackByKey.get(key);
    if (id === undefined) {
      id = profile.tracks.length;
      const track: Track = {
        id,
        pid,
        tid,
        kind,
        name,
        processName,
        processSortIndex: kind === 'device' ? 1000 + Number(pid) : 0,
        threadSortIndex: Number(tid.replace(/\D/g, '')) || 0,
        sliceCount: 0,
        maxDepth: 0,
      };
      profile.tracks.push(track);
      trackByKey.set(key, id);
    }
    return id;
  };

  const naming = NAMING[capture.vendor] ?? NAMING.cupti;
  // Indexed by EventKind: Kernel, Memcpy, Memset, Runtime, Driver.
  const categories = [...DEVICE_CATEGORY, naming.runtime, naming.driver].map((c) => strings.intern(c));
  const nameIds = capture.names.map((name) => strings.intern(name));
  const flowCategory = strings.intern('ac2g');
  // Every event's metadata in one copy (those left out by the window too: a few bytes kept for nothing beats a
  // copy per event).
  const argsBase = capture.args
    ? profile.args.appendBlock(capture.args.bytes, capture.args.offsets, 0, n)
    : -1;

  const inWindow = new Uint8Array(n);
  let outsideWindow = 0;
  const outsideByKind = [0, 0, 0, 0, 0];
  for (let i = 0; i < n; i++) {
    if (capture.start[i] >= lo && capture.end[i] <= hi) inWindow[i] = 1;
    else {
      outsideWindow++;
      outsideByKind[capture.kind[i]]++;
    }
  }

  // Runtime call per correlation id (the launch side of the flow).
  const launchSlice = new IdIndex(n);
  const deviceSlices: number[] = [];
  let lastDevice = -1;
  let lastStream = -1;
  let deviceTrack = -1;
  let lastProcess = -1;
  let lastThread = -1;
  let cpuTrack = -1;
  slices.reserve(slices.length + n);
  for (let i = 0; i < n; i++) {
    if (!inWindow[i]) continue;
    const kind = capture.kind[i];
    const isDevice = kind <= CaptureEventKind.Memset;
    // Consecutive events mostly share their stream or thread: the track is looked up (by name) only on a change.
    let track: number;
    if (isDevice) {
      if (capture.device[i] !== lastDevice || capture.stream[i] !== lastStream || deviceTrack < 0) {
        lastDevice = capture.device[i];
        lastStream = capture.stream[i];
        deviceTrack = trackFor(
          'device',
          String(lastDevice),
          `stream ${lastStream}`,
          `${naming.stream} ${lastStream}`,
          `${naming.device} ${lastDevice}`,
        );
      }
      track = deviceTrack;
    } else {
      if (capture.process[i] !== lastProcess || capture.thread[i] !== lastThread || cpuTrack < 0) {
        lastProcess = capture.process[i];
        lastThread = capture.thread[i];
        cpuTrack = trackFor(
          'cpu',
          String(lastProcess),
          String(lastThread),
          `Thread ${lastThread}`,
          `Process ${lastProcess}`,
        );
      }
      track = cpuTrack;
    }
    const start = capture.start[i] + shift;
    const dur = capture.end[i] - capture.start[i];
    const argsIndex = argsBase < 0 ? -1 : argsBase + i;
    // Correlation 0 is no id (vendors number from 1; a 64-bit id that did not fit is decoded as 0): such an
    // event is neither paired nor linked through a runtime call.
    const vendorCorrelation = capture.correlation[i];
    const correlation = vendorCorrelation === 0 ? NaN : vendorCorrelation;
    const slice = slices.push(
      SLICE_KIND[kind],
      track,
      start,
      dur,
      nameIds[capture.name[i]],
      categories[kind],
      correlation,
      capture.externalId[i],
      argsIndex,
    );
    if (vendorCorrelation === 0) continue;
    if (isDevice) deviceSlices.push(slice);
    else launchSlice.setIfAbsent(vendorCorrelation, slice);
  }

  // Flows keyed on the vendor correlation id; only complete pairs are written, so every arrow renders.
  let flowCount = 0;
  let unpairedDevice = 0;
  for (const device of deviceSlices) {
    const corr = slices.correlation[device];
    const launch = launchSlice.get(corr);
    if (launch < 0) {
      unpairedDevice++;
      continue;
    }
    const id = strings.intern(String(corr));
    flows.push(flowCategory, id, FlowPhase.Start, slices.start[launch], slices.track[launch]);
    flows.push(flowCategory, id, FlowPhase.Finish, slices.start[device], slices.track[device]);
    flowCount++;
  }

  if (outsideWindow > 0) {
    const [k, c, s, r, d] = outsideByKind;
    profile.warnings.push({
      message: `${profile.path}: ${outsideWindow} capture events fell outside the capture window and were left out (kernel=${k} memcpy=${c} memset=${s} runtime=${r} driver=${d})`,
    });
  }
  if (unpairedDevice > 0) {
    profile.warnings.push({
      message: `${profile.path}: ${unpairedDevice} device events have no runtime call in the capture: no flow and no launching op for them`,
    });
  }
  profile.eventCount += n - outsideWindow;
  return { added: n - outsideWindow, outsideWindow, flows: flowCount, unpairedDevice };
}
