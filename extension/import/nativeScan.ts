/**
 * The native parse path: the addon's Kineto event scanner (native/addon/kineto_scan.h) reading the regular events
 * of a trace's event array straight into the Profile's columns, in place. The TypeScript parser (kineto.ts) stays
 * the reference and the fallback: the scanner hands back every event it does not take (metadata, B/E, counters,
 * anything the parser warns about or refuses), and the parser reads it, so both paths make the same model; the
 * tests compare them on every real trace.
 *
 * Strings, tracks and category kinds remain the parser's: the scanner asks through the callbacks below on a miss
 * only, in the order the parser would have asked.
 */
import { isOpKind, type Profile, SliceKind } from '../model/profile';
import { loadAddon, type KinetoScannerHandle } from './addon';
import { NO_STACK, type CallStackTable } from './callStack';

/** The in/out block shared with the addon (native/addon/addon.cc KinetoScannerWrap::Io, same order). */
const enum Io {
  AfterElement,
  OriginUs,
  EventCount,
  MaxEvents,
  MaxSlices,
  MaxValue,
  Pos,
  Stop,
  FullMask,
  ArgsNeeded,
  SlicesLength,
  FlowsLength,
  ArgsUsed,
  ArgsCount,
  NotesLength,
  MetaLength,
  Size,
}

/** Why the scanner stopped (kineto_scan.h Stop). */
export const enum ScanStop {
  /** Out of bytes between events. */
  End = 0,
  /** At something that is not an event: the parser goes on from there. */
  Structure = 1,
  /** At an event the parser reads itself. */
  HandBack = 2,
  /** At an event that runs past the bytes given. */
  Incomplete = 3,
}

const FULL = 4;
const SLICES_FULL = 1;
const FLOWS_FULL = 2;
const ARGS_FULL = 4;
const NOTES_FULL = 8;
const META_FULL = 16;
const NOTE_WIDTH = 7;
const META_WIDTH = 5;

/** Which parser reads traces: FLAGPROF_PARSER=js keeps to the TypeScript one (the reference). */
export type ParserChoice = 'native' | 'js';

export function defaultParser(): ParserChoice {
  return process.env.FLAGPROF_PARSER === 'js' ? 'js' : 'native';
}

/** What the scanner needs of the parser: its string interning, tracks and category kinds, on a miss. */
export interface ScanParser {
  internBytes(buf: Uint8Array, start: number, end: number): number;
  /** The id of a string without escapes, as the addon made it. */
  internText(text: string): number;
  trackFor(pidToken: number, tidToken: number): number;
  kindOf(catId: number): number;
  /** A metadata event (ph M): its name id, pid and tid tokens (-1: absent), its args' bytes in buf (-1: none). */
  metadata(
    nameId: number,
    pidToken: number,
    tidToken: number,
    buf: Uint8Array,
    argsStart: number,
    argsEnd: number,
  ): void;
}

export interface ScanLimitsIn {
  maxEvents: number;
  maxSlices: number;
  maxValue: number;
}

/** One import's scanner, its caches, and the columns bound to it. */
export class NativeEventScan {
  private readonly io = new Float64Array(Io.Size);
  private notes = new Float64Array(NOTE_WIDTH * 256);
  private meta = new Float64Array(META_WIDTH * 256);
  private buf: Uint8Array = new Uint8Array(0);
  private boundSlices: unknown;
  private boundFlows: unknown;
  private boundArgs: unknown;
  private boundOffsets: unknown;
  private boundNotes: unknown;
  private boundMeta: unknown;

  /** Time spent in the addon's scanner, for ImportOptions.timings. */
  scanMs = 0;
  /** The position after the last scan and whether it ended after an element. */
  pos = 0;
  afterElement = false;

  private constructor(
    private readonly scanner: KinetoScannerHandle,
    private readonly parser: ScanParser,
    private readonly profile: Profile,
    private readonly callStacks: CallStackTable,
    limits: ScanLimitsIn,
  ) {
    this.io[Io.MaxEvents] = limits.maxEvents;
    this.io[Io.MaxSlices] = limits.maxSlices;
    this.io[Io.MaxValue] = limits.maxValue;
  }

  /** The scanner, or undefined where the addon or its scanner is not there (the parser then reads everything). */
  static create(
    parser: ScanParser,
    profile: Profile,
    callStacks: CallStackTable,
    limits: ScanLimitsIn,
  ): NativeEventScan | undefined {
    let Scanner;
    try {
      Scanner = loadAddon().KinetoScanner;
    } catch {
      return undefined;
    }
    if (!Scanner) return undefined;
    let scan: NativeEventScan | undefined = undefined;
    const scanner = new Scanner({
      instantKind: SliceKind.Instant,
      otherKind: SliceKind.Other,
      intern: (start, end, text) =>
        text === undefined ? parser.internBytes(scan!.buf, start, end) : parser.internText(text),
      track: (pid, tid) => parser.trackFor(pid, tid),
      kind: (cat) => parser.kindOf(cat),
    });
    scan = new NativeEventScan(scanner, parser, profile, callStacks, limits);
    return scan;
  }

  /**
   * Scans the events of buf from pos; afterwards `pos` is where it stopped and `afterElement` the parser's state
   * there. Returns why it stopped; `origin` and the event count go in and out through the profile and the result.
   */
  scan(buf: Uint8Array, pos: number, end: number, afterElement: boolean, originUs: number): ScanStop {
    const io = this.io;
    const { slices, flows, args } = this.profile;
    io[Io.AfterElement] = afterElement ? 1 : 0;
    io[Io.OriginUs] = originUs;
    this.buf = buf;
    let at = pos;
    for (;;) {
      this.bindIfReplaced();
      io[Io.EventCount] = this.profile.eventCount;
      io[Io.SlicesLength] = slices.length;
      io[Io.FlowsLength] = flows.length;
      const { used } = args.buffers();
      io[Io.ArgsUsed] = used;
      io[Io.ArgsCount] = args.length;
      io[Io.NotesLength] = 0;
      io[Io.MetaLength] = 0;
      const started = performance.now();
      this.scanner.scan(buf, at, end, io);
      this.scanMs += performance.now() - started;
      slices.length = io[Io.SlicesLength];
      flows.length = io[Io.FlowsLength];
      args.written(io[Io.ArgsUsed], io[Io.ArgsCount]);
      this.profile.eventCount = io[Io.EventCount];
      if (io[Io.NotesLength] > 0) this.takeNotes(io[Io.NotesLength]);
      if (io[Io.MetaLength] > 0) this.takeMetadata(buf, io[Io.MetaLength]);
      at = io[Io.Pos];
      const stop = io[Io.Stop];
      if (stop !== FULL) {
        this.buf = new Uint8Array(0);
        this.pos = at;
        this.afterElement = io[Io.AfterElement] !== 0;
        return stop as ScanStop;
      }
      const full = io[Io.FullMask];
      if (full & SLICES_FULL) slices.reserve(slices.capacity * 2);
      if (full & FLOWS_FULL) flows.reserve(flows.capacity * 2);
      if (full & ARGS_FULL) args.reserveRoom(Math.max(io[Io.ArgsNeeded], 1 << 16), 1024);
      if (full & NOTES_FULL) this.notes = new Float64Array(this.notes.length * 2);
      if (full & META_FULL) this.meta = new Float64Array(this.meta.length * 2);
    }
  }

  /** The import is over: the addon lets go of its callbacks and columns, so that the profile can be collected. */
  release(): void {
    this.scanner.release?.();
  }

  /** The time origin after the last scan (NaN until the first placed event). */
  get originUs(): number {
    return this.io[Io.OriginUs];
  }

  /** Ops with a "Call stack" or "Call site", noted as the parser notes them (kineto.ts noteCallStack). */
  private takeNotes(length: number): void {
    const v = this.notes;
    for (let i = 0; i < length; i += NOTE_WIDTH) {
      const kind = v[i] as SliceKind;
      const argsIndex = v[i + 1];
      const externalId = v[i + 5];
      if (!isOpKind(kind) || Number.isNaN(externalId) || argsIndex < 0) continue;
      this.callStacks.note(argsIndex, v[i + 2] ? NO_STACK : v[i + 3], v[i + 4], externalId, v[i + 6] === 1);
    }
  }

  private takeMetadata(buf: Uint8Array, length: number): void {
    const v = this.meta;
    for (let i = 0; i < length; i += META_WIDTH)
      this.parser.metadata(v[i], v[i + 1], v[i + 2], buf, v[i + 3], v[i + 4]);
  }

  /** Binds the columns again when any was replaced since (grown, by the scan's Full or by the parser's own pushes). */
  private bindIfReplaced(): void {
    const { slices, flows, args } = this.profile;
    const { bytes, offsets } = args.buffers();
    if (
      this.boundSlices === slices.kind &&
      this.boundFlows === flows.cat &&
      this.boundArgs === bytes &&
      this.boundOffsets === offsets &&
      this.boundNotes === this.notes &&
      this.boundMeta === this.meta
    )
      return;
    this.scanner.bind({
      slices,
      flows,
      argsBytes: bytes,
      argsOffsets: offsets,
      notes: this.notes,
      meta: this.meta,
    });
    this.boundMeta = this.meta;
    this.boundSlices = slices.kind;
    this.boundFlows = flows.cat;
    this.boundArgs = bytes;
    this.boundOffsets = offsets;
    this.boundNotes = this.notes;
  }
}

/** Whether the addon here has the scanner (built by `npm ci`; an older build or none: the parser reads all). */
export function nativeScanAvailable(): boolean {
  try {
    return typeof loadAddon().KinetoScanner === 'function';
  } catch {
    return false;
  }
}
