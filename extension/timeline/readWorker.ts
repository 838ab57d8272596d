/**
 * The read worker's entry (bundled as dist/readWorker.js): each request reads one trace with importTrace and
 * answers with its progress, the partial profile of a slow read, and the profile, its buffers transferred, with
 * the first frame's payload where asked (readOffThread.ts is the other side).
 */
import { parentPort } from 'node:worker_threads';
import { importTrace, type ImportTimings } from '../import/kineto';
import { profileToWire } from '../model/transfer';
import { compressTimelineBuffer, encodeTimelineBuffer } from './encode';
import { errorToWire, type ImportReply, type ImportRequest } from './readOffThread';

/** Progress is told at most this often: a message per chunk would be hundreds for a large trace. */
const PROGRESS_EVERY_MS = 50;

const reading = new Map<number, AbortController>();

function post(reply: ImportReply, transfer: ArrayBuffer[] = []): void {
  parentPort!.postMessage(reply, transfer);
}

async function read(request: Extract<ImportRequest, { type: 'import' }>): Promise<void> {
  const { id, file, options, partial, firstFrame } = request;
  const controller = new AbortController();
  reading.set(id, controller);
  const timings: ImportTimings = {};
  let toldAt = -Infinity;
  try {
    const profile = await importTrace(file, {
      ...options,
      sharedArgs: true,
      signal: controller.signal,
      timings,
      onProgress: (fraction) => {
        const now = performance.now();
        if (now - toldAt < PROGRESS_EVERY_MS && fraction < 1) return;
        toldAt = now;
        post({ id, type: 'progress', fraction });
      },
      onPartial: partial
        ? (part, fraction) => {
            // The partial profile's arena is the one still being read into, in shared memory: not copied.
            const { wire, transfer } = profileToWire(part, { argsInUse: true });
            post({ id, type: 'partial', profile: wire, fraction }, transfer);
          }
        : undefined,
    });
    // Encoded before the profile's buffers leave with it; the page draws it while the host takes the profile in.
    let payload: ArrayBuffer | undefined;
    if (firstFrame) {
      const { encode, startedAtMs } = firstFrame;
      const opened = encode.opened && {
        ...encode.opened,
        readMs: Date.now() - startedAtMs,
        parseMs: timings.parser === 'native' ? timings.nativeScanMs : undefined,
      };
      payload = compressTimelineBuffer(encodeTimelineBuffer(profile, undefined, { ...encode, opened }));
    }
    const { wire, transfer } = profileToWire(profile);
    post({ id, type: 'done', profile: wire, timings, payload }, payload ? [...transfer, payload] : transfer);
  } catch (error) {
    post({ id, type: 'error', error: errorToWire(error) });
  } finally {
    reading.delete(id);
  }
}

parentPort?.on('message', (request: ImportRequest) => {
  if (request.type === 'cancel') reading.get(request.id)?.abort();
  else void read(request);
});
