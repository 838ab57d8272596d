/**
 * One measurement in a fresh process (so peak RSS is this job's alone):
 *   node import-child.js json|import|import-js|open|analysis|analyze FILE
 * prints one JSON line {mode, ms, maxRssMB, slices?, error?}.
 */
import { readFileSync } from 'node:fs';
import { importTrace, type ImportTimings } from '../extension/import/kineto';
import { nativeScanAvailable } from '../extension/import/nativeScan';
import { analyze } from '../extension/analysis/analyze';
import { analyzeOffThread, warmAnalysisWorker } from '../extension/analysis/offThread';
import * as path from 'node:path';
import { Profile, SliceKind } from '../extension/model/profile';
import { compressTimelineBuffer, encodeTimelineBuffer } from '../extension/timeline/encode';

/**
 * This process's own peak RSS: VmHWM from /proc/self/status. resourceUsage().maxRSS is not: a child starts with its
 * parent's high-water mark (getrusage's ru_maxrss survives exec), so a small job under a big parent reads the
 * parent's figure. Where /proc is absent, maxRSS is the best there is.
 */
function peakRssMB(): number {
  try {
    const hwm = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm) return Math.round(Number(hwm[1]) / 1024);
  } catch {
    // not Linux
  }
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

async function main(): Promise<void> {
  const [mode, file] = process.argv.slice(2);
  const t0 = performance.now();
  const result: Record<string, unknown> = { mode };
  try {
    if (mode === 'json') {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents?: unknown[] } | unknown[];
      result.events = Array.isArray(parsed) ? parsed.length : (parsed.traceEvents?.length ?? 0);
    } else if (mode === 'import' || mode === 'import-js') {
      // 'import': the native parse path where the addon has it (as users get it); 'import-js': the reference.
      const parser = mode === 'import' ? 'native' : 'js';
      if (parser === 'native' && !nativeScanAvailable()) throw new Error('the addon has no Kineto scanner');
      const timings: ImportTimings = {};
      const profile = await importTrace(file, { parser, timings });
      result.scanMs = Math.round(timings.nativeScanMs ?? 0);
      result.finishMs = Math.round(timings.finishMs ?? 0);
      result.slices = profile.slices.length;
      result.modelMB = Math.round((profile.slices.byteSize() + profile.args.byteSize()) / 1e6);
    } else if (mode === 'model') {
      // The model's own footprint: N synthetic slices (N = FILE argument), as an importer would append them.
      const count = Number(file);
      const profile = new Profile('synthetic');
      const name = profile.strings.intern('aten::mm');
      for (let i = 0; i < count; i++)
        profile.slices.push(SliceKind.Kernel, i & 7, i * 10, 5, name, 0, i, i, -1);
      profile.slices.compact();
      result.slices = profile.slices.length;
      result.modelMB = Math.round(profile.slices.byteSize() / 1e6);
    } else if (mode === 'open') {
      // What the extension host holds to show a trace: the model, its analysis and the webview's payload.
      const profile = await importTrace(file);
      const payload = compressTimelineBuffer(
        encodeTimelineBuffer(profile, analyze(profile), { title: 'bench', argsOnRequest: true }),
      );
      result.slices = profile.slices.length;
      result.payloadMB = Math.round(payload.byteLength / 1e6);
    } else if (mode === 'baseline') {
      // Node itself with this bundle loaded: the part of the peak that does not grow with the trace.
      result.slices = 0;
    } else if (mode === 'analysis') {
      // The analysis on this thread and on its worker (as the extension runs it): how long each takes, and the
      // longest this thread's event loop went unanswered meanwhile (a 5 ms ticker's largest gap).
      const profile = await importTrace(file);
      const workerFile = path.join(__dirname, 'analysisWorker.cjs');
      const stalled = async (run: () => Promise<unknown> | unknown): Promise<{ ms: number; stallMs: number }> => {
        let last = performance.now();
        let stallMs = 0;
        const ticker = setInterval(() => {
          const now = performance.now();
          stallMs = Math.max(stallMs, now - last);
          last = now;
        }, 5);
        await new Promise((resolve) => setTimeout(resolve, 20));
        last = performance.now();
        const from = performance.now();
        await run();
        const ms = performance.now() - from;
        await new Promise((resolve) => setTimeout(resolve, 10));
        clearInterval(ticker);
        return { ms: Math.round(ms), stallMs: Math.round(stallMs) };
      };
      warmAnalysisWorker({ workerFile });
      let place = '';
      const here = await stalled(() => analyze(profile));
      const worker = await stalled(() =>
        analyzeOffThread(profile, { workerFile, always: true, onPlace: (p, why) => (place = why ?? p) }),
      );
      if (place !== 'worker') throw new Error(`the analysis did not run on its worker: ${place}`);
      Object.assign(result, {
        slices: profile.slices.length,
        shared: profile.slices.start.buffer instanceof SharedArrayBuffer,
        hereMs: here.ms,
        hereStallMs: here.stallMs,
        workerMs: worker.ms,
        workerStallMs: worker.stallMs,
      });
    } else if (mode === 'analyze') {
      const profile = await importTrace(file);
      analyze(profile);
      result.slices = profile.slices.length;
    }
  } catch (error) {
    result.error = String((error as Error).message ?? error).slice(0, 120);
  }
  result.ms = Math.round(performance.now() - t0);
  result.maxRssMB = peakRssMB();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

// Bundled and loaded by the bench itself too (to build it): only a child given a mode measures.
if (process.argv[2]) void main();
