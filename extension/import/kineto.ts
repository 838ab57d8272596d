/**
 * The Kineto Chrome-trace importer: streaming and tolerant.
 *
 * The file is never held as one string (V8 caps strings near 512 MB, and real traces exceed it): bytes arrive in
 * chunks (gunzipped on the fly), each event object is parsed straight from the bytes into the Profile's columns,
 * and only the fields the product needs become JS values. Args are kept as raw bytes and decoded on demand.
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { isatty } from 'node:tty';
import { createGunzip } from 'node:zlib';
import { CounterTable, FlowPhase, MemoryTable, Profile, SliceKind, isOpKind } from '../model/profile';
import {
  ByteInterner,
  Ch,
  INCOMPLETE,
  SyntaxProblem,
  decodeJsonString,
  decodeText,
  isJsonLiteral,
  parseTime,
  scanBareToken,
  scanString,
  skipValue,
  skipWhitespace,
  type TimeValue,
} from './bytes';
import { CallStackTable, NO_STACK } from './callStack';
import { defaultParser, NativeEventScan, ScanStop, type ParserChoice } from './nativeScan';
import { classifyCategory } from './categories';
import { formatBytes } from '../shared/format';
import { ImportError, MAX_QUOTED, clip, quote } from './errors';
import { finishProfile, type TrackTable } from './finish';
import {
  HEAP_SHARE,
  describeLimit,
  resolveLimits,
  type ImportLimitOptions,
  type ImportLimits,
} from './limits';

export { ImportError } from './errors';

export interface ImportOptions extends ImportLimitOptions {
  /** Stop with an ImportError once the model would exceed this many slices (memory guard). */
  maxSlices?: number;
  /** How much of a file has been read, 0..1, at most once a percent (files of known size only). */
  onProgress?: (fraction: number) => void;
  /** Aborted: the import stops at its next chunk with an ImportCancelled. */
  signal?: AbortSignal;
  /**
   * 'native' (the default where the addon is built): the addon's scanner reads the regular events and this
   * parser the rest; 'js': this parser reads everything (the reference; FLAGPROF_PARSER=js chooses it too).
   */
  parser?: ParserChoice;
  /**
   * Progressive opening: the events read so far as a finished profile of their own, once, while the import reads
   * on, before half the file is read: once partialSlices slices are in (default 250,000: a first frame quick to
   * encode, send and draw) of a trace projected to hold four times as many, or once partialAfterMs have passed
   * (default 1500) of a reading projected to take partialMinReadMs (default 3000). Projections are from the share
   * read so far.
   */
  onPartial?: (partial: Profile, fraction: number) => void;
  partialAfterMs?: number;
  partialSlices?: number;
  partialMinReadMs?: number;
  /** Filled once the import is done (added to, by several imports): where its time went. */
  timings?: ImportTimings;
  /** The args texts in shared memory (ArgsArena.useSharedMemory): a reader on a worker thread hands them over. */
  sharedArgs?: boolean;
}

export interface ImportTimings {
  /** Which parser read the regular events. */
  parser?: ParserChoice;
  /** In the addon's scanner (0 for the TypeScript parser). */
  nativeScanMs?: number;
  /** Finishing the model after the last byte: tracks, nesting, flows' slices, memory samples. */
  finishMs?: number;
}

/** The user cancelled the import (the editor's Cancel). */
export class ImportCancelled extends ImportError {
  constructor(file: string) {
    super(file, undefined, 'opening it was cancelled');
    this.name = 'ImportCancelled';
  }
}

/** Reports the share of the input read and honours the abort signal, once per chunk. */
class ReadProgress {
  private read = 0;
  private shown = -1;

  /** The share read, 0..1; NaN where the size is not known (a pipe). */
  get fraction(): number {
    return this.size > 0 ? Math.min(1, this.read / this.size) : Number.NaN;
  }
  constructor(
    private readonly name: string,
    private readonly size: number,
    private readonly options: ImportOptions,
  ) {}

  /** Throws ImportCancelled once the user has cancelled. */
  checkCancelled(): void {
    if (this.options.signal?.aborted) throw new ImportCancelled(this.name);
  }

  advance(bytes: number): void {
    this.checkCancelled();
    this.read += bytes;
    if (!this.options.onProgress || this.size <= 0) return;
    const percent = Math.min(100, Math.floor((this.read / this.size) * 100));
    if (percent > this.shown) {
      this.shown = percent;
      this.options.onProgress(percent / 100);
      if (this.options.signal?.aborted) throw new ImportCancelled(this.name);
    }
  }
}

const enum State {
  Start,
  ObjectKey,
  ObjectColon,
  ObjectValue,
  ObjectAfterValue,
  Events,
  EventsAfterElement,
  /** Streaming past a top-level value too large to keep (only its end is looked for). */
  SkipValue,
  End,
}

const EMPTY = new Uint8Array(0);
const GZIP_MAGIC_0 = 0x1f;
const GZIP_MAGIC_1 = 0x8b;
const CHUNK = 1 << 20;
/** Top-level values other than traceEvents are kept in metadata up to this size (others are streamed past). */
const MAX_METADATA_VALUE = 4 << 20;
const SAMPLE_HINT = 'sample the run with a shorter profiling window';

/** How command lines name stdin; importTrace reads it as a stream. */
export const STDIN = '-';

/**
 * Imports a Kineto / Chrome trace (.json or .json.gz) into a Profile. Besides regular files it reads pipes,
 * FIFOs, /dev/stdin, process substitution and `-` (stdin) as streams: gzip is told by the stream's first bytes,
 * never by seeking. Throws ImportError on bad input, and on input past a limit (limits.ts) before memory runs out.
 */
export async function importTrace(file: string, options: ImportOptions = {}): Promise<Profile> {
  const name = file === STDIN ? 'stdin' : file;
  const limits = resolveLimits(name, options);
  const parser = new TraceParser(name, options, limits);
  const window = new ParseWindow(parser, limits);
  // However it ends, the addon's scanner lets go of the parser (its references would keep the profile forever).
  try {
    const input = await openInput(file, name);
    const progress = new ReadProgress(name, input.size, options);
    parser.progress = progress;
    try {
      const handle = input.regular ? input.handle : undefined;
      if (!handle) await readStream(input.stream!, parser, window, progress);
      else if (await startsWithGzip(handle, parser)) {
        parser.presize(await gzipTextSize(handle, input.size));
        const raw = handle.createReadStream({ highWaterMark: CHUNK, autoClose: false });
        try {
          await inflate(raw, parser, window, progress);
        } finally {
          raw.destroy(); // no read of it outlives the handle, whatever stopped the import
        }
      } else {
        // The size is known: refuse at once rather than after reading up to the limit.
        window.checkTotal(input.size);
        parser.presize(input.size);
        // Plain files are read into one reused buffer: no garbage per chunk, so peak memory stays near the
        // model's. Kept inline: moved into a function of its own, this loop raised the peak by a quarter (the
        // columns' outgrown buffers were collected later).
        for (;;) {
          const target = window.space();
          let bytesRead: number;
          try {
            ({ bytesRead } = await handle.read(target.buffer, target.offset, target.length, null));
          } catch (error) {
            throw new ImportError(name, undefined, `cannot read: ${code(error)}`);
          }
          if (bytesRead === 0) break;
          progress.advance(bytesRead);
          window.filled(bytesRead);
        }
      }
    } finally {
      await input.close();
    }
    window.end();
    return parser.finish();
  } finally {
    parser.release();
  }
}

interface Input {
  /** Regular files are read by position; everything else as the stream it is. */
  regular: boolean;
  handle?: FileHandle;
  size: number;
  stream?: AsyncIterable<Buffer> & { destroy(): void };
  close(): Promise<void>;
}

function code(error: unknown): string {
  return String((error as NodeJS.ErrnoException).code ?? (error as Error).message ?? error);
}

/** Opens the input once: a FIFO opened twice would lose its writer, and a pipe cannot be read at a position. */
async function openInput(file: string, name: string): Promise<Input> {
  // /dev/stdin is fd 0 itself: opening it anew fails where stdin is a socket (ENXIO), as under many launchers.
  if (file === STDIN || file === '/dev/stdin') {
    if (isatty(0)) throw new ImportError(name, undefined, 'is a terminal: expected a trace piped in');
    const stdin = process.stdin as Readable & AsyncIterable<Buffer>;
    return { regular: false, size: 0, stream: stdin, close: async () => undefined };
  }
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    throw new ImportError(name, undefined, `cannot open: ${code(error)}`);
  }
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new ImportError(name, undefined, 'is a folder, not a trace file');
    if (stat.isCharacterDevice() && isatty(handle.fd))
      throw new ImportError(name, undefined, 'is a terminal: expected a trace piped in');
    const close = () => handle.close();
    if (stat.isFile()) return { regular: true, handle, size: stat.size, close };
    const stream = handle.createReadStream({ highWaterMark: CHUNK, autoClose: false });
    return { regular: false, handle, size: 0, stream, close };
  } catch (error) {
    await handle.close();
    if (error instanceof ImportError) throw error;
    throw new ImportError(name, undefined, `cannot read: ${code(error)}`);
  }
}

function isGzip(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === GZIP_MAGIC_0 && head[1] === GZIP_MAGIC_1;
}

/** Reads a regular file's first two bytes (by position: the reads after it start at 0 all the same). */
async function startsWithGzip(handle: FileHandle, parser: TraceParser): Promise<boolean> {
  const head = Buffer.alloc(2);
  let headBytes: number;
  try {
    headBytes = (await handle.read(head, 0, 2, 0)).bytesRead;
  } catch (error) {
    throw new ImportError(parser.file, undefined, `cannot read: ${code(error)}`);
  }
  if (headBytes === 0) throw parser.emptyInput();
  return isGzip(head.subarray(0, headBytes));
}

/**
 * A gzip file's text size, for presize: its ISIZE trailer (the last member's size mod 2^32) where that is plausible
 * (from the file's size to 40 times it: traces compress 5 to 15 to 1), else 8 times the file.
 */
async function gzipTextSize(handle: FileHandle, size: number): Promise<number> {
  if (size < 18) return size;
  const trailer = Buffer.alloc(4);
  try {
    await handle.read(trailer, 0, 4, size - 4);
  } catch {
    return size * 8;
  }
  const isize = trailer.readUInt32LE(0);
  return isize >= size && isize <= size * 40 ? isize : size * 8;
}

async function readStream(
  stream: AsyncIterable<Buffer> & { destroy(): void },
  parser: TraceParser,
  window: ParseWindow,
  progress: ReadProgress,
): Promise<void> {
  const chunks = stream[Symbol.asyncIterator]();
  const next = async (): Promise<Buffer | undefined> => {
    try {
      const result = await chunks.next();
      return result.done ? undefined : result.value;
    } catch (error) {
      throw new ImportError(parser.file, undefined, `cannot read: ${code(error)}`);
    }
  };
  try {
    // A pipe may deliver the two magic bytes in separate reads.
    let head: Buffer = Buffer.alloc(0);
    while (head.length < 2) {
      const chunk = await next();
      if (!chunk) break;
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
    }
    if (head.length === 0) throw parser.emptyInput();
    if (isGzip(head)) {
      await inflate(
        (async function* () {
          yield head;
          for (let chunk = await next(); chunk; chunk = await next()) yield chunk;
        })(),
        parser,
        window,
        progress,
      );
      return;
    }
    window.append(head);
    for (let chunk = await next(); chunk; chunk = await next()) {
      progress.advance(chunk.length);
      window.append(chunk);
    }
  } finally {
    stream.destroy();
  }
}

/** Gunzips every member (concatenated gzip is one stream of text), each decompressed byte counted by the window. */
async function inflate(
  source: AsyncIterable<Buffer>,
  parser: TraceParser,
  window: ParseWindow,
  progress: ReadProgress,
): Promise<void> {
  let compressedRead = 0;
  let cancelled: ImportError | undefined;
  const counted = (async function* () {
    for await (const chunk of source) {
      compressedRead += chunk.length;
      try {
        progress.advance(chunk.length);
      } catch (error) {
        // Thrown here it would reach the loop below as a gunzip error: kept, and rethrown as itself.
        cancelled = error as ImportError;
        return;
      }
      yield chunk;
    }
  })();
  const gunzip = createGunzip({ chunkSize: CHUNK });
  pipeline(counted, gunzip, () => undefined); // errors reach the loop below through gunzip
  try {
    for await (const chunk of gunzip) {
      if (cancelled) throw cancelled;
      // Per decompressed chunk too: a compressed megabyte may hold a gigabyte of text.
      progress.checkCancelled();
      window.append(chunk as Buffer);
    }
    if (cancelled) throw cancelled;
  } catch (error) {
    if (cancelled) throw cancelled;
    if (error instanceof ImportError) throw error;
    const what =
      (error as NodeJS.ErrnoException).code === 'Z_BUF_ERROR' ||
      /unexpected end/i.test(String((error as Error).message))
        ? 'truncated gzip stream: expected more compressed data'
        : `corrupt gzip data (${clip(String((error as Error).message))})`;
    throw new ImportError(parser.file, compressedRead, what);
  } finally {
    gunzip.destroy();
  }
}

/**
 * Parses a trace held in memory, fed in chunks of the given size (tests use small chunks to cross every
 * boundary case the streaming reader meets).
 */
export function importTraceBytes(
  file: string,
  bytes: Uint8Array,
  options: ImportOptions & { chunkSize?: number } = {},
): Profile {
  const parser = new TraceParser(file, options, resolveLimits(file, options));
  const step = options.chunkSize ?? bytes.length;
  try {
    for (let at = 0; at < bytes.length; at += step)
      parser.feed(bytes.subarray(at, Math.min(bytes.length, at + step)));
    return parser.finish();
  } finally {
    parser.release();
  }
}

/**
 * One reused input buffer: bytes are appended after the unparsed tail of the previous window, the parser consumes
 * whole events in place, and the tail moves to the front. The buffer only grows when one value outgrows it, and
 * no further than the value limit.
 */
class ParseWindow {
  private buffer = Buffer.allocUnsafe(CHUNK * 2);
  private used = 0;
  /** Bytes of text so far (after decompression): the byte limit's count. */
  private total = 0;
  private readonly maxTotal: number;
  private readonly maxHeld: number;

  constructor(
    private readonly parser: TraceParser,
    limits: ImportLimits,
  ) {
    this.maxTotal = limits.traceBytes.value;
    this.maxHeld = limits.valueBytes.value;
  }

  space(): { buffer: Buffer; offset: number; length: number } {
    if (this.used === this.buffer.length) this.grow(this.buffer.length * 2);
    return { buffer: this.buffer, offset: this.used, length: this.buffer.length - this.used };
  }

  filled(bytes: number): void {
    this.used += bytes;
    this.total += bytes;
    if (this.total > this.maxTotal) this.checkTotal(this.total);
    if (this.used >= CHUNK) this.parse();
  }

  checkTotal(total: number): void {
    if (total > this.maxTotal) throw this.parser.tooMuchText();
  }

  append(chunk: Uint8Array): void {
    if (this.used + chunk.length > this.buffer.length)
      this.grow(Math.max(this.buffer.length * 2, this.used + chunk.length));
    this.buffer.set(chunk, this.used);
    this.filled(chunk.length);
  }

  end(): void {
    this.parse();
    this.parser.checkMemory(true);
    this.parser.tail(this.buffer.subarray(0, this.used));
  }

  private parse(): void {
    const consumed = this.parser.feedWindow(this.buffer, this.used);
    if (consumed > 0) {
      this.buffer.copy(this.buffer, 0, consumed, this.used);
      this.used -= consumed;
    }
    // What is left is one value the parser could not finish: it must fit the value limit.
    if (this.used > this.maxHeld) throw this.parser.valueTooLong();
    this.parser.checkMemory();
    this.parser.offerPartial();
  }

  private grow(capacity: number): void {
    const next = Buffer.allocUnsafe(capacity);
    this.buffer.copy(next, 0, 0, this.used);
    this.buffer = next;
  }
}

interface PendingMetadata {
  ph: number;
  name: string;
  pidTok: number;
  tidTok: number;
  args: Record<string, unknown>;
}

class TraceParser {
  readonly profile: Profile;
  private readonly interner: ByteInterner;
  private buf: Uint8Array = new Uint8Array(0);
  private pos = 0;
  private end = 0;
  /** Absolute offset (in the decompressed text) of buf[0]. */
  private base = 0;
  private state = State.Start;
  private nested = false;
  private currentKey = '';
  private sawEvents = false;
  private retryAt = 0;

  private readonly tracks: TrackTable = { byKey: new Map(), tokens: [] };
  private kindByCat: Int8Array = new Int8Array(64).fill(-1);
  private originUs = Number.NaN;
  private readonly time: TimeValue = { us: 0, fracNs: 0 };
  private readonly metadataEvents: PendingMetadata[] = [];
  /** Per metadata name id, the args each target was last given (noteMetadata). */
  private readonly metadataSeen = new Map<number, Map<number, Buffer>>();
  private readonly beginStacks = new Map<number, number[]>();
  private bareValues = 0;
  /** Names with unescaped quotes inside (torch 2.13's `_cupti_monitor.py(0): "segment"`), read as written. */
  private quotedNames = 0;
  private quotedNameExample = '';
  private reportedBare = 0;
  private readonly maxSlices: number;
  private readonly maxEvents: number;
  private readonly maxValue: number;
  private readonly rssAtStart = process.memoryUsage.rss();
  /** Calls of checkMemory, which reads the resident size at every eighth and the heap's figures at every 64th. */
  private memoryChecks = 0;
  /** Text read through feed() (in-memory imports), for the byte limit. */
  private fed = 0;
  /** Events dropped because their "ts" was present but not a number, and the first such value. */
  private badTs = 0;
  private badTsExample = '';
  /** Events (other than metadata) without a "ts" at all: dropped too. */
  private missingTs = 0;
  /** Events whose "dur" was present but not a number (read as 0), and the first such value. */
  private badDur = 0;
  private badDurExample = '';
  /** The resumable scan of SkipValue: nesting depth, and whether it is inside a string / after a backslash. */
  private skipDepth = 0;
  private skipInString = false;
  private skipEscape = false;

  // The fields of the event being parsed.
  private ph = 0;
  private catId = 0;
  private nameId = 0;
  private pidTok = -1;
  private tidTok = -1;
  private tsUs = Number.NaN;
  private tsFracNs = 0;
  private durNs = Number.NaN;
  /** The raw "ts" / "dur" values when present but not numbers ([start, end) in buf), else -1. */
  private tsBadStart = -1;
  private tsBadEnd = -1;
  private durBadStart = -1;
  private durBadEnd = -1;
  private idTok = -1;
  private argsStart = -1;
  private argsEnd = -1;
  private correlation = Number.NaN;
  private externalId = Number.NaN;
  /** The "Call stack" arg's text ([start, end) between its quotes in buf), -1 when absent; -2: not a string. */
  private stackStart = -1;
  private stackEnd = -1;
  /** The args hold a "Call site" (this product's export: the expression's file:line:column). */
  private siteSeen = false;
  /** Call sites the trace itself carries (2021-era "Call stack" args), read once the events are in. */
  private readonly callStacks = new CallStackTable();
  private pendingBare: { key: string; value: string }[] = [];
  /** The addon's scanner for the regular events (nativeScan.ts); undefined: this parser reads them all. */
  private readonly native: NativeEventScan | undefined;
  private readonly timings: ImportTimings | undefined;
  /** The reading's share read, for onPartial (set by importTrace). */
  progress: ReadProgress | undefined;
  private readonly startedAt = performance.now();
  private partialOffered = false;

  constructor(
    readonly file: string,
    private readonly options: ImportOptions,
    private readonly limits: ImportLimits,
  ) {
    this.profile = new Profile(file);
    if (options.sharedArgs) this.profile.args.useSharedMemory();
    this.interner = new ByteInterner(this.profile.strings);
    this.maxSlices = options.maxSlices ?? Number.POSITIVE_INFINITY;
    this.maxEvents = limits.events.value;
    this.maxValue = limits.valueBytes.value;
    const strings = this.profile.strings;
    this.timings = options.timings;
    this.native =
      (options.parser ?? defaultParser()) === 'native'
        ? NativeEventScan.create(
            {
              internBytes: (buf, start, end) => strings.intern(decodeJsonString(buf, start, end)),
              internText: (text) => strings.intern(text),
              trackFor: (pid, tid) => this.trackFor(pid, tid),
              kindOf: (cat) => this.kindOf(cat),
              metadata: (nameId, pidTok, tidTok, buf, argsStart, argsEnd) =>
                this.noteMetadata(nameId, pidTok, tidTok, buf, argsStart, argsEnd),
            },
            this.profile,
            this.callStacks,
            { maxEvents: this.maxEvents, maxSlices: this.maxSlices, maxValue: this.maxValue },
          )
        : undefined;
  }

  /**
   * Sizes the columns for a text of `bytes` up front, so that reading it does not copy them at every doubling: the
   * real traces hold a slice per 266–637 bytes of text and args of 28–64% of it. The estimate leans high; capacity
   * never written is never touched, so it costs address space, not memory (the slices' columns are trimmed at the end).
   */
  presize(bytes: number): void {
    const { slices, flows, args } = this.profile;
    slices.reserve(Math.min(this.maxSlices, Math.ceil(bytes / 256)));
    flows.reserve(Math.ceil(bytes / 640));
    args.reserveRoom(Math.ceil(bytes * 0.66), Math.ceil(bytes / 256));
  }

  /** Hands the events read so far to onPartial, once, when the reading is slow enough for it to help. */
  offerPartial(): void {
    const {
      onPartial,
      partialAfterMs = 1500,
      partialSlices = 250_000,
      partialMinReadMs = 3000,
    } = this.options;
    if (!onPartial || this.partialOffered) return;
    const fraction = this.progress?.fraction ?? Number.NaN;
    const slices = this.profile.slices.length;
    if (!(fraction < 0.5) || slices === 0) return;
    if (this.state !== State.Events && this.state !== State.EventsAfterElement) return;
    // Projected from the share read so far: a trace of millions of slices, or a reading of seconds.
    const elapsed = performance.now() - this.startedAt;
    const bySize = slices >= partialSlices && slices / fraction >= 4 * partialSlices;
    const byTime = elapsed >= partialAfterMs && elapsed / fraction >= partialMinReadMs;
    if (!bySize && !byTime) return;
    this.partialOffered = true;
    onPartial(this.snapshot(), fraction);
  }

  /**
   * The events read so far as a finished profile, this parser untouched (it reads on): a copy of its state,
   * finished as finish() finishes, without the end-of-input checks.
   */
  snapshot(): Profile {
    const copy = Object.create(TraceParser.prototype) as TraceParser;
    Object.assign(copy, this);
    const processes = this.tracks.processes;
    Object.assign(copy as unknown as Record<string, unknown>, {
      profile: this.profile.partialCopy(),
      tracks: {
        byKey: new Map(this.tracks.byKey),
        tokens: this.tracks.tokens.slice(),
        processes: processes && new Map([...processes].map(([pid, info]) => [pid, { ...info }])),
      } satisfies TrackTable,
      metadataEvents: this.metadataEvents.slice(),
      callStacks: this.callStacks.snapshot(),
      native: undefined,
      timings: undefined,
    });
    return copy.finishRead();
  }

  /** Which parser read the regular events. */
  get parser(): ParserChoice {
    return this.native ? 'native' : 'js';
  }

  emptyInput(): ImportError {
    return new ImportError(this.file, 0, 'empty file: expected a Kineto trace (JSON object or array)');
  }

  tooMuchText(): ImportError {
    return new ImportError(
      this.file,
      undefined,
      `too large: more than ${formatBytes(this.limits.traceBytes.value)} of trace text ` +
        `${describeLimit(this.limits.traceBytes, this.limits, true)}; ${SAMPLE_HINT}`,
    );
  }

  /** A value past the value limit, starting at `start` (absolute), held whole or just read whole. */
  valueTooLong(start = this.base): ImportError {
    return new ImportError(
      this.file,
      undefined,
      `${this.heldValue()} longer than ${formatBytes(this.limits.valueBytes.value)}, from byte ${start} ` +
        `${describeLimit(this.limits.valueBytes, this.limits, true)}`,
    );
  }

  /** What the parser is holding whole when it runs out of room, for valueTooLong. */
  private heldValue(): string {
    switch (this.state) {
      case State.Events:
      case State.EventsAfterElement:
        return 'one event';
      case State.ObjectKey:
        return 'one top-level key';
      case State.ObjectValue:
        return `the top-level field ${quote(this.currentKey)}`;
      default:
        return 'one JSON value';
    }
  }

  /**
   * Stops before the process runs out of memory (the byte and event limits bound most inputs; this bounds all):
   * checked at every eighth window and, `always`, at the end.
   */
  checkMemory(always = false): void {
    // At every eighth window (8 MB of text and more), the heap at every 64th: in a busy editor's host reading the
    // resident size took 0.4 ms a call and process.memoryUsage(), which walks the heap's spaces, more.
    if (++this.memoryChecks % 8 !== 0 && !always) return;
    const grown = process.memoryUsage.rss() - this.rssAtStart;
    if (grown > this.limits.memoryBytes.value) {
      throw new ImportError(
        this.file,
        this.base,
        `too large for the memory available: the import took ${formatBytes(grown)} ` +
          `${describeLimit(this.limits.memoryBytes, this.limits, true, true)}; ${SAMPLE_HINT}`,
      );
    }
    if (this.memoryChecks % 64 !== 0 && !always) return;
    const { heapUsed } = process.memoryUsage();
    if (heapUsed > this.limits.heapLimitBytes * HEAP_SHARE) {
      throw new ImportError(
        this.file,
        this.base,
        `too large: its names, threads and metadata fill the JavaScript heap (${formatBytes(heapUsed)} ` +
          `of the ${formatBytes(this.limits.heapLimitBytes)} it has; NODE_OPTIONS=--max-old-space-size=MB raises it)`,
      );
    }
  }

  feed(chunk: Uint8Array): void {
    this.fed += chunk.length;
    if (this.fed > this.limits.traceBytes.value) throw this.tooMuchText();
    if (this.pos < this.end) {
      const rest = this.end - this.pos;
      const merged = new Uint8Array(rest + chunk.length);
      merged.set(this.buf.subarray(this.pos, this.end), 0);
      merged.set(chunk, rest);
      this.base += this.pos;
      this.buf = merged;
    } else {
      this.base += this.end;
      this.buf = chunk;
    }
    this.pos = 0;
    this.end = this.buf.length;
    if (this.retryAt > this.end) return;
    this.run(false);
    if (this.end - this.pos > this.limits.valueBytes.value) throw this.valueTooLong();
  }

  /** Parses buf[0, end) in place; returns the bytes consumed (the caller keeps the rest for the next window). */
  feedWindow(buf: Uint8Array, end: number): number {
    this.buf = buf;
    this.pos = 0;
    this.end = end;
    if (this.retryAt <= end) this.run(false);
    const consumed = this.pos;
    this.base += consumed;
    this.buf = EMPTY;
    this.pos = 0;
    this.end = 0;
    return consumed;
  }

  /** The unparsed bytes left at the end of input, before finish(). */
  tail(rest: Uint8Array): void {
    this.buf = rest.slice();
    this.pos = 0;
    this.end = rest.length;
  }

  /** The import is over (finished or failed): the addon's scanner lets go of this parser and its profile. */
  release(): void {
    this.native?.release();
  }

  finish(): Profile {
    const started = performance.now();
    const profile = this.finishModel();
    if (this.timings) {
      this.timings.parser = this.parser;
      // Added up: a run of several parts reads each into the same account.
      this.timings.nativeScanMs = (this.timings.nativeScanMs ?? 0) + (this.native?.scanMs ?? 0);
      this.timings.finishMs = (this.timings.finishMs ?? 0) + performance.now() - started;
    }
    return profile;
  }

  private finishModel(): Profile {
    if (this.base + this.end === 0) throw this.emptyInput();
    this.run(true);
    if (this.state !== State.End) {
      throw new ImportError(
        this.file,
        this.base + this.end,
        `truncated JSON: expected ${this.expectation()}`,
      );
    }
    if (!this.sawEvents) {
      throw new ImportError(
        this.file,
        0,
        'not a trace: expected a "traceEvents" array or a top-level event array',
      );
    }
    return this.finishRead();
  }

  /** The model of the events read: warnings, call sites, metadata, tracks, nesting, memory and counters. */
  private finishRead(): Profile {
    if (this.badTs > 0) {
      this.profile.warnings.push({
        message:
          `${this.badTs.toLocaleString('en-US')} event(s) dropped: their "ts" is not a decimal number ` +
          `(the first: ${this.badTsExample}); ts is microseconds, as 1234.5 or "1234.5"`,
      });
    }
    if (this.missingTs > 0) {
      this.profile.warnings.push({
        message: `${this.missingTs.toLocaleString('en-US')} event(s) dropped: they have no "ts", so they cannot be placed`,
      });
    }
    if (this.badDur > 0) {
      this.profile.warnings.push({
        message:
          `${this.badDur.toLocaleString('en-US')} event(s) read with a duration of 0: their "dur" is not a ` +
          `decimal number (the first: ${this.badDurExample})`,
      });
    }
    if (this.quotedNames > 0) {
      this.profile.warnings.push({
        message:
          `${this.quotedNames.toLocaleString('en-US')} event name(s) hold unescaped quotes, read as written ` +
          `(the first: ${clip(this.quotedNameExample)}; torch 2.13 writes its _cupti_monitor frame this way)`,
      });
    }
    if (this.bareValues > this.reportedBare) {
      this.profile.warnings.push({
        message: `${this.bareValues} bare non-JSON metadata value(s) read as strings (seed 000 §3.4: unquoted metadata)`,
      });
    }
    const stacks = this.callStacks;
    const sites = stacks.resolve(this.profile.args);
    if (sites.size > 0) this.profile.sites = sites;
    if (stacks.malformed > 0) {
      this.profile.warnings.push({
        message:
          `${stacks.malformed.toLocaleString('en-US')} op(s) have a "Call stack" that is not ` +
          `"file(line): function;…", so they have no source line (the first: ${clip(stacks.malformedExample)})`,
      });
    }
    for (const m of this.metadataEvents) this.applyMetadataEvent(m);
    const { slices, flows } = this.profile;
    // Counter samples are in the frame the slices were read in; finishing moves the slices' t = 0 (rebase).
    const probe = slices.length > 0 ? slices.start[0] : flows.length > 0 ? flows.ts[0] : 0;
    finishProfile(
      this.profile,
      this.tracks,
      Number.isNaN(this.originUs) ? 0 : this.originUs,
      this.native ? 'native' : 'js',
    );
    const moved = probe - (slices.length > 0 ? slices.start[0] : flows.length > 0 ? flows.ts[0] : 0);
    this.profile.memory = readMemorySamples(this.profile);
    this.finishCounters(BigInt(Math.round(moved)));
    return this.profile;
  }

  private finishCounters(movedNs: bigint): void {
    const counters = this.profile.counters;
    if (!counters) return;
    counters.originNs = this.profile.originNs - movedNs;
    counters.compact();
    if (counters.skipped > 0) {
      this.profile.warnings.push({
        message:
          `${counters.skipped.toLocaleString('en-US')} counter value(s) skipped: not a number ` +
          `(the first: ${counters.skippedExample})`,
      });
    }
    if (counters.length === 0) this.profile.counters = undefined;
  }

  private expectation(): string {
    switch (this.state) {
      case State.Start:
        return "'{' or '[' (a Kineto trace)";
      case State.ObjectKey:
        return 'a key or }';
      case State.ObjectColon:
        return "':'";
      case State.ObjectValue:
      case State.SkipValue:
        return `the value of ${quote(this.currentKey)}`;
      case State.ObjectAfterValue:
        return "',' or '}'";
      case State.Events:
      case State.EventsAfterElement:
        return "an event object, ',' or ']'";
      default:
        return 'end of input';
    }
  }

  private fail(position: number, expected: string): never {
    throw new ImportError(this.file, this.base + position, `invalid JSON: expected ${expected}`);
  }

  private run(final: boolean): void {
    const buf = this.buf;
    const end = this.end;
    const maxValue = this.maxValue;
    let p = this.pos;
    this.retryAt = 0;
    try {
      for (;;) {
        if (this.state === State.SkipValue) {
          // Before skipWhitespace: inside the skipped value, whitespace may be string content.
          const e = this.skipOn(buf, p, end);
          if (e === INCOMPLETE) {
            p = end;
            break;
          }
          this.state = State.ObjectAfterValue;
          p = e;
          continue;
        }
        p = skipWhitespace(buf, p, end);
        if (p >= end) break;
        const c = buf[p];
        switch (this.state) {
          case State.Start: {
            if (c === 0xef && buf[p + 1] === 0xbb && buf[p + 2] === 0xbf) {
              p += 3; // UTF-8 byte order mark
              continue;
            }
            if (c === Ch.LBrace) {
              this.state = State.ObjectKey;
              this.profile.format = 'kineto-object';
            } else if (c === Ch.LBracket) {
              this.state = State.Events;
              this.nested = false;
              this.sawEvents = true;
              this.profile.format = 'kineto-array';
            } else {
              this.fail(p, "'{' or '[' at the start of a Kineto trace");
            }
            p++;
            continue;
          }
          case State.ObjectKey: {
            if (c === Ch.RBrace) {
              this.state = State.End;
              p++;
              continue;
            }
            if (c !== Ch.Quote) this.fail(p, 'a quoted key');
            const q = scanString(buf, p, end);
            if (q === INCOMPLETE) break;
            if (q - p > maxValue) throw this.valueTooLong(this.base + p);
            this.currentKey = decodeJsonString(buf, p + 1, q);
            this.state = State.ObjectColon;
            p = q + 1;
            continue;
          }
          case State.ObjectColon: {
            if (c !== Ch.Colon) this.fail(p, `':' after ${quote(this.currentKey)}`);
            this.state = State.ObjectValue;
            p++;
            continue;
          }
          case State.ObjectValue: {
            if (this.currentKey === 'traceEvents' && c === Ch.LBracket) {
              this.state = State.Events;
              this.nested = true;
              this.sawEvents = true;
              p++;
              continue;
            }
            const e = skipValue(buf, p, end, () => this.bareValues++);
            if (e === INCOMPLETE) {
              const keepAtMost = Math.min(MAX_METADATA_VALUE, this.limits.valueBytes.value / 2);
              if (end - p > keepAtMost && (c === Ch.Quote || c === Ch.LBrace || c === Ch.LBracket)) {
                // Too large to keep anyway: stream past it instead of holding it (a Chrome trace's
                // systemTraceEvents text can run to hundreds of megabytes).
                this.retryAt = 0;
                this.skipDepth = 0;
                this.skipInString = false;
                this.skipEscape = false;
                this.state = State.SkipValue;
                continue;
              }
              // Retry only after the buffer doubled: a huge top-level value then costs O(n log n), not O(n^2).
              this.retryAt = Math.max(CHUNK, (end - p) * 2);
              break;
            }
            this.retryAt = 0;
            this.keepTopLevel(this.currentKey, buf, p, e);
            this.state = State.ObjectAfterValue;
            p = e;
            continue;
          }
          case State.ObjectAfterValue: {
            if (c === Ch.Comma) this.state = State.ObjectKey;
            else if (c === Ch.RBrace) this.state = State.End;
            else this.fail(p, "',' or '}' between top-level fields");
            p++;
            continue;
          }
          case State.Events: {
            if (c === Ch.LBrace) {
              if (this.native) {
                const stop = this.native.scan(buf, p, end, false, this.originUs);
                this.originUs = this.native.originUs;
                p = this.native.pos;
                this.state = this.native.afterElement ? State.EventsAfterElement : State.Events;
                // Out of bytes, or at what follows the events: the loop goes on from there.
                if (stop === ScanStop.End || stop === ScanStop.Structure) continue;
                // Otherwise p is at an event this parser reads itself.
              }
              const e = this.parseEvent(buf, p, end);
              if (e === INCOMPLETE) {
                // One large event: parse again only once the window has doubled (O(n), not O(n^2) rescans).
                if (end - p > CHUNK) this.retryAt = (end - p) * 2;
                break;
              }
              this.state = State.EventsAfterElement;
              p = e;
              continue;
            }
            if (c === Ch.RBracket) {
              this.state = this.nested ? State.ObjectAfterValue : State.End;
              p++;
              continue;
            }
            if (c === Ch.Comma) {
              p++; // tolerate stray commas ("[,{...}" or ",,")
              continue;
            }
            this.fail(p, 'an event object in the trace event array');
            break;
          }
          case State.EventsAfterElement: {
            if (c === Ch.Comma) this.state = State.Events;
            else if (c === Ch.RBracket) this.state = this.nested ? State.ObjectAfterValue : State.End;
            else this.fail(p, "',' or ']' after an event");
            p++;
            continue;
          }
          case State.End: {
            // Trailing bytes after a complete trace: keep what was read and say so.
            this.profile.warnings.push({
              message: 'ignored trailing data after the trace',
              offset: this.base + p,
            });
            p = end;
            continue;
          }
        }
        break;
      }
    } catch (error) {
      if (error instanceof SyntaxProblem) this.fail(error.position, error.expected);
      throw error;
    }
    this.pos = p;
    if (final && p < end && this.state !== State.End) {
      throw new ImportError(this.file, this.base + p, `truncated JSON: expected ${this.expectation()}`);
    }
  }

  /** Scans on through a skipped value; returns the index after it, or INCOMPLETE with all of buf consumed. */
  private skipOn(buf: Uint8Array, p: number, end: number): number {
    let depth = this.skipDepth;
    let inString = this.skipInString;
    let escape = this.skipEscape;
    for (; p < end; p++) {
      const c = buf[p];
      if (inString) {
        if (escape) escape = false;
        else if (c === Ch.Backslash) escape = true;
        else if (c === Ch.Quote) {
          inString = false;
          if (depth === 0) return p + 1;
        }
      } else if (c === Ch.Quote) inString = true;
      else if (c === Ch.LBrace || c === Ch.LBracket) depth++;
      else if (c === Ch.RBrace || c === Ch.RBracket) {
        if (--depth === 0) return p + 1;
      }
    }
    this.skipDepth = depth;
    this.skipInString = inString;
    this.skipEscape = escape;
    return INCOMPLETE;
  }

  private keepTopLevel(key: string, buf: Uint8Array, start: number, end: number): void {
    if (end - start > MAX_METADATA_VALUE) return;
    const text = decodeText(buf, start, end);
    if (key === 'baseTimeNanoseconds') {
      // Epoch nanoseconds exceed 2^53: keep them exact.
      const digits = text.trim().replace(/^"|"$/g, '');
      if (/^\d+$/.test(digits)) {
        this.profile.metadata[key] = BigInt(digits);
        return;
      }
    }
    try {
      this.profile.metadata[key] = JSON.parse(text);
    } catch {
      this.profile.metadata[key] = text;
    }
  }

  /** Parses one event object at p ('{'); returns the index after it, or INCOMPLETE. */
  private parseEvent(buf: Uint8Array, start: number, end: number): number {
    this.ph = 0;
    this.catId = -1;
    this.nameId = 0;
    this.pidTok = -1;
    this.tidTok = -1;
    this.tsUs = Number.NaN;
    this.tsFracNs = 0;
    this.durNs = Number.NaN;
    this.tsBadStart = -1;
    this.durBadStart = -1;
    this.idTok = -1;
    this.argsStart = -1;
    this.argsEnd = -1;
    this.correlation = Number.NaN;
    this.externalId = Number.NaN;
    this.stackStart = -1;
    this.siteSeen = false;
    if (this.pendingBare.length) this.pendingBare = [];

    let p = start + 1;
    let needComma = false;
    for (;;) {
      p = skipWhitespace(buf, p, end);
      if (p >= end) return INCOMPLETE;
      let c = buf[p];
      if (c === Ch.RBrace) {
        p++;
        break;
      }
      if (c === Ch.Comma && needComma) {
        p++;
        needComma = false;
        continue;
      }
      if (needComma) throw new SyntaxProblem(p, "',' or '}' in an event");
      if (c !== Ch.Quote) throw new SyntaxProblem(p, 'a quoted key in an event');
      needComma = true;
      const keyEnd = scanString(buf, p, end);
      if (keyEnd === INCOMPLETE) return INCOMPLETE;
      const k = p + 1;
      const klen = keyEnd - k;
      p = skipWhitespace(buf, keyEnd + 1, end);
      if (p >= end) return INCOMPLETE;
      if (buf[p] !== Ch.Colon) throw new SyntaxProblem(p, "':' after a key in an event");
      p = skipWhitespace(buf, p + 1, end);
      if (p >= end) return INCOMPLETE;
      c = buf[p];
      let next = INCOMPLETE;
      const k0 = buf[k];
      const k1 = buf[k + 1];
      if (klen === 2 && k0 === 0x70 && k1 === 0x68) {
        // "ph"
        next = this.stringOrToken(buf, p, end);
        if (next === INCOMPLETE) return INCOMPLETE;
        this.ph = c === Ch.Quote ? buf[p + 1] : c;
      } else if (klen === 2 && k0 === 0x74 && k1 === 0x73) {
        // "ts"
        next = this.stringOrToken(buf, p, end);
        if (next === INCOMPLETE) return INCOMPLETE;
        const s = c === Ch.Quote ? p + 1 : p;
        const e = c === Ch.Quote ? next - 1 : next;
        if (parseTime(buf, s, e, this.time)) {
          this.tsUs = this.time.us;
          this.tsFracNs = this.time.fracNs;
        } else {
          this.tsUs = Number.NaN; // a later bad "ts" wins over an earlier good one, as a JSON parser's would
          this.tsBadStart = p;
          this.tsBadEnd = Math.min(next, p + 2 * MAX_QUOTED);
        }
      } else if (klen === 2 && k0 === 0x69 && k1 === 0x64) {
        // "id"
        next = this.stringOrToken(buf, p, end);
        if (next === INCOMPLETE) return INCOMPLETE;
        this.idTok =
          c === Ch.Quote ? this.interner.intern(buf, p + 1, next - 1) : this.interner.intern(buf, p, next);
      } else if (klen === 3 && buf[k + 2] === 0x64 && k1 === 0x69 && (k0 === 0x70 || k0 === 0x74)) {
        // "pid" / "tid"
        next = this.stringOrToken(buf, p, end);
        if (next === INCOMPLETE) return INCOMPLETE;
        const tok =
          c === Ch.Quote ? this.interner.intern(buf, p + 1, next - 1) : this.interner.intern(buf, p, next);
        if (k0 === 0x70) this.pidTok = tok;
        else this.tidTok = tok;
      } else if (klen === 3 && k0 === 0x63 && k1 === 0x61 && buf[k + 2] === 0x74) {
        // "cat"
        if (c !== Ch.Quote) {
          next = skipValue(buf, p, end, this.bareHandler(buf, k, keyEnd));
          if (next === INCOMPLETE) return INCOMPLETE;
        } else {
          const q = scanString(buf, p, end);
          if (q === INCOMPLETE) return INCOMPLETE;
          this.catId = this.interner.intern(buf, p + 1, q);
          next = q + 1;
        }
      } else if (klen === 3 && k0 === 0x64 && k1 === 0x75 && buf[k + 2] === 0x72) {
        // "dur"
        next = this.stringOrToken(buf, p, end);
        if (next === INCOMPLETE) return INCOMPLETE;
        const s = c === Ch.Quote ? p + 1 : p;
        const e = c === Ch.Quote ? next - 1 : next;
        if (parseTime(buf, s, e, this.time)) {
          this.durNs = this.time.us * 1000 + this.time.fracNs;
        } else {
          this.durNs = Number.NaN;
          this.durBadStart = p;
          this.durBadEnd = Math.min(next, p + 2 * MAX_QUOTED);
        }
      } else if (klen === 4 && k0 === 0x6e && k1 === 0x61 && buf[k + 2] === 0x6d && buf[k + 3] === 0x65) {
        // "name"
        if (c !== Ch.Quote) {
          next = skipValue(buf, p, end, this.bareHandler(buf, k, keyEnd));
          if (next === INCOMPLETE) return INCOMPLETE;
          this.nameId = this.profile.strings.intern(decodeText(buf, p, next));
        } else {
          const q = this.scanName(buf, p, end);
          if (q === INCOMPLETE) return INCOMPLETE;
          this.nameId = this.interner.intern(buf, p + 1, q);
          next = q + 1;
        }
      } else if (klen === 4 && k0 === 0x61 && k1 === 0x72 && buf[k + 2] === 0x67 && buf[k + 3] === 0x73) {
        // "args"
        next =
          c === Ch.LBrace
            ? this.parseArgs(buf, p, end)
            : skipValue(buf, p, end, this.bareHandler(buf, k, keyEnd));
        if (next === INCOMPLETE) return INCOMPLETE;
        if (c === Ch.LBrace) {
          this.argsStart = p;
          this.argsEnd = next;
        }
      } else {
        next = skipValue(buf, p, end, this.bareHandler(buf, k, keyEnd));
        if (next === INCOMPLETE) return INCOMPLETE;
      }
      p = next;
    }
    // Checked here too: an event read whole within one window never waits in it.
    if (p - start > this.maxValue) throw this.valueTooLong(this.base + start);
    this.emitEvent(buf);
    return p;
  }

  /**
   * An event's "name" string. torch 2.13's profiler writes the name of a frame it made for the lazily imported
   * torch/profiler/_cupti_monitor.py unescaped: `"name": "…_cupti_monitor.py(0): "segment"",`. No JSON parser reads
   * such a trace; here, a quote that a JSON string would end at but that is not followed by what may follow a value
   * in an event (`,` or `}`) is taken as part of the name, up to the quote that is. Counted and reported once.
   */
  private scanName(buf: Uint8Array, p: number, end: number): number {
    let q = scanString(buf, p, end);
    if (q === INCOMPLETE) return INCOMPLETE;
    let after = skipWhitespace(buf, q + 1, end);
    if (after >= end) return INCOMPLETE;
    if (buf[after] === Ch.Comma || buf[after] === Ch.RBrace) return q;
    const open = p;
    for (;;) {
      q = scanString(buf, q, end);
      if (q === INCOMPLETE) return INCOMPLETE;
      // A name is short: a runaway scan means the trace is broken some other way, which the caller then reports.
      if (q - open > MAX_QUOTED * 64) return scanString(buf, open, end);
      after = skipWhitespace(buf, q + 1, end);
      if (after >= end) return INCOMPLETE;
      if (buf[after] === Ch.Comma || buf[after] === Ch.RBrace) break;
    }
    if (this.quotedNames++ === 0) this.quotedNameExample = decodeText(buf, open + 1, q);
    return q;
  }

  private stringOrToken(buf: Uint8Array, p: number, end: number): number {
    if (buf[p] === Ch.Quote) {
      const q = scanString(buf, p, end);
      return q === INCOMPLETE ? INCOMPLETE : q + 1;
    }
    if (buf[p] === Ch.LBrace || buf[p] === Ch.LBracket) return skipValue(buf, p, end);
    const e = scanBareToken(buf, p, end);
    if (e === p) throw new SyntaxProblem(p, 'a value');
    return e;
  }

  private bareHandler(buf: Uint8Array, keyStart: number, keyEnd: number) {
    return (ks: number, ke: number, vs: number, ve: number) => {
      this.bareValues++;
      const key = ks >= 0 ? decodeText(buf, ks, ke) : decodeText(buf, keyStart, keyEnd);
      this.pendingBare.push({ key, value: decodeText(buf, vs, ve) });
    };
  }

  /**
   * Scans the args object, picking out the two ids of seed 000 §2 at its top level: "correlation" (the vendor's,
   * for flows) and "External id" (torch's, for attribution; "external id" in 2021 traces), and where the
   * "Call stack" of 2021 traces lies. The rest stays raw.
   */
  private parseArgs(buf: Uint8Array, start: number, end: number): number {
    this.stackStart = -1; // a stack is found in the args object that is kept (the last one, if repeated)
    this.siteSeen = false;
    let p = start + 1;
    let needComma = false;
    for (;;) {
      p = skipWhitespace(buf, p, end);
      if (p >= end) return INCOMPLETE;
      const c = buf[p];
      if (c === Ch.RBrace) return p + 1;
      if (c === Ch.Comma && needComma) {
        p++;
        needComma = false;
        continue;
      }
      if (needComma) throw new SyntaxProblem(p, "',' or '}' in args");
      if (c !== Ch.Quote) throw new SyntaxProblem(p, 'a quoted key in args');
      needComma = true;
      const keyEnd = scanString(buf, p, end);
      if (keyEnd === INCOMPLETE) return INCOMPLETE;
      const k = p + 1;
      p = skipWhitespace(buf, keyEnd + 1, end);
      if (p >= end) return INCOMPLETE;
      if (buf[p] !== Ch.Colon) throw new SyntaxProblem(p, "':' after a key in args");
      p = skipWhitespace(buf, p + 1, end);
      if (p >= end) return INCOMPLETE;
      let which = 0;
      if (keyEnd - k === 11) {
        const k0 = buf[k];
        if (
          (k0 === 0x45 || k0 === 0x65) &&
          buf[k + 1] === 0x78 &&
          buf[k + 9] === 0x69 &&
          buf[k + 10] === 0x64
        ) {
          which = k0 === 0x45 ? 1 : 2; // "External id" / "external id"
        } else if (k0 === 0x63 && buf[k + 1] === 0x6f && buf[k + 10] === 0x6e && buf[k + 4] === 0x65) {
          which = 3; // "correlation"
        }
      } else if (
        keyEnd - k === 10 &&
        buf[k] === 0x43 &&
        buf[k + 1] === 0x61 &&
        buf[k + 4] === 0x20 &&
        buf[k + 9] === 0x6b
      ) {
        which = 4; // "Call stack"
      } else if (
        keyEnd - k === 9 &&
        buf[k] === 0x43 &&
        buf[k + 4] === 0x20 &&
        buf[k + 5] === 0x73 &&
        buf[k + 8] === 0x65
      ) {
        this.siteSeen = true; // "Call site"
      }
      const vs = p;
      const next = skipValue(buf, p, end, this.bareHandler(buf, k, keyEnd));
      if (next === INCOMPLETE) return INCOMPLETE;
      if (which === 4) {
        const quoted = buf[vs] === Ch.Quote;
        this.stackStart = quoted ? vs + 1 : buf[vs] === 0x6e /* null */ ? -1 : -2;
        this.stackEnd = quoted ? next - 1 : -1;
      } else if (which !== 0) {
        const s = buf[vs] === Ch.Quote ? vs + 1 : vs;
        const e = buf[vs] === Ch.Quote ? next - 1 : next;
        if (isJsonLiteral(buf, s, e) && parseTime(buf, s, e, this.time)) {
          const value = this.time.us;
          if (which === 3) this.correlation = value;
          else if (which === 1 || Number.isNaN(this.externalId)) this.externalId = value;
        }
      }
      p = next;
    }
  }

  private trackFor(pidTok: number, tidTok: number): number {
    const key = pidTok * 0x400000 + tidTok;
    let track = this.tracks.byKey.get(key);
    if (track === undefined) {
      track = this.profile.tracks.length;
      const strings = this.profile.strings;
      this.profile.tracks.push({
        id: track,
        pid: strings.get(pidTok),
        tid: strings.get(tidTok),
        kind: 'other',
        name: '',
        processName: '',
        processSortIndex: Number.NaN,
        threadSortIndex: Number.NaN,
        sliceCount: 0,
        maxDepth: 0,
      });
      this.tracks.byKey.set(key, track);
      this.tracks.tokens.push([pidTok, tidTok]);
    }
    return track;
  }

  private relativeNs(): number {
    if (Number.isNaN(this.originUs)) this.originUs = this.tsUs;
    return (this.tsUs - this.originUs) * 1000 + this.tsFracNs;
  }

  private kindOf(catId: number): SliceKind {
    if (catId < 0) return SliceKind.Other;
    if (catId >= this.kindByCat.length) {
      const next = new Int8Array(Math.max(catId + 1, this.kindByCat.length * 2)).fill(-1);
      next.set(this.kindByCat);
      this.kindByCat = next;
    }
    let kind = this.kindByCat[catId];
    if (kind < 0) {
      kind = classifyCategory(this.profile.strings.get(catId));
      this.kindByCat[catId] = kind;
    }
    return kind as SliceKind;
  }

  private emitEvent(buf: Uint8Array): void {
    const profile = this.profile;
    if (++profile.eventCount > this.maxEvents) {
      throw new ImportError(
        this.file,
        undefined,
        `too large: more than ${this.maxEvents.toLocaleString('en-US')} events ` +
          `${describeLimit(this.limits.events, this.limits, false)}; ${SAMPLE_HINT}`,
      );
    }
    if (this.pendingBare.length) this.reportBare();
    const ph = this.ph;
    if (ph === 0x4d /* M */) {
      this.noteMetadata(this.nameId, this.pidTok, this.tidTok, buf, this.argsStart, this.argsEnd);
      return;
    }
    if (Number.isNaN(this.tsUs)) {
      // An event without a time cannot be placed; one whose time is not a number is counted and reported.
      if (this.tsBadStart < 0) this.missingTs++;
      else if (this.badTs++ === 0) this.badTsExample = clip(decodeText(buf, this.tsBadStart, this.tsBadEnd));
      return;
    }
    const pidTok = this.pidTok < 0 ? 0 : this.pidTok;
    const tidTok = this.tidTok < 0 ? 0 : this.tidTok;
    if (ph === 0x58 /* X */ || ph === 0x69 /* i */ || ph === 0x49 /* I */ || ph === 0x6e /* n */) {
      if (profile.slices.length >= this.maxSlices) {
        throw new ImportError(
          this.file,
          undefined,
          `too large: more than ${this.maxSlices} slices; raise the limit or sample the run with a shorter profiling window`,
        );
      }
      const track = this.trackFor(pidTok, tidTok);
      const args = this.argsStart >= 0 && this.argsEnd - this.argsStart > 2 ? this.storeArgs(buf) : -1;
      const instant = ph !== 0x58;
      if (!instant && this.durBadStart >= 0 && Number.isNaN(this.durNs) && this.badDur++ === 0)
        this.badDurExample = clip(decodeText(buf, this.durBadStart, this.durBadEnd));
      const dur = instant || Number.isNaN(this.durNs) ? 0 : Math.max(0, this.durNs);
      const kind = instant ? SliceKind.Instant : this.kindOf(this.catId);
      if (this.siteSeen || (this.stackStart !== -1 && this.stackEnd !== this.stackStart))
        this.noteCallStack(args, kind);
      profile.slices.push(
        kind,
        track,
        this.relativeNs(),
        dur,
        this.nameId,
        this.catId < 0 ? 0 : this.catId,
        this.correlation,
        this.externalId,
        args,
      );
      return;
    }
    if (ph === 0x73 /* s */ || ph === 0x66 /* f */ || ph === 0x74 /* t */) {
      const phase = ph === 0x73 ? FlowPhase.Start : ph === 0x66 ? FlowPhase.Finish : FlowPhase.Step;
      const track = this.trackFor(pidTok, tidTok);
      profile.flows.push(
        this.catId < 0 ? 0 : this.catId,
        this.idTok < 0 ? 0 : this.idTok,
        phase,
        this.relativeNs(),
        track,
      );
      return;
    }
    if (ph === 0x42 /* B */ || ph === 0x45 /* E */) {
      this.beginEnd(ph === 0x42, buf, pidTok, tidTok);
      return;
    }
    if (ph === 0x43 /* C */) {
      this.counter(buf, pidTok, tidTok);
      return;
    }
    // Async (b/e), samples and others are counted but not modelled.
  }

  /**
   * A counter event: each key of its args is a series, its value the series' value from ts on. Counter events are
   * few (a sample per interval), so their args are parsed whole; values that are not numbers are counted.
   */
  private counter(buf: Uint8Array, pidTok: number, tidTok: number): void {
    const profile = this.profile;
    const counters = profile.counters ?? (profile.counters = new CounterTable());
    if (this.argsStart < 0) return;
    const args = safeArgs(decodeText(buf, this.argsStart, this.argsEnd));
    const base = profile.strings.get(this.nameId);
    const name =
      this.idTok >= 0 ? profile.strings.intern(`${base} ${profile.strings.get(this.idTok)}`) : this.nameId;
    const track = this.trackFor(pidTok, tidTok);
    const ts = this.relativeNs();
    for (const key of Object.keys(args)) {
      const raw = args[key];
      const value =
        typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
      if (!Number.isFinite(value)) {
        if (counters.skipped++ === 0)
          counters.skippedExample = `${quote(key)}: ${clip(JSON.stringify(raw) ?? 'undefined')}`;
        continue;
      }
      counters.push(name, profile.strings.intern(key), track, ts, value);
    }
  }

  private beginEnd(begin: boolean, buf: Uint8Array, pidTok: number, tidTok: number): void {
    const track = this.trackFor(pidTok, tidTok);
    let stack = this.beginStacks.get(track);
    if (!stack) this.beginStacks.set(track, (stack = []));
    const start = this.relativeNs();
    if (begin) {
      const args = this.argsStart >= 0 && this.argsEnd - this.argsStart > 2 ? this.storeArgs(buf) : -1;
      const kind = this.kindOf(this.catId);
      if (this.siteSeen || (this.stackStart !== -1 && this.stackEnd !== this.stackStart))
        this.noteCallStack(args, kind);
      const slice = this.profile.slices.push(
        kind,
        track,
        start,
        0,
        this.nameId,
        this.catId < 0 ? 0 : this.catId,
        this.correlation,
        this.externalId,
        args,
      );
      stack.push(slice);
    } else {
      const slice = stack.pop();
      if (slice !== undefined)
        this.profile.slices.dur[slice] = Math.max(0, start - this.profile.slices.start[slice]);
    }
  }

  /**
   * An op's "Call stack", by where it lies in the op's stored args: its user frames become the op's site (by
   * External id, as sites.json gives them). Read after the last event, away from the parsing loop.
   */
  private noteCallStack(args: number, kind: SliceKind): void {
    if (!isOpKind(kind) || Number.isNaN(this.externalId) || args < 0) return;
    const string = this.stackStart >= 0;
    const absent = this.stackStart === -1 || this.stackEnd === this.stackStart;
    this.callStacks.note(
      args,
      absent ? NO_STACK : string ? this.stackStart - this.argsStart : -1,
      string ? this.stackEnd - this.stackStart : 0,
      this.externalId,
      this.siteSeen,
    );
  }

  private storeArgs(buf: Uint8Array): number {
    return this.profile.args.append(buf, this.argsStart, this.argsEnd);
  }

  private reportBare(): void {
    const name = this.profile.strings.get(this.nameId);
    for (const { key, value } of this.pendingBare) {
      if (this.reportedBare < 50) {
        this.reportedBare++;
        this.profile.warnings.push({
          message: `bare non-JSON value ${clip(value)} for ${quote(key)} in event ${quote(name)} read as a string (unquoted metadata, seed 000 §3.4)`,
        });
      }
    }
    this.pendingBare = [];
  }

  /**
   * A metadata event (ph M), kept for finish(); its args are buf[argsStart, argsEnd) (argsStart -1: none). Torch
   * repeats its process and thread metadata — MTIA's 87 MB trace holds 310,000 such events for a few hundred
   * processes — and a repeat of the value its target was last given (the same name for the same process, or
   * thread, with byte-identical args) changes nothing: it is dropped before its args are decoded.
   */
  private noteMetadata(
    nameId: number,
    pidTok: number,
    tidTok: number,
    buf: Uint8Array,
    argsStart: number,
    argsEnd: number,
  ): void {
    const name = this.profile.strings.get(nameId);
    const scope = METADATA_SCOPE.get(name);
    if (scope !== undefined) {
      // What the event sets: a field of its process, or of its thread (absent tokens read as 0, as there).
      const pid = pidTok < 0 ? 0 : pidTok;
      const target = scope === 'thread' ? pid * 0x400000 + (tidTok < 0 ? 0 : tidTok) : pid;
      let byTarget = this.metadataSeen.get(nameId);
      if (!byTarget) this.metadataSeen.set(nameId, (byTarget = new Map()));
      // Args are a JSON value, never empty: no args are remembered as zero bytes.
      const n = argsStart < 0 ? 0 : argsEnd - argsStart;
      const last = byTarget.get(target);
      if (last !== undefined && last.length === n && (n === 0 || last.compare(buf, argsStart, argsEnd) === 0))
        return;
      byTarget.set(target, Buffer.from(buf.subarray(argsStart, argsStart + n)));
    }
    this.metadataEvents.push({
      ph: 0x4d,
      name,
      pidTok,
      tidTok,
      args: argsStart >= 0 ? safeArgs(decodeText(buf, argsStart, argsEnd)) : {},
    });
  }

  private applyMetadataEvent(m: PendingMetadata): void {
    const pidTok = m.pidTok < 0 ? 0 : m.pidTok;
    const value = m.args.name ?? m.args.labels ?? m.args.sort_index;
    const process = this.tracks.processes ?? (this.tracks.processes = new Map());
    const info = process.get(pidTok) ?? { name: '', labels: '', sortIndex: Number.NaN };
    process.set(pidTok, info);
    switch (m.name) {
      case 'process_name':
        if (typeof value === 'string') info.name = value;
        break;
      case 'process_labels':
        if (typeof m.args.labels === 'string') info.labels = m.args.labels;
        break;
      case 'process_sort_index':
        if (typeof m.args.sort_index === 'number') info.sortIndex = m.args.sort_index;
        break;
      case 'thread_name':
      case 'thread_sort_index': {
        const key = pidTok * 0x400000 + (m.tidTok < 0 ? 0 : m.tidTok);
        const track = this.tracks.byKey.get(key);
        if (track === undefined) break; // a thread with no events: nothing to name
        const t = this.profile.tracks[track];
        if (m.name === 'thread_name' && typeof m.args.name === 'string') t.name = m.args.name;
        if (m.name === 'thread_sort_index' && typeof m.args.sort_index === 'number')
          t.threadSortIndex = m.args.sort_index;
        break;
      }
    }
  }
}

/** The metadata applyMetadataEvent reads, and what each sets a field of. */
const METADATA_SCOPE: ReadonlyMap<string, 'process' | 'thread'> = new Map([
  ['process_name', 'process'],
  ['process_labels', 'process'],
  ['process_sort_index', 'process'],
  ['thread_name', 'thread'],
  ['thread_sort_index', 'thread'],
]);

function safeArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Torch's name for an allocation or free instant (profile_memory=True). */
const MEMORY_EVENT = '[memory]';

/**
 * The `[memory]` instants as memory samples, in time order, each with the op running on its thread when it
 * happened. They stay instant slices too (the timeline shows them); undefined when the trace has none.
 */
export function readMemorySamples(profile: Profile): MemoryTable | undefined {
  const name = profile.strings.find(MEMORY_EVENT);
  if (name < 0) return undefined;
  const { slices } = profile;
  const events: number[] = [];
  for (let i = 0; i < slices.length; i++)
    if (slices.name[i] === name && slices.kind[i] === SliceKind.Instant) events.push(i);
  if (events.length === 0) return undefined;
  events.sort((a, b) => slices.start[a] - slices.start[b] || a - b);
  const memory = new MemoryTable();
  for (const i of events) {
    const args = profile.argsOf(i);
    const bytes = numberArg(args.Bytes);
    if (Number.isNaN(bytes)) continue;
    const deviceId = numberArg(args['Device Id']);
    memory.push(
      i,
      numberArg(args['Device Type']) || 0,
      Number.isNaN(deviceId) ? -1 : deviceId,
      bytes,
      numberArg(args['Total Allocated']),
      numberArg(args['Total Reserved']),
      numberArg(args.Addr),
      enclosingOp(profile, i),
    );
  }
  memory.compact();
  return memory.length > 0 ? memory : undefined;
}

function numberArg(value: unknown): number {
  return typeof value === 'number' ? value : typeof value === 'string' && value !== '' ? Number(value) : NaN;
}

/** The innermost op around slice i on its thread (instants at the same time nest in each other: skipped). */
function enclosingOp(profile: Profile, i: number): number {
  const { parent, kind } = profile.slices;
  for (let a = parent[i]; a >= 0; a = parent[a]) if (isOpKind(kind[a])) return a;
  return -1;
}
