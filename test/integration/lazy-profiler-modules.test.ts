/**
 * torch 2.13 imports torch.profiler._cupti_monitor at the first record_function (Optimizer.step has one); under the
 * Python tracer that import records a frame named `_cupti_monitor.py(0): "segment"`, written unescaped, and the
 * trace is no longer JSON (seen in one of nine runs of examples/gpt). The agent imports it before the window opens.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePython, tempDir } from '../helpers/agent';
import { buildCli, cleanupCliRuns, runCli } from '../helpers/cli';
import { PYTHON, ROOT } from '../helpers/paths';

const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'scripts', 'lazy_profiler_modules.py');

beforeAll(() => {
  requirePython();
  buildCli();
});
afterAll(cleanupCliRuns);

describe('torch’s lazily imported profiler modules', () => {
  it('are imported before the profiling window opens, so their import frames never reach the trace', async () => {
    const out = path.join(tempDir('lazy'), 'session');
    const run = await runCli(['profile', '--out', out, '--python', PYTHON, '--mode', 'cpu', '--', SCRIPT], {
      timeoutMs: 300_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toContain('cupti monitor imported before the script: True');
    const text = gunzipSync(readFileSync(path.join(out, 'trace.json.gz'))).toString('utf8');
    const trace = JSON.parse(text) as { traceEvents: { name: string; cat?: string }[] };
    // What runs only while the module is imported: its module code and its class bodies (its functions, called at
    // each record_function, are the profiler's ordinary calls).
    const importFrames = /_cupti_monitor\.py\(\d+\): (<module>|"|_CuptiError$|CuptiMonitor$)/;
    const monitor = trace.traceEvents.filter((e) => e.cat === 'python_function' && importFrames.test(e.name));
    expect(monitor).toEqual([]);
    expect(trace.traceEvents.some((e) => e.name.startsWith('Optimizer.step'))).toBe(true);
  }, 300_000);
});
