/**
 * importTrace on a worker thread, for the extension host, and the timeline's first payload encoded there too. The
 * host's heap is large (VS Code's API, the workbench's state, other extensions): each full collection that the
 * import's buffers set off marks all of it, and reading and encoding there took 2 to 3 times as long as in a plain
 * Node process. A worker's heap holds the import alone. The profile comes back with its typed arrays transferred,
 * not copied (model/transfer.ts), with the first frame's payload where one was asked for; progress, the partial
 * profile of a slow read and Cancel cross the thread as messages. Where no worker can run (the sources unbundled,
 * as in the unit tests, or a worker that fails to start or dies) the trace is read on the calling thread, as the
 * command line always reads it: the profile is the same either way.
 */
import { ImportError, UserError } from '../import/errors';
import { ImportCancelled, importTrace, type ImportOptions, type ImportTimings } from '../import/kineto';
import { hostsByBundle, WorkerHost } from '../import/workerHost';
import type { Profile } from '../model/profile';
import { profileFromWire, type ProfileWire } from '../model/transfer';
import type { EncodeOptions } from './encode';

/** importTrace's options that cross to the worker: its limits and choices, none of its callbacks. */
export type PlainImportOptions = Omit<ImportOptions, 'onProgress' | 'signal' | 'onPartial' | 'timings'>;

/**
 * The first frame's payload to encode on the worker once the trace is read (compressTimelineBuffer of
 * encodeTimelineBuffer without an analysis): `encode`'s opened.readMs is counted there from `startedAtMs` (epoch ms).
 */
export interface FirstFrameRequest {
  encode: EncodeOptions;
  startedAtMs: number;
}

/** A request to the worker. */
export type ImportRequest =
  | {
      type: 'import';
      id: number;
      file: string;
      options: PlainImportOptions;
      partial: boolean;
      firstFrame?: FirstFrameRequest;
    }
  | { type: 'cancel'; id: number };

/** An error as the worker saw it, enough to raise the same error here (the same one-line message). */
export interface ErrorWire {
  name: string;
  message: string;
  file?: string;
  offset?: number;
  problem?: string;
  exitCode?: number;
}

/** The worker's messages about one request: progress and a partial profile while reading, then one end. */
export type ImportReply =
  | { id: number; type: 'progress'; fraction: number }
  | { id: number; type: 'partial'; profile: ProfileWire; fraction: number }
  | { id: number; type: 'done'; profile: ProfileWire; timings: ImportTimings; payload?: ArrayBuffer }
  | { id: number; type: 'error'; error: ErrorWire };

export function errorToWire(error: unknown): ErrorWire {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const wire: ErrorWire = { name: error.name, message: error.message };
  if (error instanceof ImportError) {
    wire.file = error.file;
    wire.offset = error.offset;
    wire.problem = error.problem;
  }
  if (error instanceof UserError) wire.exitCode = error.exitCode;
  return wire;
}

/** The error the worker raised, as its own class again. */
function errorFromWire(wire: ErrorWire, file: string): Error {
  if (wire.name === 'ImportCancelled') return new ImportCancelled(wire.file ?? file);
  if (wire.problem !== undefined) return new ImportError(wire.file ?? file, wire.offset, wire.problem);
  if (wire.exitCode !== undefined) return new UserError(wire.message, wire.exitCode);
  const error = new Error(wire.message);
  error.name = wire.name;
  return error;
}

/** The worker could not read for us (it did not start, or stopped): the caller reads on its own thread. */
class WorkerUnavailable extends Error {}

/**
 * A worker that has read is stopped this long after its last read. Until its next collection, which an idle worker
 * never has, it still references the shared memory of the profiles it read (their slices' columns and args texts):
 * kept for good, it held a closed 0.5 GB trace's 0.4 GB. Kept a while, the next open finds it started and its code
 * compiled (a fresh worker read owlv2 about 40 ms slower).
 */
const RETIRE_AFTER_MS = 30_000;

interface Pending {
  file: string;
  options: ImportOptions;
  firstFrame?: FirstFrameRequest;
  resolve: (profile: Profile) => void;
  reject: (error: Error) => void;
}

/** One worker, started on first use and reused; it reads several traces at once when asked to. */
class ImportWorker extends WorkerHost<Pending, ImportReply> {
  protected readonly name = 'import worker';

  constructor(file: string) {
    super(file, RETIRE_AFTER_MS);
  }

  warm(): void {
    super.warm();
    // Stopped in a while if no read comes (read() keeps it).
    if (this.pending.size === 0) this.idleAfter();
  }

  read(file: string, options: ImportOptions, firstFrame?: FirstFrameRequest): Promise<Profile> {
    const { onProgress: _p, signal, onPartial, timings: _t, ...plain } = options;
    if (signal?.aborted) return Promise.reject(new ImportCancelled(file));
    const { worker, id } = this.begin();
    return new Promise<Profile>((resolve, reject) => {
      // The import stops at its next chunk, as on this thread; the worker says so with an ImportCancelled.
      const onAbort = (): void => worker.postMessage({ type: 'cancel', id } satisfies ImportRequest);
      signal?.addEventListener('abort', onAbort, { once: true });
      const settle = (): void => {
        signal?.removeEventListener('abort', onAbort);
        // Stopped RETIRE_AFTER_MS after its last read, unless it reads again meanwhile.
        if (this.pending.size === 0) this.idleAfter();
      };
      this.pending.set(id, {
        file,
        options,
        firstFrame,
        resolve: (profile) => {
          settle();
          resolve(profile);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      const request: ImportRequest = {
        type: 'import',
        id,
        file,
        options: plain,
        partial: !!onPartial,
        firstFrame,
      };
      worker.postMessage(request);
    });
  }

  protected onReply(reply: ImportReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    const { options } = pending;
    switch (reply.type) {
      case 'progress':
        options.onProgress?.(reply.fraction);
        return;
      case 'partial':
        options.onPartial?.(profileFromWire(reply.profile), reply.fraction);
        return;
      case 'done': {
        this.pending.delete(reply.id);
        if (options.timings) Object.assign(options.timings, reply.timings);
        const profile = profileFromWire(reply.profile);
        if (reply.payload && pending.firstFrame)
          firstFrames.set(profile, { request: pending.firstFrame, payload: reply.payload });
        pending.resolve(profile);
        return;
      }
      case 'error':
        this.pending.delete(reply.id);
        pending.reject(errorFromWire(reply.error, pending.file));
        return;
    }
  }

  protected stopped(cause: unknown): Error {
    return new WorkerUnavailable(String(cause));
  }
}

/** The first frames' payloads the worker encoded, by the profile they show, until they are taken. */
const firstFrames = new WeakMap<Profile, { request: FirstFrameRequest; payload: ArrayBuffer }>();

/**
 * The first frame's payload that the worker encoded for `profile` at `request` (ImportOffThreadOptions.firstFrame),
 * once: the caller posts it as it is. Undefined where none was encoded for that request (the trace was read on
 * this thread, or for another caller sharing the read, whose title and times it carries).
 */
export function takeFirstFrame(profile: Profile, request: FirstFrameRequest): ArrayBuffer | undefined {
  const prepared = firstFrames.get(profile);
  if (prepared?.request !== request) return undefined;
  firstFrames.delete(profile);
  return prepared.payload;
}

/** The worker for dist/readWorker.js (or a given bundle). */
const workerFor = hostsByBundle('readWorker.js', (file) => new ImportWorker(file));

export interface ImportOffThreadOptions extends ImportOptions {
  /** The worker's bundle; by default dist/readWorker.js beside the running bundle. */
  workerFile?: string;
  /** The first frame's payload to encode there as well (takeFirstFrame gives it). */
  firstFrame?: FirstFrameRequest;
  /** Told where the trace was read: 'worker', or 'here' with why. */
  onPlace?: (place: 'worker' | 'here', why?: string) => void;
}

/** Starts the import worker ahead of need, so that an open does not wait for it to load. */
export function warmImportWorker(workerFile?: string): void {
  try {
    workerFor(workerFile)?.warm();
  } catch {
    // importOffThread reads on the calling thread instead.
  }
}

/**
 * importTrace(file, options) read on the worker thread: the same profile, progress, partial profile, timings and
 * errors, and the first frame's payload where asked. Falls back to the calling thread where no worker can read it.
 */
export async function importOffThread(file: string, options: ImportOffThreadOptions = {}): Promise<Profile> {
  const { workerFile, onPlace, firstFrame, ...importOptions } = options;
  const worker = workerFor(workerFile);
  let why = 'no worker bundle beside this one';
  if (worker) {
    try {
      const profile = await worker.read(file, importOptions, firstFrame);
      onPlace?.('worker');
      return profile;
    } catch (error) {
      if (!(error instanceof WorkerUnavailable)) throw error;
      why = error.message;
    }
  }
  onPlace?.('here', why);
  return importTrace(file, importOptions);
}
