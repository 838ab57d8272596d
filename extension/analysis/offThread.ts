/**
 * The analysis on a worker thread, so that the extension host stays responsive while a large trace is linked
 * (about 0.9 s for the 1 GB synthetic trace's 3.6 M slices, all of it one synchronous pass) and a cancelled open
 * stops it at once. The worker gets what the analysis reads — the slice and flow columns cut to their length, the
 * strings and the call sites, never the args — and hands its typed arrays back without copying them. Where no
 * worker can start (the sources run unbundled, as in the unit tests, or the host refuses threads) the analysis runs
 * on the calling thread, as the CLI always does: the result is the same either way.
 */
import { hostsByBundle, WorkerHost } from '../import/workerHost';
import { FlowTable, Profile, SliceTable, type SourceFrame } from '../model/profile';
import { StringTable } from '../model/strings';
import type { ColumnArray } from '../shared/columns';
import { analyze } from './analyze';
import type { Analysis, FlowStats } from './types';

type Columns = Record<string, ColumnArray>;

/** What the worker is sent: a profile's share that the analysis reads. */
export interface AnalysisInput {
  path: string;
  slices: { length: number; columns: Columns };
  flows: { length: number; columns: Columns };
  strings: readonly string[];
  sites: Map<number, SourceFrame[]> | undefined;
}

/** An analysis without its profile. */
export type AnalysisOutput = Omit<Analysis, 'profile'>;

/**
 * What comes back from the worker: the analysis, its flow pairs as one column of (cat, id, from, to) quadruples
 * (a quarter of a million pair objects took 100 ms to clone on the receiving thread; the column none).
 */
export interface AnalysisWire {
  output: AnalysisOutput;
  pairs: Int32Array;
}

/** The worker's answer to one request. */
export type AnalysisReply = ({ id: number } & AnalysisWire) | { id: number; error: string };

/** Columns cut to `length`, as copies whose buffers can be transferred (a shared buffer is passed as it is). */
function cut(names: readonly string[], columns: Columns, length: number, transfer: ArrayBuffer[]): Columns {
  const out: Columns = {};
  for (const name of names) {
    const column = columns[name];
    if (column.buffer instanceof SharedArrayBuffer) {
      out[name] = column.subarray(0, length);
    } else {
      const copy = column.slice(0, Math.max(length, 1));
      transfer.push(copy.buffer as ArrayBuffer);
      out[name] = copy;
    }
  }
  return out;
}

export function analysisInput(profile: Profile): { input: AnalysisInput; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  const { slices, flows } = profile;
  const input: AnalysisInput = {
    path: profile.path,
    slices: {
      length: slices.length,
      columns: cut(SliceTable.columnNames, slices.columns, slices.length, transfer),
    },
    flows: {
      length: flows.length,
      columns: cut(FlowTable.columnNames, flows as unknown as Columns, flows.length, transfer),
    },
    strings: profile.strings.all(),
    sites: profile.sites,
  };
  return { input, transfer };
}

/** The worker's side: a profile holding what the analysis reads, over the columns it was sent. */
export function profileOfInput(input: AnalysisInput): Profile {
  const profile = new Profile(input.path);
  const writable = profile as { -readonly [K in 'strings']: Profile[K] };
  writable.strings = StringTable.of(input.strings);
  Object.assign(profile.slices.columns, input.slices.columns);
  profile.slices.length = input.slices.length;
  Object.assign(profile.flows, input.flows.columns);
  profile.flows.length = input.flows.length;
  profile.sites = input.sites;
  return profile;
}

/** The analysis's typed arrays (found one level into its objects and arrays), to transfer rather than copy. */
function transferablesOf(output: AnalysisOutput): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  const visit = (value: unknown, depth: number): void => {
    if (ArrayBuffer.isView(value)) {
      if (value.buffer instanceof ArrayBuffer) buffers.add(value.buffer);
    } else if (depth < 2 && value !== null && typeof value === 'object') {
      for (const inner of Array.isArray(value) ? value : Object.values(value)) {
        if (ArrayBuffer.isView(inner) || depth === 0) visit(inner, depth + 1);
      }
    }
  };
  visit(output, 0);
  return [...buffers];
}

export function analysisOutput(analysis: Analysis): AnalysisWire & { transfer: ArrayBuffer[] } {
  const { profile: _profile, ...output } = analysis;
  const { pairs } = output.flows;
  const column = new Int32Array(pairs.length * 4);
  for (let i = 0, at = 0; i < pairs.length; i++, at += 4) {
    const pair = pairs[i];
    column[at] = pair.cat;
    column[at + 1] = pair.id;
    column[at + 2] = pair.from;
    column[at + 3] = pair.to;
  }
  const wire = { ...output, flows: { ...output.flows, pairs: [] } };
  return { output: wire, pairs: column, transfer: [...transferablesOf(wire), column.buffer] };
}

/** The analysis the worker sent, its flow pairs objects again. */
export function outputOfWire({ output, pairs: column }: AnalysisWire): AnalysisOutput {
  const pairs: FlowStats['pairs'] = new Array(column.length / 4);
  for (let i = 0, at = 0; at < column.length; i++, at += 4) {
    pairs[i] = { cat: column[at], id: column[at + 1], from: column[at + 2], to: column[at + 3] };
  }
  return { ...output, flows: { ...output.flows, pairs } };
}

/** Raised when the signal given to analyzeOffThread aborts: the worker is stopped where it was. */
export class AnalysisCancelled extends Error {
  constructor() {
    super('analysis cancelled');
    this.name = 'AnalysisCancelled';
  }
}

/** Profiles smaller than this are analysed in place: a round trip to the worker would cost more than the pass. */
const IN_PLACE_BELOW_SLICES = 20_000;
/** An idle worker is stopped after this long (its heap is freed; the next analysis starts a new one). */
const IDLE_MS = 60_000;

interface Pending {
  resolve: (output: AnalysisOutput) => void;
  reject: (error: Error) => void;
}

/** One worker, started on first use and reused; requests are answered in order. */
class AnalysisWorker extends WorkerHost<Pending, AnalysisReply> {
  protected readonly name = 'analysis worker';

  constructor(file: string) {
    super(file, IDLE_MS);
  }

  analyze(profile: Profile, signal?: AbortSignal): Promise<AnalysisOutput> {
    if (signal?.aborted) return Promise.reject(new AnalysisCancelled());
    const { worker, id } = this.begin();
    const { input, transfer } = analysisInput(profile);
    return new Promise<AnalysisOutput>((resolve, reject) => {
      const onAbort = (): void => {
        // The pass cannot be interrupted from outside: the worker goes, and every request with it.
        this.stop(new AnalysisCancelled());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const settle = (): void => {
        signal?.removeEventListener('abort', onAbort);
        if (this.pending.size === 0) this.idleAfter();
      };
      this.pending.set(id, {
        resolve: (output) => {
          settle();
          resolve(output);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      worker.postMessage({ id, input }, transfer);
    });
  }

  protected onReply(reply: AnalysisReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if ('error' in reply) pending.reject(new Error(reply.error));
    else pending.resolve(outputOfWire(reply));
  }

  protected stopped(cause: unknown): Error {
    return cause instanceof Error ? cause : new Error(String(cause));
  }
}

/** The worker for dist/analysisWorker.js (or a given bundle). */
const workerFor = hostsByBundle('analysisWorker.js', (file) => new AnalysisWorker(file));

export interface OffThreadOptions {
  /** Stops the analysis (the promise rejects with AnalysisCancelled). */
  signal?: AbortSignal;
  /** The worker's bundle; by default dist/analysisWorker.js beside the running bundle. */
  workerFile?: string;
  /** Analyse on the worker whatever the profile's size (for tests). */
  always?: boolean;
  /** Told where the analysis ran: 'worker', or 'here' with why. */
  onPlace?: (place: 'worker' | 'here', why?: string) => void;
}

/** Starts the analysis worker ahead of need, so that the first analysis does not wait for it to load. */
export function warmAnalysisWorker(options: OffThreadOptions = {}): void {
  try {
    workerFor(options.workerFile)?.warm();
  } catch {
    // analyzeOffThread falls back to the calling thread.
  }
}

/**
 * analyze(profile) on the worker thread; the same result as analyze(profile). Falls back to the calling thread
 * where no worker can run it (and for small profiles, where the round trip costs more than the pass).
 */
export async function analyzeOffThread(profile: Profile, options: OffThreadOptions = {}): Promise<Analysis> {
  if (options.signal?.aborted) throw new AnalysisCancelled();
  const worker =
    options.always || profile.slices.length >= IN_PLACE_BELOW_SLICES
      ? workerFor(options.workerFile)
      : undefined;
  let why = worker ? '' : 'no worker for this profile';
  if (worker) {
    try {
      const output = await worker.analyze(profile, options.signal);
      options.onPlace?.('worker');
      return { ...output, profile };
    } catch (error) {
      if (error instanceof AnalysisCancelled) throw error;
      // A worker that could not start or died (out of memory, a missing bundle): the pass runs here instead.
      why = (error as Error).message;
    }
  }
  options.onPlace?.('here', why);
  return analyze(profile);
}
