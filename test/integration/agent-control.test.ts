/**
 * The capture agent under control: cancellation, the profiling window, FLAGOS_TRACE capture, no torch, a script
 * with its own profiler, and the flagprof CLI around it.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openProfile } from '../../extension/capture/open';
import type { Profile } from '../../extension/model/profile';
import {
  launch,
  PYTHON,
  pythonWithoutTorch,
  readJson,
  requirePython,
  ROOT,
  SCRIPTS,
  tempDir,
} from '../helpers/agent';

beforeAll(() => requirePython());

function sliceNames(profile: Profile): Set<string> {
  return new Set(Array.from({ length: profile.slices.length }, (_, i) => profile.nameOf(i)));
}

describe('capture agent: control', () => {
  it('SIGINT mid-run (Cancel): exit 130, the trace captured so far kept', async () => {
    let cancelledAt = 0;
    const { result, stderr, stdout, dir, progress } = await launch('busy_loop.py', {}, (run, output) => {
      const timer = setInterval(() => {
        if (output.stdout().includes('ready')) {
          clearInterval(timer);
          setTimeout(() => {
            cancelledAt = Date.now();
            run.cancel();
          }, 500);
        }
      }, 50);
    });
    expect(cancelledAt).toBeGreaterThan(0);
    expect(result.cancelled).toBe(true);
    expect(result.exitCode).toBe(130);
    expect(stdout).not.toContain('not interrupted');
    expect(stderr).toContain('KeyboardInterrupt');
    expect(progress.map((p) => p.phase)).toEqual(
      expect.arrayContaining(['starting', 'running', 'exporting', 'done']),
    );
    const session = readJson(path.join(dir, 'session.json'));
    expect(session.status).toBe('interrupted');
    const profile = (await openProfile(dir)).profile;
    expect(sliceNames(profile).has('aten::tanh')).toBe(true);
  });

  it('--delay/--duration: the window holds only the work inside it', async () => {
    const { result, dir } = await launch('phases.py', { delayS: 1, durationS: 0.5 });
    expect(result.exitCode).toBe(0);
    const session = readJson<{ window: { captured: boolean; startNs: string; endNs: string } }>(
      path.join(dir, 'session.json'),
    );
    expect(session.window.captured).toBe(true);
    expect(BigInt(session.window.endNs) > BigInt(session.window.startNs)).toBe(true);
    const names = sliceNames((await openProfile(dir)).profile);
    expect(names.has('aten::cos')).toBe(true);
    expect(names.has('aten::sin')).toBe(false);
    expect(names.has('aten::exp')).toBe(false);
  });

  it('stderr lines of the torch_fl tracer go to diagnostics.jsonl and still reach the user', async () => {
    const { result, stderr, dir } = await launch('flagos_lines.py');
    expect(result.exitCode).toBe(0);
    expect(stderr).toContain('[flagos] FlagosKinetoProfiler registered with kineto\n');
    expect(stderr).toContain('an ordinary warning from the script\n');
    const lines = readFileSync(path.join(dir, 'diagnostics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ts: number; line: string });
    expect(lines.map((l) => l.line)).toEqual([
      '[flagos] FlagosKinetoProfiler registered with kineto',
      '[flagos-cupti-shim] bound cuptiActivityRegisterCallbacks -> /opt/fake/libcupti.so (CUPTI API version 130001)',
      '[flagos] session stop: drained 0 device events',
    ]);
    for (const l of lines) expect(l.ts).toBeGreaterThan(1.7e12);
    const profile = (await openProfile(dir)).profile;
    expect((profile.metadata.diagnostics as unknown[]).length).toBe(3);
  });

  it('an interpreter without torch: the script still runs, and the session says why nothing was profiled', async () => {
    const python = pythonWithoutTorch();
    const { result, stdout, stderr, dir } = await launch('no_torch_needed.py', { python, mode: 'auto' });
    expect(result.exitCode).toBe(0);
    expect(stdout).toContain('ran without torch');
    expect(stderr).toMatch(
      /flagprof: torch is not installed in .*: the script runs without op or device profiling/,
    );
    const session = readJson<{ torch: unknown; notes: string[] }>(path.join(dir, 'session.json'));
    expect(session.torch).toBeNull();
    expect(session.notes.join('\n')).toContain('torch is not installed');
    expect(existsSync(path.join(dir, 'trace.json.gz'))).toBe(false);
  });

  it('a script that starts torch.profiler itself: ours steps aside and says so, the script works', async () => {
    const { result, stdout, stderr, dir } = await launch('own_profiler.py');
    expect(result.exitCode).toBe(0);
    expect(stdout).toContain('own profiler events True');
    expect(stderr).toContain('the script starts torch.profiler itself at');
    expect(stderr).toContain('own_profiler.py:7');
    const session = readJson<{ userProfiler: string }>(path.join(dir, 'session.json'));
    expect(session.userProfiler).toContain('own_profiler.py:7');
    const names = sliceNames((await openProfile(dir)).profile);
    expect(names.has('aten::tanh')).toBe(true);
    expect(names.has('aten::sigmoid')).toBe(false);
  });
});

function cli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin', 'flagprof.js'), ...args],
      { cwd },
      (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

describe('flagprof profile', () => {
  it("prints the summary JSON and the session folder, and exits with the script's code", async () => {
    const out = path.join(tempDir('cli'), 'run');
    const { code, stdout, stderr } = await cli(
      [
        'profile',
        '--python',
        PYTHON,
        '--mode',
        'cpu',
        '--out',
        out,
        '--json',
        '--',
        path.join(SCRIPTS, 'exit_three.py'),
      ],
      tempDir('cwd'),
    );
    expect(code).toBe(3);
    const summary = JSON.parse(stdout) as {
      ops: { name: string }[];
      lines: { exact: boolean; file: string }[];
    };
    expect(summary.ops.some((o) => o.name === 'aten::relu')).toBe(true);
    expect(summary.lines.length).toBeGreaterThan(0);
    expect(summary.lines.every((l) => l.exact && l.file === path.join(SCRIPTS, 'exit_three.py'))).toBe(true);
    expect(stderr).toContain(`flagprof: session folder: ${out}`);
  });

  it('without torch: a clear message with the fix', async () => {
    const python = pythonWithoutTorch();
    const { code, stderr } = await cli(
      ['profile', '--python', python, '--', path.join(SCRIPTS, 'no_torch_needed.py')],
      tempDir('cwd'),
    );
    expect(code).toBe(0);
    expect(stderr).toContain(
      `flagprof: ${python} has no torch, so nothing was profiled; install torch into that interpreter`,
    );
  });

  it('bad input is one line and exit 2', async () => {
    const missing = await cli(['profile', '--', 'no_such_script.py'], tempDir('cwd'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('flagprof: no_such_script.py: no such file\n');
    const badMode = await cli(
      ['profile', '--mode', 'fast', '--', path.join(SCRIPTS, 'exit_three.py')],
      tempDir('cwd'),
    );
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toContain("--mode: expected one of auto, kineto, agent, cpu, got 'fast'");
    const noPython = await cli(
      ['profile', '--python', '/nonexistent/python', '--', path.join(SCRIPTS, 'exit_three.py')],
      tempDir('cwd'),
    );
    expect(noPython.code).toBe(2);
    expect(noPython.stderr).toContain(
      "the configured Python interpreter '/nonexistent/python' was not found",
    );
  });
});
