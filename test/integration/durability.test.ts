/**
 * Fault injection: a real Python + torch run of test/fixtures/scripts/long_run.py is interrupted in every way a
 * user's run ends badly — Ctrl-C/Cancel, SIGTERM, a closed terminal, SIGKILL of the Python process or of the
 * launcher, os._exit, a segfault, a full disk, two runs into one folder — and each scenario asserts the exit code,
 * that the kept session opens (`flagprof summary` works on it), and how many seconds of capture it kept against how
 * long the run had been going.
 *
 * DURABILITY_RUN_S sets the run length (default 8 s) and DURABILITY_SEGMENT_S the segment length (default 1 s); the
 * table of what survived is printed at the end (run with DURABILITY_RUN_S=60 DURABILITY_SEGMENT_S=5 for the
 * product's defaults).
 */
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionBusyError, startCapture, type CaptureRun } from '../../extension/capture/launcher';
import { openProfile } from '../../extension/capture/open';
import { isOpKind } from '../../extension/model/profile';
import { launch, PYTHON, readJson, requirePython, ROOT, tempDir, type Captured } from '../helpers/agent';

const RUN_S = Number(process.env.DURABILITY_RUN_S ?? 8);
const SEGMENT_S = Number(process.env.DURABILITY_SEGMENT_S ?? 1);
/** Start-up of the window, one op in flight, timer granularity: what a kill may cost beyond the last segment. */
const SLACK_S = 1.5;
/**
 * A kill loses the segment in progress. In the run's wall time the pause while the segment before it was written
 * counts too (a dense loop spends about as long writing a segment as recording it): expectKept adds that pause,
 * measured by the agent (session.json window.flushes).
 */
const KILL_LOSS_S = SEGMENT_S + SLACK_S;
const CLI = path.join(ROOT, 'bin', 'flagprof.js');
const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'scripts', 'long_run.py');
const TIMEOUT = (RUN_S + 60) * 1000;

interface Row {
  scenario: string;
  exitCode: number;
  runS: number;
  keptS: number;
  segments: number;
}
const table: Row[] = [];

/** Every session of this file lives in one scratch folder, removed at the end. */
const SCRATCH = tempDir('durability');
let made = 0;
function freshDir(name = 'session'): string {
  return path.join(SCRATCH, `${name}-${++made}`);
}

beforeAll(() => {
  requirePython();
  if (!existsSync(path.join(ROOT, 'dist', 'cli.js')))
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT });
});

afterAll(() => {
  rmSync(SCRATCH, { recursive: true, force: true });
  if (table.length === 0) return;
  const lines = table.map(
    (r) =>
      `| ${r.scenario} | ${r.exitCode} | ${r.runS.toFixed(1)} s | ${r.keptS.toFixed(1)} s | ${r.segments} |`,
  );
  console.log(
    [
      `durability (segment ${SEGMENT_S} s):`,
      '| scenario | exit | ran until the fault | capture kept | segments |',
      '|---|---|---|---|---|',
      ...lines,
    ].join('\n'),
  );
});

/** Seconds from the first op to the end of the last one in the kept session. */
async function keptSeconds(dir: string): Promise<{ keptS: number; ops: number }> {
  const profile = (await openProfile(dir)).profile;
  const s = profile.slices;
  let first = Infinity;
  let last = -Infinity;
  let ops = 0;
  for (let i = 0; i < s.length; i++) {
    if (!isOpKind(s.kind[i])) continue;
    ops++;
    first = Math.min(first, s.start[i]);
    last = Math.max(last, s.start[i] + s.dur[i]);
  }
  return { keptS: ops ? (last - first) / 1e9 : 0, ops };
}

/** The longest pause of the script while a segment was written, as the agent recorded it. */
function longestPauseS(dir: string): number {
  const flushes = readJson<{ window?: { flushes?: [string, string][] } | null }>(
    path.join(dir, 'session.json'),
  ).window?.flushes;
  return Math.max(0, ...(flushes ?? []).map(([a, b]) => Number(BigInt(b) - BigInt(a)) / 1e9));
}

/** `flagprof profile` of long_run.py into DIR, as a user runs it from a terminal. */
function spawnProfile(dir: string): ChildProcessWithoutNullStreams {
  const args = ['profile', '--python', PYTHON, '--mode', 'cpu', '--segment', String(SEGMENT_S), '--out', dir];
  return spawn(process.execPath, [CLI, ...args, '--', SCRIPT, String(RUN_S)], { stdio: 'pipe' });
}

/** The session opens through the CLI too: exit 0 and the summary names the script's op. */
function summaryWorks(dir: string): void {
  const out = execFileSync(process.execPath, [CLI, 'summary', dir], { encoding: 'utf8' });
  expect(out).toContain('aten::tanh');
}

function noTemporaries(dir: string): void {
  expect(readdirSync(dir).filter((n) => n.endsWith('.tmp') || n.startsWith('.segment'))).toEqual([]);
}

/** Runs long_run.py and calls `fault` once the script has run `atS` seconds (its own "tick" lines). */
function runUntil(
  atS: number,
  fault: (run: CaptureRun) => void,
  extra: { ending?: string; sessionDir?: string; termAfterMs?: number } = {},
): Promise<Captured & { faultAtS: number }> {
  let readyAt = 0;
  let faultAtS = 0;
  return launch(
    SCRIPT,
    {
      args: [String(RUN_S), extra.ending ?? 'normal'],
      segmentS: SEGMENT_S,
      sessionDir: extra.sessionDir ?? freshDir(),
      ...(extra.termAfterMs ? { termAfterMs: extra.termAfterMs } : {}),
    },
    (run, output) => {
      const timer = setInterval(() => {
        const text = output.stdout();
        if (!readyAt && text.includes('ready')) readyAt = Date.now();
        if (readyAt && Date.now() - readyAt >= atS * 1000) {
          clearInterval(timer);
          faultAtS = (Date.now() - readyAt) / 1000;
          fault(run);
        }
      }, 20);
      void run.done.finally(() => clearInterval(timer));
    },
  ).then((captured) => ({ ...captured, faultAtS }));
}

async function expectKept(
  scenario: string,
  captured: Captured,
  runS: number,
  exitCode: number,
  lossS: number,
): Promise<void> {
  expect(captured.result.exitCode, captured.stderr.slice(-2000)).toBe(exitCode);
  noTemporaries(captured.dir);
  const { keptS, ops } = await keptSeconds(captured.dir);
  expect(ops).toBeGreaterThan(0);
  // A signal that comes while a segment is written waits for it: the script was paused then, so the wall time
  // of that pause holds no ops to keep.
  expect(keptS).toBeGreaterThanOrEqual(runS - lossS - longestPauseS(captured.dir));
  summaryWorks(captured.dir);
  const session = readJson<{ trace?: { segments?: number; sealed?: boolean } }>(
    path.join(captured.dir, 'session.json'),
  );
  expect(session.trace?.sealed).toBe(true);
  table.push({ scenario, exitCode, runS, keptS, segments: session.trace?.segments ?? 0 });
}

describe('durability: what was captured survives', () => {
  for (const fraction of [0.3, 0.7]) {
    it(
      `Cancel (SIGINT) at ${Math.round(fraction * 100)}% of the run: exit 130, everything up to the cancel kept`,
      async () => {
        const captured = await runUntil(RUN_S * fraction, (run) => run.cancel());
        expect(captured.result.cancelled).toBe(true);
        expect(readJson<{ status: string }>(path.join(captured.dir, 'session.json')).status).toBe(
          'interrupted',
        );
        // Cancel writes the segment in progress too: only start-up and the op in flight are lost.
        await expectKept(`SIGINT at ${fraction * RUN_S} s`, captured, captured.faultAtS, 130, SLACK_S);
      },
      TIMEOUT,
    );
  }

  it(
    'SIGTERM: exit 143, the profile kept',
    async () => {
      const captured = await runUntil(RUN_S / 2, (run) => run.cancel('SIGTERM'));
      await expectKept('SIGTERM', captured, captured.faultAtS, 143, SLACK_S);
    },
    TIMEOUT,
  );

  it(
    'a closed terminal (SIGHUP): exit 129, the profile kept',
    async () => {
      const captured = await runUntil(RUN_S / 2, (run) => run.cancel('SIGHUP'));
      await expectKept('SIGHUP', captured, captured.faultAtS, 129, SLACK_S);
    },
    TIMEOUT,
  );

  it(
    'a script that ignores Ctrl-C: Cancel goes on to SIGTERM (segments still being written do not hold it off)',
    async () => {
      const captured = await runUntil(RUN_S / 4, (run) => run.cancel(), {
        ending: 'ignore_sigint',
        termAfterMs: 2000,
      });
      expect(captured.result.cancelled).toBe(true);
      await expectKept('Cancel of a script ignoring SIGINT', captured, captured.faultAtS + 2, 143, SLACK_S);
    },
    TIMEOUT,
  );

  it(
    'SIGKILL of the Python process: exit 137, all but the segment in progress kept, the trace sealed by the launcher',
    async () => {
      const captured = await runUntil(RUN_S * 0.6, (run) => process.kill(run.pid!, 'SIGKILL'));
      expect(captured.result.seal?.sealed).toBe(true);
      const session = readJson<{ status: string; notes: string[] }>(path.join(captured.dir, 'session.json'));
      expect(session.status).toBe('lost');
      expect(session.notes.join('\n')).toContain('killed by SIGKILL');
      await expectKept('SIGKILL of python', captured, captured.faultAtS, 137, KILL_LOSS_S);
    },
    TIMEOUT,
  );

  it(
    'os._exit(5) in the script: exit 5, the whole run kept',
    async () => {
      const captured = await launch(SCRIPT, {
        args: [String(RUN_S / 2), 'os_exit'],
        segmentS: SEGMENT_S,
        sessionDir: freshDir(),
      });
      expect(readJson<{ status: string }>(path.join(captured.dir, 'session.json')).status).toBe('exited');
      await expectKept('os._exit(5)', captured, RUN_S / 2, 5, SLACK_S);
    },
    TIMEOUT,
  );

  it(
    'a segfault in the script: exit 139, all but the last segment kept',
    async () => {
      const captured = await launch(SCRIPT, {
        args: [String(RUN_S / 2), 'segfault'],
        segmentS: SEGMENT_S,
        sessionDir: freshDir(),
      });
      expect(captured.result.seal?.sealed).toBe(true);
      await expectKept('segfault', captured, RUN_S / 2, 139, KILL_LOSS_S);
    },
    TIMEOUT,
  );

  it(
    'SIGKILL of the launcher: the Python run ends with it (no orphan) and writes its profile',
    async () => {
      const dir = freshDir();
      const cli = spawnProfile(dir);
      let stdout = '';
      cli.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      let stderr = '';
      cli.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const started = Date.now();
      while (!stdout.includes('ready')) {
        if (Date.now() - started > 60_000)
          throw new Error(`the script never started: ${stderr.slice(-1000)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const readyAt = Date.now();
      await new Promise((r) => setTimeout(r, (RUN_S / 2) * 1000));
      const faultAtS = (Date.now() - readyAt) / 1000;
      cli.kill('SIGKILL');
      const agentPid = readJson<{ agent: { pid: number } }>(path.join(dir, 'session.json')).agent.pid;
      // The agent is told by the kernel (PR_SET_PDEATHSIG) and finishes its profile: wait for it to go.
      const deadline = Date.now() + 60_000;
      for (;;) {
        try {
          process.kill(agentPid, 0);
        } catch {
          break;
        }
        if (Date.now() > deadline) throw new Error(`the Python run (pid ${agentPid}) outlived its launcher`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const session = readJson<{ status: string; exitCode: number }>(path.join(dir, 'session.json'));
      expect(session.status).toBe('terminated');
      expect(session.exitCode).toBe(143);
      await expectKept(
        'SIGKILL of the launcher',
        { dir, stderr: '', result: { exitCode: 143 } } as unknown as Captured,
        faultAtS,
        143,
        SLACK_S,
      );
    },
    TIMEOUT,
  );

  it(
    'two runs into one folder: the second is refused and the first keeps its profile',
    async () => {
      const dir = freshDir();
      const first = runUntil(
        1,
        (run) => {
          expect(() =>
            startCapture({ python: PYTHON, script: SCRIPT, args: ['1'], sessionDir: dir, mode: 'cpu' }),
          ).toThrow(SessionBusyError);
          run.cancel();
        },
        { sessionDir: dir },
      );
      const captured = await first;
      await expectKept('second run into the same folder', captured, captured.faultAtS, 130, SLACK_S);
    },
    TIMEOUT,
  );
});

/** Room for a few segments: a segment's export is written uncompressed first (about 2 MB per second here). */
const DISK_MB = Math.max(16, 12 * SEGMENT_S);

describe('durability: a full disk', () => {
  const mountPoint = freshDir('disk');
  let mounted = false;
  beforeAll(() => {
    mkdirSync(mountPoint, { recursive: true });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK_MB}m`, 'tmpfs', mountPoint], {
        stdio: 'ignore',
      });
      mounted = true;
    } catch {
      mounted = false;
    }
  });
  afterAll(() => {
    if (mounted) execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
  });

  it(
    "the disk fills up mid-run: the script's exit code, one clear line, no temporary file left, what was written opens",
    async (context) => {
      if (!mounted) {
        context.skip('mounting a tmpfs needs root');
        return;
      }
      const dir = path.join(mountPoint, 'session');
      const fillAtS = RUN_S / 2;
      let filled = false;
      const captured = await runUntil(
        fillAtS,
        () => {
          // Another process takes the rest of the disk, as a full disk happens in real life.
          // Written in chunks until the disk refuses: the run keeps writing meanwhile, so the free space measured
          // a moment before is no longer there to take in one write.
          fillDisk(path.join(mountPoint, 'filler'));
          filled = statfsSync(mountPoint).bavail === 0;
        },
        { sessionDir: dir },
      );
      expect(filled).toBe(true);
      expect(captured.result.exitCode, captured.stderr.slice(-2000)).toBe(0);
      expect(captured.stdout).toContain('finished');
      const full = captured.stderr.split('\n').filter((l) => l.includes('is full'));
      expect(full).toHaveLength(1);
      expect(captured.stderr).not.toContain('Traceback');
      noTemporaries(dir);
      const { keptS, ops } = await keptSeconds(dir);
      expect(ops).toBeGreaterThan(0);
      expect(keptS).toBeGreaterThanOrEqual(captured.faultAtS - KILL_LOSS_S - longestPauseS(dir));
      summaryWorks(dir);
      const session = readJson<{ trace: { segments: number }; notes: string[] }>(
        path.join(dir, 'session.json'),
      );
      expect(session.notes.join('\n')).toContain('is full');
      table.push({
        scenario: `disk full at ${captured.faultAtS.toFixed(1)} s`,
        exitCode: 0,
        runS: captured.faultAtS,
        keptS,
        segments: session.trace.segments,
      });
    },
    TIMEOUT,
  );
});

describe('flagprof profile: signals and bad input at the command line', () => {
  function cli(args: string[]): { status: number | null; stderr: string } {
    try {
      execFileSync(process.execPath, [CLI, 'profile', ...args], { encoding: 'utf8', stdio: 'pipe' });
      return { status: 0, stderr: '' };
    } catch (error) {
      const e = error as { status: number | null; stderr: string };
      return { status: e.status, stderr: e.stderr };
    }
  }

  it(
    'SIGTERM to flagprof reaches the script as SIGTERM: exit 143, the profile kept',
    async () => {
      const dir = freshDir();
      const child = spawnProfile(dir);
      let stdout = '';
      let sent = false;
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        // Once: a second signal means "end it now".
        if (!sent && stdout.includes('tick 2')) {
          sent = true;
          child.kill('SIGTERM');
        }
      });
      child.stderr.resume();
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      expect(code).toBe(143);
      expect(stdout).toContain(`session: ${dir}`);
      expect(readJson<{ status: string }>(path.join(dir, 'session.json')).status).toBe('terminated');
      const { ops } = await keptSeconds(dir);
      expect(ops).toBeGreaterThan(0);
    },
    TIMEOUT,
  );

  it('an interpreter started through a wrapper that forks (not exec) still profiles', () => {
    const dir = freshDir('wrapped');
    mkdirSync(dir, { recursive: true });
    const wrapper = path.join(dir, 'python-wrapper');
    writeFileSync(wrapper, `#!/bin/sh\n"${PYTHON}" "$@"\nexit $?\n`, { mode: 0o755 });
    const out = path.join(dir, 'session');
    const { status, stderr } = cli(['--python', wrapper, '--mode', 'cpu', '--out', out, '--', SCRIPT, '1']);
    expect(status, stderr.slice(-1000)).toBe(0);
    expect(readJson<{ status: string }>(path.join(out, 'session.json')).status).toBe('completed');
  });

  it('an interpreter that does not run the agent (--python /bin/true): exit 2 and one line saying so', () => {
    const { status, stderr } = cli(['--python', '/bin/true', '--out', freshDir(), '--', SCRIPT]);
    expect(status).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('did not run the capture agent');
  });

  it('--delay 1e12: exit 2 and one line naming the limit, no Python error', () => {
    const { status, stderr } = cli(['--python', PYTHON, '--delay', '1e12', '--', SCRIPT]);
    expect(status).toBe(2);
    expect(stderr).toContain('--delay');
    expect(stderr).toContain('31536000');
    expect(stderr).not.toContain('OverflowError');
  });

  it('a syntax error is reported before torch is imported: exit 1, as Python prints it', () => {
    const dir = freshDir('broken');
    mkdirSync(dir, { recursive: true });
    const script = path.join(dir, 'broken.py');
    writeFileSync(script, 'import torch\nx = (1,\n');
    const { status, stderr } = cli(['--python', PYTHON, '--out', path.join(dir, 's'), '--', script]);
    expect(status).toBe(1);
    expect(stderr).toContain('SyntaxError');
    expect(stderr).not.toContain('flagprof_agent');
    // torch was never imported: the record of the run says so.
    const session = readJson<{ torch: unknown; status: string; exception: unknown }>(
      path.join(dir, 's', 'session.json'),
    );
    expect(session.torch).toBeNull();
    expect(session.status).toBe('exception');
    // The editor shows it as a Problem at the line Python names.
    expect(session.exception).toMatchObject({ type: 'SyntaxError', file: script, line: 2, column: 5 });
  });
});

describe('a damaged part of a kept session', () => {
  it(
    'a truncated sites file costs its own segment exact lines, with a warning; the session still opens',
    async () => {
      const captured = await launch(SCRIPT, { args: ['3'], segmentS: 1, sessionDir: freshDir() });
      expect(captured.result.exitCode).toBe(0);
      const parts = readdirSync(captured.dir).filter((n) => /^sites(\.\d+)?\.json$/.test(n));
      expect(parts.length).toBeGreaterThan(1);
      const intact = (await openProfile(captured.dir)).profile.sites?.size ?? 0;
      const damaged = path.join(captured.dir, 'sites.2.json');
      const text = readFileSync(damaged, 'utf8');
      writeFileSync(damaged, text.slice(0, Math.floor(text.length / 2)));
      const profile = (await openProfile(captured.dir)).profile;
      expect(profile.warnings.map((w) => w.message).join('\n')).toMatch(
        /sites\.2\.json is damaged at byte \d+/,
      );
      const kept = profile.sites?.size ?? 0;
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(intact);
      summaryWorks(captured.dir);
    },
    TIMEOUT,
  );
});

/** Takes every free block of the file system FILE is on, as another process filling the disk would. */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(1 << 20);
  try {
    for (let size = chunk.length; size >= 512;) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        size >>= 1; // the last blocks: smaller writes until not even 512 bytes fit
      }
    }
  } finally {
    closeSync(fd);
  }
}
