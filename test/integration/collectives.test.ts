/**
 * Collectives across ranks through the command line: `flagprof summary FOLDER --ranks` on a folder of real rank
 * traces (../shared/traces/param_dlrm_v100x8: DLRM, 8 × V100, NCCL), held against an independent computation from
 * the raw files (test/fixtures/collectives/crosscheck.py, stdlib Python); folders of traces named or numbered in
 * other ways; and a real 2-rank gloo job under `flagprof profile -- torchrun`, whose collectives have no device.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { openRun } from '../../extension/capture/merged';
import { resultsModel } from '../../extension/capture/results';
import { requirePython, tempDir } from '../helpers/agent';
import { buildCli, cleanupCliRuns, runCli } from '../helpers/cli';
import { PYTHON, ROOT } from '../helpers/paths';
import { profileRanks } from '../helpers/torchrun';
import { TRACES } from '../helpers/traces';

const DLRM = path.join(TRACES, 'param_dlrm_v100x8');
const CROSSCHECK = path.join(ROOT, 'test', 'fixtures', 'collectives', 'crosscheck.py');
const TIMEOUT = 480_000;

interface RanksJson {
  ranks: {
    rank: string;
    wall_s?: number;
    cpu_ops_us: number;
    communication: {
      device: boolean;
      instances: number;
      union_us: number;
      exposed_us: number;
      exposed_share: number;
      sum_us: number;
      note?: string;
    };
    straggler_count: number;
    wait_caused_us: number;
    wait_suffered_us: number;
  }[];
  collectives: {
    name: string;
    group: string;
    index: number;
    part: 'device' | 'cpu';
    straggler: string;
    max_wait_us: number;
    total_wait_us: number;
    size?: { in_bytes?: number; from: string };
    duration_us: { min: number; median: number; max: number };
    ranks: { rank: string; start_us: number; end_us: number; duration_us: number; wait_us: number }[];
  }[];
  unmatched_collectives: number;
  clock_skew: { reference: string; offsets: { rank: string; offset_us: number }[]; note?: string };
}

interface CrossCheck {
  ranks: Record<string, { union_us: number; exposed_us: number }>;
  collectives: { index: number; starts_us: Record<string, number>; straggler: string; max_wait_us: number }[];
}

/** The project's Python where it is set up, else the system's: the script needs nothing but the stdlib. */
function python(): string {
  return existsSync(PYTHON) ? PYTHON : 'python3';
}

beforeAll(buildCli);
afterAll(cleanupCliRuns);

describe('a folder of rank traces (DLRM, 8 × V100, NCCL)', () => {
  let doc: RanksJson;
  let truth: CrossCheck;

  beforeAll(async () => {
    const run = await runCli(['summary', DLRM, '--ranks', '--json']);
    expect(run.code, run.stderr).toBe(0);
    doc = JSON.parse(run.stdout) as RanksJson;
    truth = JSON.parse(execFileSync(python(), [CROSSCHECK, DLRM], { encoding: 'utf8' })) as CrossCheck;
  });

  it('takes each rank from its trace’s distributedInfo', () => {
    expect(doc.ranks.map((r) => r.rank)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
    expect(Object.keys(truth.ranks).sort()).toEqual(doc.ranks.map((r) => r.rank));
  });

  it('agrees with the independent computation on time in collectives and exposed communication', () => {
    for (const r of doc.ranks) {
      const expected = truth.ranks[r.rank];
      expect(expected.union_us).toBeGreaterThan(0);
      expect(
        Math.abs(r.communication.union_us - expected.union_us),
        `rank ${r.rank} union`,
      ).toBeLessThanOrEqual(1);
      expect(
        Math.abs(r.communication.exposed_us - expected.exposed_us),
        `rank ${r.rank} exposed`,
      ).toBeLessThanOrEqual(1);
      expect(r.communication.device).toBe(true);
      expect(r.communication.exposed_us).toBeLessThanOrEqual(r.communication.union_us);
      expect(r.communication.union_us).toBeLessThanOrEqual(r.communication.sum_us);
    }
  });

  it('agrees on every collective’s straggler and longest wait', () => {
    const device = doc.collectives.filter((c) => c.part === 'device');
    expect(device).toHaveLength(truth.collectives.length);
    // The script numbers the NCCL kernels in time order on each rank; flagprof lists the collectives by rank 0's start.
    expect(truth.collectives).toHaveLength(8);
    device.forEach((c, i) => {
      const expected = truth.collectives[i];
      expect(c.ranks).toHaveLength(8);
      for (const r of c.ranks) {
        // The same kernel: its start, relative in flagprof, is the trace's epoch µs in the script.
        const shift = expected.starts_us['0'] - c.ranks.find((x) => x.rank === '0')!.start_us;
        expect(Math.abs(r.start_us + shift - expected.starts_us[r.rank])).toBeLessThanOrEqual(1);
      }
      expect(c.straggler, `collective ${i}`).toBe(expected.straggler);
      expect(Math.abs(c.max_wait_us - expected.max_wait_us)).toBeLessThanOrEqual(1);
    });
    // The per-rank sums are the collectives' own figures added up.
    for (const r of doc.ranks) {
      const mine = device.filter((c) => c.straggler === r.rank && c.max_wait_us > 0);
      expect(r.straggler_count).toBe(mine.length);
      expect(r.wait_caused_us).toBeCloseTo(
        mine.reduce((t, c) => t + c.total_wait_us, 0),
        6,
      );
    }
  });

  it('shows the same figures in the Results view of the folder opened as one run', async () => {
    const { profile } = await openRun(DLRM);
    const results = resultsModel(analyze(profile), { title: 'dlrm', source: DLRM });
    const rows = results.ranks!.rows;
    expect(rows.map((r) => r.rank)).toEqual(doc.ranks.map((r) => r.rank));
    rows.forEach((row, i) => {
      const cli = doc.ranks[i];
      expect(row.stragglerCount).toBe(cli.straggler_count);
      expect(Math.abs(row.commNs / 1000 - cli.communication.union_us)).toBeLessThan(0.01);
      expect(Math.abs(row.exposedNs / 1000 - cli.communication.exposed_us)).toBeLessThan(0.01);
      expect(Math.abs(row.waitCausedNs / 1000 - cli.wait_caused_us)).toBeLessThan(0.01);
      expect(Math.abs(row.waitSufferedNs / 1000 - cli.wait_suffered_us)).toBeLessThan(0.01);
    });
    const longest = [...doc.collectives].sort((a, b) => b.max_wait_us - a.max_wait_us)[0];
    expect(results.ranks!.collectives[0]).toMatchObject({
      name: `${longest.name} #${longest.index}`,
      straggler: longest.straggler,
    });
  });

  it('names and sizes the collectives from their ops, and sees no clock offset between ranks on one host', () => {
    const names = doc.collectives.map((c) => c.name);
    expect(names.filter((n) => n === 'alltoall_base')).toHaveLength(5);
    expect(names.filter((n) => n === 'allreduce')).toHaveLength(3);
    // rank 0's first all_reduce: nccl:all_reduce of a float tensor of 394241 elements.
    expect(doc.collectives.find((c) => c.name === 'allreduce' && c.index === 0)!.size).toMatchObject({
      in_bytes: 394241 * 4,
      from: 'input',
    });
    expect(doc.clock_skew.note).toBeUndefined();
    for (const o of doc.clock_skew.offsets) expect(Math.abs(o.offset_us)).toBeLessThan(5);
  });

  it('prints the ranks with exposed communication, then the most waited-for collectives', async () => {
    const run = await runCli(['summary', DLRM, '--ranks', '--top', '3']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^rank +wall .*comm +exposed +exposed share +straggler$/m);
    const worst = [...doc.collectives].sort((a, b) => b.max_wait_us - a.max_wait_us)[0];
    expect(run.stdout).toMatch(/^Collectives \(8 matched .*top 3 by the longest wait/m);
    expect(run.stdout).toMatch(
      new RegExp(`^${worst.name} #${worst.index} .* ${worst.straggler} +[\\d.]+ ms$`, 'm'),
    );
    // The table holds three collectives: the header, its rule and three rows up to the next line.
    const table = run.stdout.split('\nCollectives')[1].split('\n').slice(3, 6);
    expect(table.every((line) => /#\d/.test(line))).toBe(true);
    const blamed = doc.ranks.reduce((a, b) => (b.wait_caused_us > a.wait_caused_us ? b : a));
    expect(run.stdout).toContain(
      `most waited-for rank: ${blamed.rank} (started ${blamed.straggler_count} of 8`,
    );
  });

  it('costs about what the traces cost one by one', async () => {
    const one = await runCli(['summary', path.join(DLRM, 'worker0_step_12.1694128201545.pt.trace.json.gz')]);
    const all = await runCli(['summary', DLRM, '--ranks']);
    expect(one.code).toBe(0);
    expect(all.code).toBe(0);
    // Eight traces, each read and analysed once (plus the process's own start, paid once).
    expect(all.ms).toBeLessThan(8 * one.ms * 1.5);
  });
});

/** A small Kineto trace of one rank: one all_reduce and its NCCL kernel, `late` µs after the others'. */
function rankTrace(rank: number | undefined, late: number): string {
  return JSON.stringify({
    ...(rank === undefined ? {} : { distributedInfo: { rank, world_size: 2, backend: 'nccl' } }),
    traceEvents: [
      {
        ph: 'X',
        cat: 'cpu_op',
        name: 'c10d::allreduce_',
        pid: 1,
        tid: 1,
        ts: 1000 + late,
        dur: 20,
        args: {},
      },
      {
        ph: 'X',
        cat: 'cuda_runtime',
        name: 'cudaLaunchKernel',
        pid: 1,
        tid: 1,
        ts: 1005 + late,
        dur: 5,
        args: { correlation: 9 },
      },
      {
        ph: 'X',
        cat: 'kernel',
        name: 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)',
        pid: 0,
        tid: 7,
        ts: 1100 + late,
        dur: 200 - late,
        args: { correlation: 9, device: 0, stream: 7 },
      },
    ],
  });
}

describe('folders of rank traces from elsewhere', () => {
  it('takes the rank from the file name where the traces do not say', async () => {
    const folder = tempDir('rank-names');
    writeFileSync(path.join(folder, 'rank1.json'), rankTrace(undefined, 50));
    writeFileSync(path.join(folder, 'rank0.json'), rankTrace(undefined, 0));
    writeFileSync(path.join(folder, 'notes.txt'), 'not a trace');
    const run = await runCli(['summary', folder, '--ranks', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as RanksJson;
    expect(doc.ranks.map((r) => r.rank)).toEqual(['0', '1']);
    expect(doc.collectives).toHaveLength(1);
    expect(doc.collectives[0]).toMatchObject({ name: 'allreduce', straggler: '1', max_wait_us: 50 });
  });

  it('refuses two traces of one rank, in one line naming both', async () => {
    const folder = tempDir('rank-twice');
    writeFileSync(path.join(folder, 'a.json'), rankTrace(3, 0));
    writeFileSync(path.join(folder, 'b.json'), rankTrace(3, 10));
    const run = await runCli(['summary', folder, '--ranks']);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('two traces of rank 3');
    expect(run.stderr).toMatch(/a\.json and b\.json/);
  });

  it('opens the other ranks when one trace is damaged, and says which', async () => {
    const folder = tempDir('rank-damaged');
    writeFileSync(path.join(folder, 'worker0.json'), rankTrace(0, 0));
    writeFileSync(path.join(folder, 'worker1.json'), rankTrace(1, 20));
    writeFileSync(path.join(folder, 'worker2.json'), '{"traceEvents": [ {"ph": "X",');
    const run = await runCli(['summary', folder, '--ranks']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^rank 2: .*worker2\.json: /m);
    expect(run.stdout).toMatch(/^allreduce #0 .* 1 +20 µs$/m);
    const json = await runCli(['summary', folder, '--ranks', '--json']);
    expect((JSON.parse(json.stdout) as RanksJson).ranks.map((r) => r.rank)).toEqual(['0', '1']);
    expect(json.stderr).toMatch(/warning: rank 2: .*worker2\.json/);
  });

  it('says so of a folder with no trace', async () => {
    const folder = tempDir('rank-none');
    mkdirSync(path.join(folder, 'inner'));
    const run = await runCli(['summary', folder, '--ranks']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('not a multi-process session');
  });
});

describe('a 2-rank gloo job under torchrun (CPU only)', () => {
  const out = path.join(tempDir('collectives-gloo'), 'session');
  let doc: RanksJson;

  beforeAll(async () => {
    requirePython();
    const run = await profileRanks(out, ['--steps', '3']);
    expect(run.code, run.stderr).toBe(0);
    const json = await runCli(['summary', out, '--ranks', '--json'], { timeoutMs: TIMEOUT });
    expect(json.code, json.stderr).toBe(0);
    doc = JSON.parse(json.stdout) as RanksJson;
  }, TIMEOUT);

  it('times each rank’s collectives by their CPU ops, all exposed, and says why', () => {
    expect(doc.ranks.map((r) => r.rank)).toEqual(['0', '1']);
    for (const r of doc.ranks) {
      const c = r.communication;
      expect(c.device).toBe(false);
      expect(c.note).toMatch(/no device/);
      expect(c.union_us).toBeGreaterThan(0);
      expect(c.exposed_us).toBe(c.union_us);
      expect(c.union_us).toBeLessThanOrEqual(c.sum_us);
      expect(c.union_us).toBeLessThan(r.wall_s! * 1e6);
    }
    // Both ranks ran the same collectives.
    expect(doc.ranks[0].communication.instances).toBe(doc.ranks[1].communication.instances);
  });

  it('matches every collective across the two ranks, the final all_reduce and barrier included', () => {
    const instances = doc.ranks[0].communication.instances;
    expect(doc.collectives).toHaveLength(instances);
    expect(doc.unmatched_collectives).toBe(0);
    const names = new Set(doc.collectives.map((c) => c.name));
    expect(names).toContain('barrier');
    // DDP's one gradient bucket per step (Linear(64, 128) and Linear(128, 8): 9352 floats), then the script's own
    // dist.all_reduce of one float; each timed by gloo's run of it on its worker thread.
    const allReduces = doc.collectives.filter((c) => c.name === 'allreduce');
    expect(allReduces.map((c) => [c.index, c.size?.in_bytes])).toEqual([
      [0, 9352 * 4],
      [1, 9352 * 4],
      [2, 9352 * 4],
      [3, 4],
    ]);
    for (const c of doc.collectives) {
      expect(c.part).toBe('cpu');
      expect(c.ranks.map((r) => r.rank).sort()).toEqual(['0', '1']);
      const late = c.ranks.find((r) => r.rank === c.straggler)!;
      for (const r of c.ranks) {
        expect(r.wait_us).toBeGreaterThanOrEqual(0);
        expect(r.wait_us).toBeCloseTo(late.start_us - r.start_us, 6);
      }
    }
    const waited = doc.ranks.reduce((t, r) => t + r.wait_suffered_us, 0);
    expect(waited).toBeCloseTo(
      doc.collectives.reduce((t, c) => t + c.total_wait_us, 0),
      6,
    );
  });
});
