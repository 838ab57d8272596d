/**
 * A profile written back as one Kineto trace, the format Perfetto, TensorBoard's profiler plugin, HTA and Chrome
 * DevTools read: everything it holds — the trace's events, agent-mode device activity merged from capture.fpc,
 * launch flows and each op's call site — in a file that stands alone. Written the way Kineto writes it (ph X
 * slices, device events on pid = device and tid = stream, ac2g flows, M events naming processes and threads,
 * ts in µs from baseTimeNanoseconds) and in slice order, so the product re-imports it slice for slice. The text is
 * streamed in chunks (gzipped when the name ends in .gz) into a temporary file renamed over the target at the end:
 * an export that fails leaves no half file.
 */
import { createWriteStream, statSync } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { UserError, displayPath } from '../import/errors';
import {
  FlowPhase,
  Profile,
  SliceKind,
  isDeviceKind,
  isOpKind,
  parseArgsText,
  type SourceFrame,
} from '../model/profile';
import type { OpenedProfile } from './open';

export interface ExportOptions {
  /** distributedInfo.rank, which HTA requires of every trace: default the trace's own, else 0 (one process). */
  rank?: number;
  /**
   * Top-level metadata the product added on opening (session.json, the capture's facts), not the trace's own:
   * written under "flagprof" instead.
   */
  productKeys?: readonly string[];
}

export interface ExportResult {
  file: string;
  /** Everything in traceEvents: metadata (M) events, slices and flow halves. */
  events: number;
  slices: number;
  deviceEvents: number;
  flowEvents: number;
  /** Flow ids (per category) with both an s and an f half: the arrows a viewer draws. */
  flowPairs: number;
  /** Size of the file written (compressed, for .gz). */
  bytes: number;
}

/** Top-level fields the product sets on a profile it opened, by what was opened. */
const SESSION_KEYS = ['session', 'diagnostics', 'capture', 'captureDiagnostics'];
const CAPTURE_KEYS = ['capture', 'captureDiagnostics'];

/** Exports what openProfile opened: the session's own facts go under "flagprof", not among the trace's fields. */
export function exportOpened(
  opened: OpenedProfile,
  out: string,
  options: ExportOptions = {},
): Promise<ExportResult> {
  const { kind } = opened.source;
  const productKeys = kind === 'session' ? SESSION_KEYS : kind === 'capture' ? CAPTURE_KEYS : [];
  return exportProfile(opened.profile, out, { productKeys, ...options });
}

/** Writes the profile to `out` (.json, or gzipped .json.gz); a bad target is a UserError naming it. */
export async function exportProfile(
  profile: Profile,
  out: string,
  options: ExportOptions = {},
): Promise<ExportResult> {
  const gzip = checkExportTarget(out);
  const writer = new TraceWriter(profile, options);
  const bytes = await writeAtomically(out, writer.chunks(), gzip);
  return { file: out, bytes, ...writer.counts };
}

/**
 * Whether the target is gzipped (by its name); a name that is not a trace's, or a folder, is refused (before any
 * work is done: callers check it first).
 */
export function checkExportTarget(out: string): boolean {
  if (!/\.json(\.gz)?$/i.test(out))
    throw new UserError(`${displayPath(out)}: expected a name ending in .json or .json.gz`);
  if (statSync(out, { throwIfNoEntry: false })?.isDirectory())
    throw new UserError(`${displayPath(out)}: is a folder, not a file to write`);
  return /\.gz$/i.test(out);
}

/** Streams the chunks into a temporary file beside `out`, then renames it; returns the bytes written. */
async function writeAtomically(out: string, chunks: Iterable<Buffer>, gzip: boolean): Promise<number> {
  const temp = path.join(path.dirname(out), `.${path.basename(out)}.${process.pid}.partial`);
  const file = createWriteStream(temp);
  try {
    if (gzip) await pipeline(chunks, createGzip(), file);
    else await pipeline(chunks, file);
    await rename(temp, out);
    return (await stat(out)).size;
  } catch (error) {
    // A failure before the file finished opening still creates it once the open completes: removed after that.
    if (!file.closed) await new Promise<void>((closed) => file.once('close', () => closed()));
    await rm(temp, { force: true });
    // The system's refusals (no such folder, a full disk) are the target's; anything else is a bug, shown as one.
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code !== 'string' || !(error as NodeJS.ErrnoException).syscall) throw error;
    throw new UserError(`${displayPath(out)}: cannot write the trace (${code})`);
  }
}

/** Bytes handed to the output at a time. */
const CHUNK = 1 << 20;

/** The output in chunks of about CHUNK bytes; text is written as UTF-8 and args bytes are copied as they are. */
class Chunks {
  private buffer = Buffer.allocUnsafe(CHUNK * 2);
  private used = 0;

  get full(): boolean {
    return this.used >= CHUNK;
  }

  text(text: string): void {
    this.reserve(text.length * 3);
    this.used += this.buffer.write(text, this.used);
  }

  bytes(source: Uint8Array, start: number, end: number): void {
    this.reserve(end - start);
    this.buffer.set(source.subarray(start, end), this.used);
    this.used += end - start;
  }

  /** What was written since the last take; the stream keeps it, so the next chunk gets a fresh buffer. */
  take(): Buffer {
    const chunk = this.buffer.subarray(0, this.used);
    this.buffer = Buffer.allocUnsafe(CHUNK * 2);
    this.used = 0;
    return chunk;
  }

  private reserve(bytes: number): void {
    if (this.used + bytes <= this.buffer.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.used + bytes));
    this.buffer.copy(next, 0, 0, this.used);
    this.buffer = next;
  }
}

/** A pid or tid as Kineto writes it: a number when the text is one, else the string. */
function jsonId(text: string): string {
  return /^(0|-?[1-9]\d{0,15})$/.test(text) ? text : JSON.stringify(text);
}

/**
 * ns as Kineto's µs text: up to three decimals, more only where the trace had sub-ns digits. Rounded to the
 * picosecond so that float noise (311.00000000000006) never reaches the file.
 */
export function microseconds(ns: number): string {
  let us = Math.floor(ns / 1000);
  let ps = Math.round((ns - us * 1000) * 1000);
  if (ps >= 1_000_000) {
    us++;
    ps -= 1_000_000;
  }
  if (ps === 0) return String(us);
  return `${us}.${String(ps).padStart(6, '0').replace(/0+$/, '')}`;
}

const NS_PER_S = 1_000_000_000n;

/** The tid a device track is written with: Kineto's, the stream number ("stream 7" -> 7). */
const STREAM_TID = /^stream (\d+)$/;

/** The writing of one profile: header, metadata events, slices, flows; counting as it goes. */
class TraceWriter {
  readonly counts = { events: 0, slices: 0, deviceEvents: 0, flowEvents: 0, flowPairs: 0 };
  /** ts are written from a whole second at or before the first event, so they stay exact as doubles. */
  private readonly baseNs: bigint;
  private readonly offsetNs: number;
  /** Per track: its `"pid":…,"tid":…` text. */
  private readonly trackKeys: string[];
  /** Per string id, its JSON text (names and categories repeat by the million). */
  private readonly quoted: (string | undefined)[] = [];
  private readonly siteArgs = new Map<SourceFrame[], string>();
  /** Args with bare (non-JSON) values were read from the trace: such args are written re-encoded. */
  private readonly repairArgs: boolean;
  private separator = '';

  constructor(
    private readonly profile: Profile,
    private readonly options: ExportOptions,
  ) {
    this.baseNs = profile.originNs - (profile.originNs % NS_PER_S);
    this.offsetNs = Number(profile.originNs - this.baseNs);
    this.trackKeys = trackKeys(profile);
    this.repairArgs = profile.warnings.some((w) => w.message.includes('bare non-JSON'));
  }

  *chunks(): Generator<Buffer> {
    const out = new Chunks();
    out.text(`{\n${traceHeader(this.profile, this.baseNs, this.options)},\n"traceEvents": [\n`);
    for (const event of metadataEvents(this.profile, this.trackKeys)) {
      this.event(out, event);
      if (out.full) yield out.take();
    }
    for (let i = 0; i < this.profile.slices.length; i++) {
      this.slice(out, i);
      if (out.full) yield out.take();
    }
    const pairs = new FlowPairs();
    for (let f = 0; f < this.profile.flows.length; f++) {
      this.flow(out, f, pairs);
      if (out.full) yield out.take();
    }
    this.counts.flowPairs = pairs.paired();
    out.text('\n]\n}\n');
    yield out.take();
  }

  private event(out: Chunks, text: string): void {
    out.text(this.separator);
    out.text(text);
    this.separator = ',\n';
    this.counts.events++;
  }

  private quote(id: number): string {
    return (this.quoted[id] ??= JSON.stringify(this.profile.strings.get(id)));
  }

  private ts(relativeNs: number): string {
    return microseconds(relativeNs + this.offsetNs);
  }

  private slice(out: Chunks, i: number): void {
    const { slices } = this.profile;
    const kind = slices.kind[i];
    const instant = kind === SliceKind.Instant;
    const cat = slices.cat[i] === 0 ? '' : `"cat":${this.quote(slices.cat[i])},`;
    const time = instant ? '"s":"t"' : `"dur":${microseconds(slices.dur[i])}`;
    this.event(
      out,
      `{"ph":"${instant ? 'i' : 'X'}",${cat}"name":${this.quote(slices.name[i])},` +
        `${this.trackKeys[slices.track[i]]},"ts":${this.ts(slices.start[i])},${time}`,
    );
    this.args(out, i, kind);
    out.text('}');
    this.counts.slices++;
    if (isDeviceKind(kind)) this.counts.deviceEvents++;
  }

  /** The slice's args as read, with its call site added; ids only the columns hold are written as args. */
  private args(out: Chunks, i: number, kind: SliceKind): void {
    const extra = isOpKind(kind) ? this.siteOf(i) : '';
    const index = this.profile.slices.args[i];
    if (index < 0) {
      const fields = [idArgs(this.profile, i), extra].filter(Boolean).join(',');
      if (fields) out.text(`,"args":{${fields}}`);
      return;
    }
    out.text(',"args":');
    if (this.repairArgs) {
      out.text(withFields(JSON.stringify(parseArgsText(this.profile.args.text(index))), extra));
      return;
    }
    const { bytes, offsets } = this.profile.args.raw();
    const start = offsets[index];
    const end = offsets[index + 1];
    if (!extra) return out.bytes(bytes, start, end);
    const close = lastBrace(bytes, start, end);
    out.bytes(bytes, start, close);
    out.text(isEmptyObject(bytes, start, close) ? `${extra}}` : `,${extra}}`);
  }

  private siteOf(i: number): string {
    const { sites } = this.profile;
    const externalId = this.profile.slices.externalId[i];
    const chain = sites && !Number.isNaN(externalId) ? sites.get(externalId) : undefined;
    if (!chain) return '';
    let text = this.siteArgs.get(chain);
    if (text === undefined) this.siteArgs.set(chain, (text = siteFields(chain)));
    return text;
  }

  private flow(out: Chunks, f: number, pairs: FlowPairs): void {
    const { flows } = this.profile;
    const phase = flows.phase[f];
    const ph = phase === FlowPhase.Start ? 's' : phase === FlowPhase.Finish ? 'f' : 't';
    const cat = this.quote(flows.cat[f]);
    const id = jsonId(this.profile.strings.get(flows.id[f]));
    // bp "e": the finish binds to the slice around it (the kernel), as Kineto writes it.
    const bind = phase === FlowPhase.Finish ? ',"bp":"e"' : '';
    this.event(
      out,
      `{"ph":"${ph}","id":${id},${this.trackKeys[flows.track[f]]},"ts":${this.ts(flows.ts[f])},` +
        `"cat":${cat},"name":${cat}${bind}}`,
    );
    this.counts.flowEvents++;
    pairs.add(flows.cat[f], flows.id[f], phase);
  }
}

/** Flow ids seen per category and phase, to count the pairs written. */
class FlowPairs {
  private readonly starts = new Map<number, Set<number>>();
  private readonly finishes = new Map<number, Set<number>>();

  add(cat: number, id: number, phase: FlowPhase): void {
    if (phase === FlowPhase.Step) return;
    const table = phase === FlowPhase.Start ? this.starts : this.finishes;
    let ids = table.get(cat);
    if (!ids) table.set(cat, (ids = new Set()));
    ids.add(id);
  }

  paired(): number {
    let n = 0;
    for (const [cat, ids] of this.starts) {
      const finishes = this.finishes.get(cat);
      if (finishes) for (const id of ids) if (finishes.has(id)) n++;
    }
    return n;
  }
}

/**
 * Each track's pid and tid as written. A device stream is written as Kineto writes it, tid = the stream number,
 * unless another track with slices already has that pid and tid (a flow-only track may share it: its flows then
 * bind to the stream's slices, as the importer binds them anyway).
 */
function trackKeys(profile: Profile): string[] {
  const byKey = new Map<string, number>();
  const keyOf = (pid: string, tid: string) => `"pid":${jsonId(pid)},"tid":${jsonId(tid)}`;
  for (const track of profile.tracks) {
    const key = keyOf(track.pid, track.tid);
    if (!byKey.has(key) || track.sliceCount > 0) byKey.set(key, track.id);
  }
  return profile.tracks.map((track) => {
    const key = keyOf(track.pid, track.tid);
    const stream = track.kind === 'device' ? STREAM_TID.exec(track.tid) : null;
    if (!stream) return key;
    const streamKey = keyOf(track.pid, stream[1]);
    const holder = byKey.get(streamKey);
    return holder === undefined || profile.tracks[holder].sliceCount === 0 ? streamKey : key;
  });
}

/** process_name / process_sort_index once per process, thread_name / thread_sort_index per track with slices. */
function* metadataEvents(profile: Profile, keys: readonly string[]): Generator<string> {
  const processes = new Set<string>();
  for (const track of profile.tracks) {
    const processKey = `"pid":${jsonId(track.pid)},"tid":0`;
    if (!processes.has(track.pid)) {
      processes.add(track.pid);
      if (track.processName) yield metadataEvent('process_name', processKey, 'name', track.processName);
      if (Number.isFinite(track.processSortIndex))
        yield metadataEvent('process_sort_index', processKey, 'sort_index', track.processSortIndex);
    }
    if (track.sliceCount === 0) continue;
    if (track.name) yield metadataEvent('thread_name', keys[track.id], 'name', track.name);
    if (Number.isFinite(track.threadSortIndex))
      yield metadataEvent('thread_sort_index', keys[track.id], 'sort_index', track.threadSortIndex);
  }
}

function metadataEvent(name: string, key: string, field: string, value: string | number): string {
  return `{"ph":"M","name":"${name}",${key},"args":{"${field}":${JSON.stringify(value)}}}`;
}

/** correlation and External id for a slice with no args of its own (what the columns alone hold). */
function idArgs(profile: Profile, i: number): string {
  const { correlation, externalId } = profile.slices;
  const fields: string[] = [];
  if (!Number.isNaN(correlation[i])) fields.push(`"correlation":${correlation[i]}`);
  if (!Number.isNaN(externalId[i])) fields.push(`"External id":${externalId[i]}`);
  return fields.join(',');
}

/**
 * An op's call site as args: "Call site" (file:line:column of the user's expression), "Call site end"
 * (endLine:endColumn of its span), "Call site function", "Call site kind" where the line is not the exact
 * expression ('function', 'backward') — the importer reads these back whole — and the chain as Kineto's "Call stack"
 * ("file(line): function;…", innermost first), which the product reads back as exact lines. A chain holding a
 * function-level frame gets no Call stack (a def line is not a line that ran); a chain read from the trace's own
 * Call stack is in the args already.
 */
function siteFields(chain: readonly SourceFrame[]): string {
  const inner = chain[0];
  if (!inner || inner.kind === 'trace') return '';
  const at = `${inner.file}:${inner.line}${inner.column === undefined ? '' : `:${inner.column}`}`;
  let fields = `"Call site":${JSON.stringify(at)}`;
  if (inner.endLine !== undefined && inner.endColumn !== undefined)
    fields += `,"Call site end":"${inner.endLine}:${inner.endColumn}"`;
  if (inner.function) fields += `,"Call site function":${JSON.stringify(inner.function)}`;
  if (inner.kind) fields += `,"Call site kind":${JSON.stringify(inner.kind)}`;
  const readable = chain.every(
    (f) => f.kind !== 'function' && !f.file.includes(';') && !f.function.includes(';'),
  );
  if (readable) {
    const stack = chain.map((f) => `${f.file}(${f.line}): ${f.function}`).join(';');
    fields += `,"Call stack":${JSON.stringify(stack)}`;
  }
  return fields;
}

/** An object's JSON text with more fields before its closing brace. */
function withFields(objectText: string, fields: string): string {
  if (!fields) return objectText;
  return objectText === '{}' ? `{${fields}}` : `${objectText.slice(0, -1)},${fields}}`;
}

const CLOSE_BRACE = 0x7d;

/** Index of an args object's closing brace (trailing whitespace before the end skipped). */
function lastBrace(bytes: Uint8Array, start: number, end: number): number {
  let p = end - 1;
  while (p > start && bytes[p] !== CLOSE_BRACE) p--;
  return p;
}

function isEmptyObject(bytes: Uint8Array, start: number, close: number): boolean {
  for (let p = start + 1; p < close; p++) if (bytes[p] > 0x20) return false;
  return true;
}

/** The top-level fields before traceEvents, where HTA reads them: the trace's own, then the product's. */
function traceHeader(profile: Profile, baseNs: bigint, options: ExportOptions): string {
  const md = profile.metadata;
  const own = new Set(options.productKeys ?? []);
  const fields: [string, unknown][] = [['schemaVersion', md.schemaVersion ?? 1]];
  const devices = deviceProperties(profile, own);
  if (devices !== undefined) fields.push(['deviceProperties', devices]);
  fields.push(['distributedInfo', distributedInfo(md.distributedInfo, options.rank)]);
  const product = productFacts(md, own);
  for (const [key, value] of Object.entries(md)) {
    if (own.has(key) || HEADER_KEYS.has(key) || (product && key === 'flagprof')) continue;
    fields.push([key, value]);
  }
  if (product) fields.push(['flagprof', product]);
  fields.push(['displayTimeUnit', typeof md.displayTimeUnit === 'string' ? md.displayTimeUnit : 'ms']);
  const text = fields.map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value, bigintAsText)}`);
  // Epoch ns exceed 2^53: written as the exact digits (a whole second, so a double holds it exactly too).
  text.push(`"baseTimeNanoseconds": ${baseNs}`);
  return text.join(',\n');
}

/** Written by traceHeader itself, whatever the trace had. */
const HEADER_KEYS = new Set([
  'schemaVersion',
  'deviceProperties',
  'distributedInfo',
  'displayTimeUnit',
  'baseTimeNanoseconds',
  'traceEvents',
]);

function bigintAsText(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

function distributedInfo(value: unknown, rank: number | undefined): Record<string, unknown> {
  const info = value && typeof value === 'object' && !Array.isArray(value) ? { ...value } : {};
  if (rank !== undefined) return { ...info, rank };
  return 'rank' in info ? info : { ...info, rank: 0 };
}

/**
 * The trace's deviceProperties, or the capture's devices as Kineto describes them (id, numSms, compute
 * capability); undefined where the trace names its devices under computeProperties (2021) and has no others.
 */
function deviceProperties(profile: Profile, own: ReadonlySet<string>): unknown {
  const md = profile.metadata;
  const listed = md.deviceProperties;
  if (Array.isArray(listed) && listed.length > 0) return listed;
  const capture = own.has('capture') ? (md.capture as { devices?: CaptureDevice[] } | undefined) : undefined;
  if (capture?.devices?.length) return capture.devices.map(kinetoDevice);
  if (listed !== undefined || md.computeProperties === undefined) return listed ?? [];
  return undefined;
}

interface CaptureDevice {
  id: number;
  numMultiprocessors: number;
  maxWarpsPerMultiprocessor: number;
  computeCapability: string;
}

function kinetoDevice(device: CaptureDevice): Record<string, unknown> {
  const [major, minor] = /^(\d+)\.(\d+)$/.exec(device.computeCapability)?.slice(1).map(Number) ?? [];
  return {
    id: device.id,
    numSms: device.numMultiprocessors,
    ...(major === undefined ? {} : { computeMajor: major, computeMinor: minor }),
    maxWarpsPerMultiprocessor: device.maxWarpsPerMultiprocessor,
  };
}

/** What the product knew beyond the trace: session.json and the capture's facts (its own path left out). */
function productFacts(
  md: Record<string, unknown>,
  own: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  const facts: Record<string, unknown> = {};
  if (own.has('session') && md.session !== undefined) facts.session = md.session;
  if (own.has('capture') && md.capture && typeof md.capture === 'object') {
    const { path: _path, ...capture } = md.capture as Record<string, unknown>;
    facts.capture = capture;
  }
  return Object.keys(facts).length > 0 ? facts : undefined;
}
