/**
 * The analysis worker's entry (bundled as dist/analysisWorker.js): each message is one profile's share that the
 * analysis reads (offThread.ts), each answer its analysis, the typed arrays transferred.
 */
import { parentPort } from 'node:worker_threads';
import { analyze } from './analyze';
import { analysisOutput, profileOfInput, type AnalysisInput, type AnalysisReply } from './offThread';

parentPort?.on('message', ({ id, input }: { id: number; input: AnalysisInput }) => {
  let reply: AnalysisReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const { output, pairs, transfer: buffers } = analysisOutput(analyze(profileOfInput(input)));
    reply = { id, output, pairs };
    transfer = buffers;
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(reply, transfer);
});
