/**
 * `flagprof profile -- torchrun --nproc-per-node 2 ...`: a real 2-rank CPU job with the gloo backend
 * (test/fixtures/launch/ddp_gloo.py). Every worker is profiled into SESSION/ranks/<RANK>/ with its ops on the
 * script's exact lines; `summary --ranks` sets the ranks side by side with their gloo collective time; Ctrl-C
 * reaches every rank, and each keeps its profile.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProfile } from '../../extension/capture/open';
import { openRun } from '../../extension/capture/merged';
import { openRanks } from '../../extension/capture/ranks';
import { analyze } from '../../extension/analysis/analyze';
import type { Profile } from '../../extension/model/profile';
import { isOpKind } from '../../extension/shared/kinds';
import { readJson, requirePython, tempDir } from '../helpers/agent';
import { buildCli, cleanupCliRuns, runCli } from '../helpers/cli';
import { DDP_SCRIPT, TORCHRUN_TIMEOUT, profileRanks } from '../helpers/torchrun';

const SCRIPT = DDP_SCRIPT;
const TIMEOUT = TORCHRUN_TIMEOUT;

function lineOf(text: string): number {
  return (
    readFileSync(SCRIPT, 'utf8')
      .split('\n')
      .findIndex((l) => l.includes(text)) + 1
  );
}

/** Names of the ops with the script's file:line as an exact (expression) frame of their call chain. */
function opsOnLine(profile: Profile, line: number): Set<string> {
  const names = new Set<string>();
  for (let i = 0; i < profile.slices.length; i++) {
    if (!isOpKind(profile.slices.kind[i])) continue;
    const chain = profile.sites?.get(profile.slices.externalId[i]) ?? [];
    if (chain.some((f) => f.file === SCRIPT && f.line === line && f.kind === undefined))
      names.add(profile.nameOf(i));
  }
  return names;
}

beforeAll(() => {
  requirePython();
  buildCli();
});
afterAll(cleanupCliRuns);

describe('flagprof profile -- torchrun', () => {
  const out = path.join(tempDir('ranks'), 'session');
  let run: Awaited<ReturnType<typeof profileRanks>>;

  beforeAll(async () => {
    run = await profileRanks(out, ['--steps', '3']);
  }, TIMEOUT);

  it('runs every rank and says the session is multi-process', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('rank 0 of 2');
    expect(run.stdout).toContain('rank 1 of 2');
    const record = readJson<{ multiProcess: { script: string; parts: { rank: number; folder: string }[] } }>(
      path.join(out, 'session.json'),
    );
    expect(record.multiProcess.script).toBe(SCRIPT);
    expect(record.multiProcess.parts).toEqual([
      { rank: 0, folder: 'ranks/0' },
      { rank: 1, folder: 'ranks/1' },
    ]);
    expect(run.stdout).toMatch(/== rank 0: wall/);
    expect(run.stdout).toMatch(/== rank 1: wall/);
  });

  it('puts each rank’s ops on the script’s exact lines', async () => {
    const ranks = await openRanks(out);
    expect(ranks.map((r) => r.rank)).toEqual(['0', '1']);
    for (const rank of ranks) {
      const profile = rank.opened!.profile;
      const session = profile.metadata.session as { rank: { rank: number; worldSize: number } };
      expect(session.rank).toMatchObject({ rank: Number(rank.rank), worldSize: 2 });
      expect(opsOnLine(profile, lineOf('loss = model(x)'))).toContain('aten::addmm');
      expect(opsOnLine(profile, lineOf('dist.all_reduce(total)'))).toContain('c10d::allreduce_');
    }
  });

  it('opens as rank 0 by default', async () => {
    const { profile } = await openProfile(out);
    expect((profile.metadata.session as { rank: { rank: number } }).rank.rank).toBe(0);
  });

  it('opens whole as one run: each rank a track group, its ops on their lines, the lines summed', async () => {
    const ranks = await openRanks(out);
    const { profile } = await openRun(out);
    const groups = new Set(profile.tracks.filter((t) => t.sliceCount > 0).map((t) => t.processName));
    expect(groups).toEqual(new Set(['Rank 0', 'Rank 1']));
    const parts = ranks.map((r) => r.opened!.profile);
    expect(profile.slices.length).toBe(parts[0].slices.length + parts[1].slices.length);
    const line = lineOf('dist.all_reduce(total)');
    expect(opsOnLine(profile, line)).toContain('c10d::allreduce_');
    const onLine = (p: Profile) =>
      analyze(p).lines.find((l) => l.file === SCRIPT && l.line === line && l.kind === undefined)!;
    const [zero, one] = parts.map(onLine);
    const both = onLine(profile);
    expect(both.ops).toBe(zero.ops + one.ops);
    expect(both.cpuSelfNs).toBeCloseTo(zero.cpuSelfNs + one.cpuSelfNs, 0);
    // The launcher's own record speaks for the run.
    expect(profile.metadata.session).toMatchObject({ multiProcess: { script: SCRIPT } });
  });

  it(
    'puts every rank in the HTML report of the session',
    async () => {
      const html = path.join(tempDir('ranks-report'), 'run.html');
      const report = await runCli(['report', out, '--out', html], { timeoutMs: TIMEOUT });
      expect(report.code, report.stderr).toBe(0);
      const { profile } = await openRun(out);
      const zero = (await openProfile(out)).profile;
      expect(profile.slices.length).toBeGreaterThan(zero.slices.length);
      expect(report.stderr).toContain(`${profile.slices.length.toLocaleString('en-US')} slices`);
    },
    TIMEOUT,
  );

  it(
    'sets the ranks side by side with their gloo collective time (summary --ranks)',
    async () => {
      const json = await runCli(['summary', out, '--ranks', '--json'], { timeoutMs: TIMEOUT });
      expect(json.code, json.stderr).toBe(0);
      const rows = (
        JSON.parse(json.stdout) as {
          ranks: { rank: string; collective_us: number; cpu_ops_us: number; wall_s: number }[];
        }
      ).ranks;
      expect(rows.map((r) => r.rank)).toEqual(['0', '1']);
      for (const row of rows) {
        expect(row.collective_us).toBeGreaterThan(0);
        expect(row.collective_us).toBeLessThan(row.cpu_ops_us);
        expect(row.wall_s).toBeGreaterThan(0);
      }
      const text = await runCli(['summary', out, '--ranks'], { timeoutMs: TIMEOUT });
      expect(text.stdout).toMatch(/^0( \(slowest\))? +[\d.]+ s/m);
      expect(text.stdout).toMatch(/^1( \(slowest\))? +[\d.]+ s/m);
      const slowest = rows.reduce((a, b) => (b.wall_s > a.wall_s ? b : a));
      expect(text.stdout).toContain(`slowest rank: ${slowest.rank}`);
    },
    TIMEOUT,
  );

  it(
    'refuses --ranks for a session of one process',
    async () => {
      const single = await runCli(['summary', path.join(out, 'ranks', '0'), '--ranks'], {
        timeoutMs: TIMEOUT,
      });
      expect(single.code).toBe(2);
      expect(single.stderr).toContain('not a multi-process session');
    },
    TIMEOUT,
  );
});

describe('a step schedule on a torchrun job', () => {
  it(
    'reaches every worker: each rank records the same steps, counted at its own optimizer steps',
    async () => {
      const out = path.join(tempDir('ranks-schedule'), 'session');
      const run = await profileRanks(out, ['--steps', '5'], ['--schedule', '1,0,2,1']);
      expect(run.code, run.stderr).toBe(0);
      const ranks = await openRanks(out);
      expect(ranks).toHaveLength(2);
      for (const rank of ranks) {
        const profile = rank.opened!.profile;
        const steps = new Set<string>();
        for (let i = 0; i < profile.slices.length; i++) {
          const name = profile.nameOf(i);
          if (name.startsWith('ProfilerStep#')) steps.add(name);
        }
        expect([...steps].sort()).toEqual(['ProfilerStep#1', 'ProfilerStep#2']);
      }
    },
    TIMEOUT,
  );
});

describe('Ctrl-C of a torchrun job', () => {
  it(
    'reaches every rank, and each keeps the profile it captured',
    async () => {
      const out = path.join(tempDir('ranks-int'), 'session');
      const started = profileRanks(out, ['--steps', '1000000']);
      // Once both ranks have written a segment, the job is interrupted as a terminal's Ctrl-C would.
      const deadline = Date.now() + TIMEOUT - 60_000;
      const written = (rank: number) => existsSync(path.join(out, 'ranks', String(rank), 'sites.json'));
      while (!(written(0) && written(1)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));
      expect(written(0) && written(1)).toBe(true);
      const cli = await findCli(out);
      process.kill(cli, 'SIGINT');
      const run = await started;
      expect(run.code).toBe(130);
      for (const rank of await openRanks(out)) {
        const session = rank.opened!.profile.metadata.session as { status: string; exitCode: number };
        expect(session).toMatchObject({ status: 'interrupted', exitCode: 130 });
        expect(opsOnLine(rank.opened!.profile, lineOf('loss = model(x)')).size).toBeGreaterThan(0);
      }
    },
    TIMEOUT,
  );
});

describe('a rank killed mid-run', () => {
  it(
    'keeps the segments it wrote, and the table still shows it',
    async () => {
      const out = path.join(tempDir('ranks-kill'), 'session');
      const started = profileRanks(out, ['--steps', '1000000']);
      // Both ranks past their second segment: a rank still importing torch when the job ends has nothing to keep,
      // and on a loaded machine the first segment may end before the training loop starts.
      const written = (rank: number) => existsSync(path.join(out, 'ranks', String(rank), 'sites.2.json'));
      const deadline = Date.now() + TIMEOUT - 60_000;
      while (!(written(0) && written(1)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));
      const pid = readJson<{ agent: { pid: number } }>(path.join(out, 'ranks', '1', 'session.json')).agent
        .pid;
      process.kill(pid, 'SIGKILL');
      const run = await started;
      // torchrun ends the job when one worker dies.
      expect(run.code).not.toBe(0);
      const [zero, one] = await openRanks(out);
      expect((one.opened!.profile.metadata.session as { status: string }).status).toBe('lost');
      expect(opsOnLine(one.opened!.profile, lineOf('loss = model(x)')).size).toBeGreaterThan(0);
      expect(zero.problem).toBeUndefined();
      const table = await runCli(['summary', out, '--ranks'], { timeoutMs: TIMEOUT });
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/^1( \(slowest\))? +[\d.]+ s/m);
    },
    TIMEOUT,
  );
});

/** The pid of the CLI writing OUT: the lock it holds on the session folder. */
async function findCli(out: string): Promise<number> {
  return Number(readFileSync(path.join(out, '.flagprof.lock'), 'utf8').trim());
}
