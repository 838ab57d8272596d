/**
 * Agent-mode captures (.fpc) into the Profile. The addon decodes (native/tracer); this module only places the
 * DeviceEvents: device activity on per-stream device tracks, runtime calls on the thread that made them, one
 * flow per vendor correlation id (runtime call -> device event, both halves or none), the torch External id
 * carried as is (it drives attribution, the correlation id never does), and strict capture-window containment
 * with every event left out counted in profile.warnings.
 */
import { IdIndex } from '../model/idIndex';
import { FlowPhase, Profile } from '../model/profile';
import { ImportError } from './errors';
import { CaptureEventKind, SLICE_KIND_OF_CAPTURE_EVENT } from '../shared/kinds';
import { VENDORS, vendorRow, type KinetoNaming } from '../shared/vendors';
import { loadAddon, type DecodedCapture } from './addon';
import { DEVICE_CATEGORIES } from './categories';
import { reindex } from './finish';

/**
 * Naming only (VENDORS' Kineto naming: the device process, its stream tracks, the runtime category): the events
 * are placed and linked the same way for every vendor. A vendor this build does not know is named as CUPTI's.
 */
function namingOf(vendor: string): KinetoNaming {
  return vendorRow(vendor)?.naming ?? VENDORS.cupti.naming;
}

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

/** What a capture says about itself (vendor, library, counts, window), as JSON can hold it. */
export function captureFacts(capture: DecodedCapture) {
  return {
    vendor: capture.vendor,
    apiVersion: capture.apiVersion,
    library: capture.library,
    ...(capture.platform ? { platform: capture.platform, platformReason: capture.platformReason } : {}),
    closed: capture.closed,
    counts: capture.counts,
    devices: capture.devices,
    // Epoch ns as decimal text: exact, and safe for JSON.stringify (BigInt is not).
    window: {
      startNs: capture.windowStartNs?.toString() ?? null,
      stopNs: capture.windowStopNs?.toString() ?? null,
    },
  };
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
  profile.metadata.capture = { path: capturePath, ...captureFacts(capture), ...result };
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

/**
 * Strict containment in [start(), stop()] (seed 000 §3.2): events in flight at either edge are left out. Which
 * events are in, and how many of each kind are not.
 */
function windowMask(profile: Profile, capture: DecodedCapture) {
  const n = capture.length;
  const lo = capture.windowStartNs === null ? -Infinity : Number(capture.windowStartNs - capture.baseNs);
  const hi = capture.windowStopNs === null ? Infinity : Number(capture.windowStopNs - capture.baseNs);
  if (capture.windowStopNs === null) {
    profile.warnings.push({
      message: `${profile.path}: the capture has no stop() time (the process ended first): its events are kept up to the last one recorded`,
    });
  }
  const inWindow = new Uint8Array(n);
  let outside = 0;
  const outsideByKind = [0, 0, 0, 0, 0];
  for (let i = 0; i < n; i++) {
    if (capture.start[i] >= lo && capture.end[i] <= hi) inWindow[i] = 1;
    else {
      outside++;
      outsideByKind[capture.kind[i]]++;
    }
  }
  if (outside > 0) {
    const [k, c, s, r, d] = outsideByKind;
    profile.warnings.push({
      message: `${profile.path}: ${outside} capture events fell outside the capture window and were left out (kernel=${k} memcpy=${c} memset=${s} runtime=${r} driver=${d})`,
    });
  }
  return { inWindow, outside };
}

/**
 * The profile's tracks for a capture's events: device streams and CPU threads, found by (pid, tid) or added with
 * the vendor's names. Consecutive events mostly share their stream or thread, so the lookup by name runs only
 * when it changes.
 */
class CaptureTracks {
  private readonly byKey = new Map<string, number>();
  private lastDevice = { pid: -1, tid: -1, track: -1 };
  private lastThread = { pid: -1, tid: -1, track: -1 };

  constructor(
    private readonly profile: Profile,
    private readonly naming: KinetoNaming,
  ) {
    for (const track of profile.tracks) this.byKey.set(`${track.pid}\u0000${track.tid}`, track.id);
  }

  device(device: number, stream: number): number {
    const last = this.lastDevice;
    if (device !== last.pid || stream !== last.tid || last.track < 0) {
      const { naming } = this;
      const name = `${naming.stream} ${stream}`;
      this.lastDevice = {
        pid: device,
        tid: stream,
        track: this.find('device', String(device), `stream ${stream}`, name, `${naming.device} ${device}`),
      };
    }
    return this.lastDevice.track;
  }

  thread(process: number, thread: number): number {
    const last = this.lastThread;
    if (process !== last.pid || thread !== last.tid || last.track < 0) {
      this.lastThread = {
        pid: process,
        tid: thread,
        track: this.find('cpu', String(process), String(thread), `Thread ${thread}`, `Process ${process}`),
      };
    }
    return this.lastThread.track;
  }

  private find(kind: 'cpu' | 'device', pid: string, tid: string, name: string, processName: string): number {
    const key = `${pid}\u0000${tid}`;
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    const id = this.profile.tracks.length;
    this.profile.tracks.push({
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
    });
    this.byKey.set(key, id);
    return id;
  }
}

/** Flows keyed on the vendor correlation id; only complete pairs are written, so every arrow renders. */
function pairFlows(profile: Profile, deviceSlices: readonly number[], launchSlice: IdIndex) {
  const { slices, strings, flows } = profile;
  const flowCategory = strings.intern('ac2g');
  let paired = 0;
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
    paired++;
  }
  if (unpairedDevice > 0) {
    profile.warnings.push({
      message: `${profile.path}: ${unpairedDevice} device events have no runtime call in the capture: no flow and no launching op for them`,
    });
  }
  return { paired, unpairedDevice };
}

function placeEvents(profile: Profile, capture: DecodedCapture): MergeResult {
  const { slices, strings } = profile;
  const n = capture.length;
  if (profile.slices.length === 0 && profile.flows.length === 0) profile.originNs = capture.baseNs;
  const shift = Number(capture.baseNs - profile.originNs);
  const { inWindow, outside } = windowMask(profile, capture);
  const naming = namingOf(capture.vendor);
  const tracks = new CaptureTracks(profile, naming);
  // Indexed by EventKind: Kernel, Memcpy, Memset, Runtime, Driver.
  const categories = [...DEVICE_CATEGORIES, naming.runtime, naming.driver].map((c) => strings.intern(c));
  const nameIds = capture.names.map((name) => strings.intern(name));
  // Every event's metadata in one copy (those left out by the window too: a few bytes kept for nothing beats a
  // copy per event).
  const argsBase = capture.args
    ? profile.args.appendBlock(capture.args.bytes, capture.args.offsets, 0, n)
    : -1;

  // Runtime call per correlation id (the launch side of the flow).
  const launchSlice = new IdIndex(n);
  const deviceSlices: number[] = [];
  slices.reserve(slices.length + n);
  for (let i = 0; i < n; i++) {
    if (!inWindow[i]) continue;
    const kind = capture.kind[i];
    const isDevice = kind <= CaptureEventKind.Memset;
    // Correlation 0 is no id (vendors number from 1; a 64-bit id that did not fit is decoded as 0): such an
    // event is neither paired nor linked through a runtime call.
    const vendorCorrelation = capture.correlation[i];
    const slice = slices.push(
      SLICE_KIND_OF_CAPTURE_EVENT[kind],
      isDevice
        ? tracks.device(capture.device[i], capture.stream[i])
        : tracks.thread(capture.process[i], capture.thread[i]),
      capture.start[i] + shift,
      capture.end[i] - capture.start[i],
      nameIds[capture.name[i]],
      categories[kind],
      vendorCorrelation === 0 ? NaN : vendorCorrelation,
      capture.externalId[i],
      argsBase < 0 ? -1 : argsBase + i,
    );
    if (vendorCorrelation === 0) continue;
    if (isDevice) deviceSlices.push(slice);
    else launchSlice.setIfAbsent(vendorCorrelation, slice);
  }
  const { paired, unpairedDevice } = pairFlows(profile, deviceSlices, launchSlice);
  profile.eventCount += n - outside;
  return { added: n - outside, outsideWindow: outside, flows: paired, unpairedDevice };
}
