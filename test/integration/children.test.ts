/**
 * Child processes of a profiled run, each a part of its session (the agent's children.py): DataLoader workers
 * (forked, Linux's default), multiprocessing children started with spawn, and a torchrun job whose ranks each have a
 * DataLoader worker. Real Python and torch, through `flagprof profile`; the session then opens as one merged
 * profile (capture/merged.ts), every process a track group, the workers' ops on the dataset's lines.
 */
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { buildSummary } from '../../extension/analysis/summary';
import { openRun } from '../../extension/capture/merged';
import type { Profile } from '../../extension/model/profile';
import { tempDir } from '../helpers/agent';
import { ARTIFACTS, launchChromium } from '../helpers/browser';
import { runCli, profilingSuite } from '../helpers/cli';
import { PYTHON, ROOT } from '../helpers/paths';
import { TORCHRUN, TORCHRUN_TIMEOUT } from '../helpers/torchrun';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'children');
const LOADER = path.join(FIXTURES, 'dataloader_workers.py');
const SPAWNED = path.join(FIXTURES, 'spawned_children.py');
const TIMEOUT = 300_000;
const SCRATCH = tempDir('children');
let made = 0;

profilingSuite(SCRATCH);

async function profile(script: string, flags: string[] = [], env?: Record<string, string>, cwd?: string) {
  const out = path.join(SCRATCH, `session-${++made}`);
  const result = await runCli(
    ['profile', '--out', out, '--python', PYTHON, '--mode', 'cpu', ...flags, '--', script],
    { timeoutMs: TIMEOUT, env, cwd },
  );
  return { ...result, out };
}

function lineOf(file: string, text: string): number {
  return (
    readFileSync(file, 'utf8')
      .split('\n')
      .findIndex((l) => l.includes(text)) + 1
  );
}

interface ChildSession {
  status: string;
  exitCode: number | null;
  process: { start: string; parentPid: number; label: string | null };
  trace: { segments: number; sealed: boolean };
  mode: { chosen: string; reason: string };
}

function childSessions(folder: string): { pid: string; session: ChildSession }[] {
  const procs = path.join(folder, 'procs');
  return readdirSync(procs).map((pid) => ({
    pid,
    session: JSON.parse(readFileSync(path.join(procs, pid, 'session.json'), 'utf8')) as ChildSession,
  }));
}

/** How many slices named NAME lie on tracks of the track group whose name starts with GROUP. */
function countInGroup(profile: Profile, name: string, group: RegExp): number {
  let count = 0;
  for (let i = 0; i < profile.slices.length; i++)
    if (profile.nameOf(i) === name && group.test(profile.tracks[profile.slices.track[i]].processName))
      count++;
  return count;
}

describe('DataLoader workers', () => {
  it(
    'each of the 2 forked workers is a part of the session, and the merged profile puts their ops on the dataset lines',
    async () => {
      const run = await profile(LOADER);
      expect(run.code, run.stderr).toBe(0);
      const children = childSessions(run.out);
      expect(children.map((c) => c.session.process.label).sort()).toEqual([
        'DataLoader worker 0',
        'DataLoader worker 1',
      ]);
      for (const { session } of children) {
        expect(session.process.start).toBe('fork');
        expect(session.status).toBe('exited');
        expect(session.trace.sealed).toBe(true);
        expect(session.mode.reason).toMatch(/forked child process/);
      }
      const { profile: merged } = await openRun(run.out);
      const groups = new Set(merged.tracks.map((t) => t.processName));
      expect(groups).toContain('Main process');
      for (const { pid, session } of children)
        expect(groups).toContain(`${session.process.label} · pid ${pid}`);
      // The dataset has 16 items: each one's `x @ x` ran once, in one of the workers, never in the main process.
      expect(countInGroup(merged, 'aten::matmul', /^DataLoader worker /)).toBe(16);
      expect(countInGroup(merged, 'aten::matmul', /^Main process$/)).toBe(0);
      for (const { pid } of children)
        expect(countInGroup(merged, 'aten::matmul', new RegExp(`pid ${pid}$`))).toBeGreaterThan(0);
      const lines = buildSummary(analyze(merged), { steps: false, memory: false }).lines;
      const matmulLine = lines.find((l) => l.file === LOADER && l.line === lineOf(LOADER, 'return x @ x'));
      expect(matmulLine?.ops).toBe(16);
      expect(matmulLine?.top_ops.map((o) => o.name)).toContain('aten::matmul');
      // The main process's own lines are there too: the model's forward.
      expect(lines.some((l) => l.file === LOADER && l.line === lineOf(LOADER, 'model(batch)'))).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'the summary the run prints, and `flagprof summary SESSION`, count the workers with the main process',
    async () => {
      const run = await profile(LOADER);
      expect(run.code, run.stderr).toBe(0);
      const summary = await runCli(['summary', '--json', run.out], { timeoutMs: 120_000 });
      expect(summary.code, summary.stderr).toBe(0);
      const document = JSON.parse(summary.stdout) as { lines: { file: string; line: number; ops: number }[] };
      expect(
        document.lines.find((l) => l.file === LOADER && l.line === lineOf(LOADER, 'return x @ x'))?.ops,
      ).toBe(16);
      expect(run.stdout).toMatch(new RegExp(`dataloader_workers\\.py:${lineOf(LOADER, 'return x @ x')}\\b`));
    },
    TIMEOUT,
  );

  it(
    "the session's report shows each worker as a track group; a worker's matmul names its line (screenshot)",
    async () => {
      const run = await profile(LOADER);
      expect(run.code, run.stderr).toBe(0);
      const report = path.join(run.out, 'report.html');
      const made = await runCli(['report', run.out, '--out', report], { timeoutMs: 120_000 });
      expect(made.code, made.stderr).toBe(0);
      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
        await page.goto(`file://${report}`);
        await page.waitForFunction(() => window.flagprofTimeline !== undefined);
        const groups = await page.evaluate(() => [
          ...new Set(window.flagprofTimeline!.model.header.tracks.map((t) => t.processName)),
        ]);
        expect(groups[0]).toBe('Main process');
        expect(groups.filter((g) => /^DataLoader worker [01] · pid \d+$/.test(g))).toHaveLength(2);
        await page.locator('#search').click();
        await page.keyboard.type('aten::matmul');
        await page.keyboard.press('Enter');
        await expect.poll(() => page.locator('#search-count').innerText()).toMatch(/^1 of 16\b/);
        expect(await page.locator('#details').innerText()).toContain(
          `dataloader_workers.py:${lineOf(LOADER, 'return x @ x')}`,
        );
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: path.join(ARTIFACTS, 'children-dataloader-timeline.png') });
      } finally {
        await browser.close();
      }
    },
    TIMEOUT,
  );

  it(
    'FLAGPROF_CHILDREN_OFF=1 profiles the main process alone',
    async () => {
      const run = await profile(LOADER, [], { FLAGPROF_CHILDREN_OFF: '1' });
      expect(run.code, run.stderr).toBe(0);
      expect(() => readdirSync(path.join(run.out, 'procs'))).toThrow();
      const { profile: alone } = await openRun(run.out);
      expect(countInGroup(alone, 'aten::matmul', /.*/)).toBe(0);
    },
    TIMEOUT,
  );
});

describe('multiprocessing children started with spawn', () => {
  it(
    'a Pool worker writes its profile, even when the pool ends it with SIGTERM; its ops are on the function it ran',
    async () => {
      const run = await profile(SPAWNED);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toMatch(/Error in sitecustomize|Traceback/);
      const children = childSessions(run.out);
      expect(children.length).toBe(2);
      const written = children.filter((c) => c.session.trace.segments > 0);
      // The pool may hand both tasks to the first worker up; the other is then ended while it still starts.
      expect(written.length).toBeGreaterThanOrEqual(1);
      for (const { session } of written) {
        expect(session.process.start).toBe('spawn');
        expect(session.process.label).toMatch(/^SpawnPoolWorker-\d+$/);
        // Ended by the pool's SIGTERM (the profile is written first), or on its own when the pool's sentinel
        // reached it before.
        expect(['terminated', 'exited']).toContain(session.status);
      }
      const { profile: merged } = await openRun(run.out);
      expect(countInGroup(merged, 'aten::mm', /^SpawnPoolWorker-/)).toBe(2);
      const lines = buildSummary(analyze(merged), { steps: false, memory: false }).lines;
      expect(
        lines.find((l) => l.file === SPAWNED && l.line === lineOf(SPAWNED, 'return float((a @ a)'))?.ops,
      ).toBe(
        // 2 tasks × 3 ops: a @ a, .sum() and float()'s item() (torch.ones is on the line above).
        6,
      );
    },
    TIMEOUT,
  );
});

describe("a child's SIGTERM handler", () => {
  it(
    "knows when the signal comes inside torch's Python tracer (stopping the profiler there deadlocks it)",
    async () => {
      // A Pool worker whose handler stopped the profiler from inside the tracer's callback hung its pool's
      // terminate(): the handler can only wait for a safe moment once the tracer's flag is found in the child too.
      const run = await profile(path.join(FIXTURES, 'tracer_calibrated.py'));
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('worker calibrated: True');
    },
    TIMEOUT,
  );
});

describe('torchrun ranks with DataLoader workers', () => {
  it(
    "each rank's worker is a part of that rank, shown as 'Rank R · DataLoader worker 0'",
    async () => {
      const out = path.join(SCRATCH, `session-${++made}`);
      const run = await runCli(
        ['profile', '--out', out, '--python', PYTHON, '--mode', 'cpu', '--', ...TORCHRUN, 'ddp_loader.py'],
        { cwd: FIXTURES, timeoutMs: TORCHRUN_TIMEOUT - 30_000 },
      );
      expect(run.code, run.stderr).toBe(0);
      for (const rank of ['0', '1']) {
        const children = childSessions(path.join(out, 'ranks', rank));
        expect(children.map((c) => c.session.process.label)).toEqual(['DataLoader worker 0']);
      }
      const { profile: merged } = await openRun(out);
      const groups = [...new Set(merged.tracks.map((t) => t.processName))];
      for (const rank of ['0', '1']) {
        expect(groups).toContain(`Rank ${rank}`);
        expect(groups.some((g) => g.startsWith(`Rank ${rank} · DataLoader worker 0 · pid `))).toBe(true);
        // 4 items, each made by rank R's worker: aten::ones there, never on the rank's own tracks.
        expect(countInGroup(merged, 'aten::ones', new RegExp(`^Rank ${rank} · DataLoader`))).toBe(4);
      }
      // The Ranks overview stays one row per rank: a worker takes part in no collective.
      const ranks = merged.metadata.ranks as { rows: { rank: string }[] } | undefined;
      expect(ranks?.rows.map((r) => r.rank)).toEqual(['0', '1']);
    },
    TORCHRUN_TIMEOUT,
  );
});
