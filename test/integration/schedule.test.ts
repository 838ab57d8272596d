/**
 * `flagprof profile --schedule W,U,A[,R]`: torch.profiler's step schedule over a script that never calls
 * prof.step(), a step ending at each optimizer step. Real Python and torch: a 10-iteration nn.Linear + SGD loop
 * (test/fixtures/schedule/train_steps.py, whose iteration N runs its forward under record_function("iteration N")),
 * a script with no optimizer, refused schedules, a SIGKILL after the first cycle, and agent mode with the fake CUPTI
 * library (test/fake-cupti), whose kernels are named after their iteration.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { openProfile } from '../../extension/capture/open';
import { SliceKind, isOpKind, type Profile } from '../../extension/model/profile';
import { launch, readJson, tempDir } from '../helpers/agent';
import { lines, runCli, profilingSuite } from '../helpers/cli';
import { ensureFakeCupti, ensureNativeBuilt } from '../helpers/native';
import { PYTHON, ROOT } from '../helpers/paths';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'schedule');
const TRAIN = path.join(FIXTURES, 'train_steps.py');
const TIMEOUT = 300_000;
const SCRATCH = tempDir('schedule');
let made = 0;

interface ScheduleRecord {
  wait: number;
  warmup: number;
  active: number;
  repeat: number;
  optimizerSteps: number;
  cycles: { cycle: number; steps: [number, number]; complete: boolean }[];
  endedAtStep?: number;
  optimizer?: string;
  optimizers?: number;
}
interface SessionJson {
  status: string;
  notes: string[];
  window: { segments: number; segmentS: number | null; schedule: ScheduleRecord | null };
  trace: { segments: number; sealed: boolean };
}

profilingSuite(SCRATCH);

function profileRun(args: string[], script: string, scriptArgs: string[] = [], env?: Record<string, string>) {
  const out = path.join(SCRATCH, `session-${++made}`);
  const run = runCli(
    ['profile', '--out', out, '--python', PYTHON, '--mode', 'cpu', ...args, '--', script, ...scriptArgs],
    {
      timeoutMs: TIMEOUT,
      env,
    },
  );
  return run.then((result) => ({ ...result, out }));
}

/** The N of every ProfilerStep#N span, in order. */
function profilerSteps(profile: Profile): number[] {
  const steps: number[] = [];
  for (let i = 0; i < profile.slices.length; i++) {
    const match = /^ProfilerStep#(\d+)$/.exec(profile.nameOf(i));
    if (match && isOpKind(profile.slices.kind[i])) steps.push(Number(match[1]));
  }
  return steps.sort((a, b) => a - b);
}

/** The N of every "iteration N" annotation of train_steps.py the trace holds. */
function iterations(profile: Profile, prefix = 'iteration '): number[] {
  const seen = new Set<number>();
  for (let i = 0; i < profile.slices.length; i++) {
    const name = profile.nameOf(i);
    if (name.startsWith(prefix)) seen.add(Number(name.slice(prefix.length)));
  }
  return [...seen].sort((a, b) => a - b);
}

/** Every op starts inside one of the ProfilerStep spans: nothing of the waited or warmed-up steps was recorded. */
function expectOpsInsideSteps(profile: Profile): void {
  const s = profile.slices;
  const spans: [number, number][] = [];
  for (let i = 0; i < s.length; i++)
    if (/^ProfilerStep#/.test(profile.nameOf(i))) spans.push([s.start[i], s.start[i] + s.dur[i]]);
  let ops = 0;
  for (let i = 0; i < s.length; i++) {
    if (!isOpKind(s.kind[i]) || /^ProfilerStep#/.test(profile.nameOf(i))) continue;
    ops++;
    const inside = spans.some(([a, b]) => s.start[i] >= a && s.start[i] <= b);
    expect(inside, `${profile.nameOf(i)} at ${s.start[i]} lies outside every recorded step`).toBe(true);
  }
  expect(ops).toBeGreaterThan(20);
}

describe('--schedule on a training loop that never calls prof.step()', () => {
  it(
    'records the active steps torch numbers 3..5 with 2,1,3,1, and stops profiling after the cycle',
    async () => {
      const run = await profileRun(['--schedule', '2,1,3,1'], TRAIN);
      expect(run.code, run.stderr).toBe(0);
      const profile = (await openProfile(run.out)).profile;
      expect(profilerSteps(profile)).toEqual([3, 4, 5]);
      // Step N is iteration N: the step ends at the line after its optimizer.step().
      expect(iterations(profile)).toEqual([3, 4, 5]);
      expectOpsInsideSteps(profile);
      const session = readJson<SessionJson>(path.join(run.out, 'session.json'));
      expect(session.window.schedule).toMatchObject({
        wait: 2,
        warmup: 1,
        active: 3,
        repeat: 1,
        cycles: [{ cycle: 1, steps: [3, 5], complete: true }],
        endedAtStep: 6,
        optimizer: 'SGD',
      });
      // The hook is gone after the last cycle: the optimizer steps after it are not counted.
      expect(session.window.schedule?.optimizerSteps).toBe(6);
      expect(session.trace).toMatchObject({ segments: 1, sealed: true });
      expect(run.stderr).toContain('recorded steps 3–5');
      // The steps table reads torch's own spans.
      expect(run.stdout).toMatch(/Steps \(3 ProfilerStep spans\)/);
    },
    TIMEOUT,
  );

  it(
    'repeats until the run ends with repeat=0 (torch), keeping the cycle the end cut short',
    async () => {
      const run = await profileRun(['--schedule', '2,1,3'], TRAIN, ['10']);
      expect(run.code, run.stderr).toBe(0);
      const profile = (await openProfile(run.out)).profile;
      // Ten optimizer steps: steps 0..9 end at one each, step 10 is what runs after the last.
      expect(profilerSteps(profile)).toEqual([3, 4, 5, 9, 10]);
      expect(iterations(profile)).toEqual([3, 4, 5, 9]);
      expectOpsInsideSteps(profile);
      const schedule = readJson<SessionJson>(path.join(run.out, 'session.json')).window.schedule!;
      expect(schedule.cycles).toEqual([
        { cycle: 1, steps: [3, 5], complete: true },
        { cycle: 2, steps: [9, 10], complete: false },
      ]);
      expect(schedule.optimizerSteps).toBe(10);
      expect(run.stderr).toContain('cycle 2 was cut short by the end of the run (steps 9–10 of 9–11)');
    },
    TIMEOUT,
  );

  it(
    'keeps both cycles of repeat=2, each its own segment',
    async () => {
      const run = await profileRun(['--schedule', 'wait=2,warmup=1,active=3,repeat=2'], TRAIN, ['16']);
      expect(run.code, run.stderr).toBe(0);
      const profile = (await openProfile(run.out)).profile;
      expect(profilerSteps(profile)).toEqual([3, 4, 5, 9, 10, 11]);
      expect(iterations(profile)).toEqual([3, 4, 5, 9, 10, 11]);
      expectOpsInsideSteps(profile);
      const session = readJson<SessionJson>(path.join(run.out, 'session.json'));
      expect(session.window.schedule?.cycles.map((c) => [c.steps, c.complete])).toEqual([
        [[3, 5], true],
        [[9, 11], true],
      ]);
      expect(session.window.schedule?.endedAtStep).toBe(12);
      expect(session.trace.segments).toBe(2);
      expect(existsSync(path.join(run.out, 'sites.2.json'))).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'charges no line for the ProfilerStep spans the agent opens at the line after optimizer.step()',
    async () => {
      const run = await profileRun(['--schedule', '0,1,3,1'], TRAIN, ['5']);
      expect(run.code, run.stderr).toBe(0);
      const opened = await openProfile(run.out);
      const analysis = analyze(opened.profile);
      const { profile } = opened;
      let steps = 0;
      for (let i = 0; i < profile.slices.length; i++) {
        if (!/^ProfilerStep#/.test(profile.nameOf(i))) continue;
        steps++;
        expect(profile.sites?.get(profile.slices.externalId[i])).toBeUndefined();
      }
      expect(steps).toBe(3);
      for (const line of analysis.lines)
        expect(line.topOps.map((op) => op.name).filter((name) => name.startsWith('ProfilerStep#'))).toEqual(
          [],
        );
      // The ops of the loop keep their exact lines: the optimizer's step on its own line.
      const stepLine =
        readFileSync(TRAIN, 'utf8')
          .split('\n')
          .findIndex((l) => l.includes('optimizer.step()')) + 1;
      const stepped = analysis.lines.find(
        (l) => l.file === TRAIN && l.line === stepLine && l.kind === undefined,
      );
      expect(stepped?.topOps.map((op) => op.name)).toEqual(['Optimizer.step#SGD.step']);
      expect(stepped?.ops).toBe(3);
    },
    TIMEOUT,
  );
});

describe('--schedule with several optimizers', () => {
  it.each([
    ['pair', 'an SGD and an Adam stepping each iteration', 2],
    ['fresh', 'an SGD made anew every 3 iterations', 3],
  ])(
    'counts one step per iteration: %s (%s)',
    async (shape, _what, optimizers) => {
      const run = await profileRun(['--schedule', '1,1,2'], path.join(FIXTURES, 'optimizers.py'), [
        shape,
        '8',
      ]);
      expect(run.code, run.stderr).toBe(0);
      const profile = (await openProfile(run.out)).profile;
      expect(profilerSteps(profile)).toEqual([2, 3, 6, 7]);
      expect(iterations(profile)).toEqual([2, 3, 6, 7]);
      const schedule = readJson<SessionJson>(path.join(run.out, 'session.json')).window.schedule!;
      expect(schedule).toMatchObject({ optimizerSteps: 8, optimizer: 'SGD', optimizers });
      expect(run.stderr).toContain(
        `steps counted at the lead optimizer's step() (SGD; ${optimizers} optimizers stepped)`,
      );
    },
    TIMEOUT,
  );
});

describe("the agent's own --schedule parser", () => {
  it('reads and refuses every text of cases.json as the launcher does, without importing torch', () => {
    const { cases } = JSON.parse(readFileSync(path.join(FIXTURES, 'cases.json'), 'utf8')) as {
      cases: { text: string; schedule?: Record<string, number>; error?: string }[];
    };
    const program = [
      'import json, sys',
      'from flagprof_agent import schedule',
      'out = []',
      'for text in json.load(sys.stdin):',
      '    try:',
      '        out.append({"schedule": schedule.parse(text).describe()})',
      '    except schedule.ScheduleError as error:',
      '        out.append({"error": str(error)})',
      'out.append("torch" in sys.modules)',
      'print(json.dumps(out))',
    ].join('\n');
    const answer = JSON.parse(
      execFileSync(PYTHON, ['-c', program], {
        input: JSON.stringify(cases.map((c) => c.text)),
        encoding: 'utf8',
        env: { ...process.env, PYTHONPATH: path.join(ROOT, 'native', 'agent', 'python') },
      }),
    ) as ({ schedule?: Record<string, number>; error?: string } | boolean)[];
    expect(answer.pop()).toBe(false);
    expect(answer).toEqual(cases.map((c) => (c.schedule ? { schedule: c.schedule } : { error: c.error })));
  });
});

describe('--schedule when it cannot record', () => {
  it(
    'says that a script with no optimizer step never started the schedule',
    async () => {
      const run = await profileRun(['--schedule', '2,1,3'], path.join(FIXTURES, 'no_optimizer.py'));
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('done');
      expect(run.stderr).toContain(
        'no optimizer step seen (the schedule counts torch.optim optimizer steps): the schedule never started; profiled nothing',
      );
      const session = readJson<SessionJson>(path.join(run.out, 'session.json'));
      expect(session.notes.at(-1)).toContain('no optimizer step seen');
      expect(existsSync(path.join(run.out, 'trace.json.gz'))).toBe(false);
    },
    TIMEOUT,
  );

  it(
    'says when the run ends before the first recorded step',
    async () => {
      const run = await profileRun(['--schedule', '5,1,2'], TRAIN, ['3']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(
        'the run ended at step 3, before the first recorded step (6); profiled nothing',
      );
    },
    TIMEOUT,
  );

  it.each([
    ['2,1,0', '--schedule: active must be ≥ 1'],
    ['2,1', '--schedule: expected 3 or 4 numbers W,U,A[,R], got 2'],
    ['wait=2,warmup=1', '--schedule: active is missing (expected wait=W,warmup=U,active=A[,repeat=R])'],
    ['2,-1,3', "--schedule: warmup must be a whole number of steps ≥ 0, got '-1'"],
    ['wait=1,1,2', '--schedule: use either wait=W,warmup=U,active=A[,repeat=R] or W,U,A[,R], not both'],
  ])('refuses --schedule %s with one line, exit 2', async (text, message) => {
    const run = await profileRun(['--schedule', text], TRAIN);
    expect(run.code).toBe(2);
    expect(lines(run.stderr)).toEqual([`flagprof: ${message}`]);
    expect(existsSync(run.out)).toBe(false);
  });

  it('refuses --schedule with --delay or --duration, exit 2', async () => {
    const delayed = await profileRun(['--schedule', '1,1,1', '--delay', '2'], TRAIN);
    expect(delayed.code).toBe(2);
    expect(lines(delayed.stderr)).toEqual([
      'flagprof: --schedule cannot be combined with --delay: the schedule picks the steps itself',
    ]);
    const bounded = await profileRun(['--duration', '2', '--schedule', '1,1,1'], TRAIN);
    expect(bounded.code).toBe(2);
    expect(lines(bounded.stderr)).toEqual([
      'flagprof: --schedule cannot be combined with --duration: the schedule picks the steps itself',
    ]);
  });

  it(
    'turns time-based segments off and says so when --segment is given too',
    async () => {
      const run = await profileRun(['--schedule', '1,1,2,1', '--segment', '0.1'], TRAIN, ['6', '0.1']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(
        '--segment is off with --schedule: each recorded cycle is written as one segment',
      );
      const session = readJson<SessionJson>(path.join(run.out, 'session.json'));
      expect(session.window.segmentS).toBeNull();
      expect(session.trace.segments).toBe(1);
    },
    TIMEOUT,
  );
});

describe('--schedule and a run that ends early', () => {
  it(
    'keeps the first cycle when the Python process is SIGKILLed in the second',
    async () => {
      let killed = false;
      const captured = await launch(
        TRAIN,
        { args: ['40', '0.1'], schedule: { wait: 1, warmup: 1, active: 4, repeat: 0 } },
        (run, output) => {
          const timer = setInterval(() => {
            // Cycle 2 records steps 8..11: iteration 9 is inside it.
            if (!killed && output.stdout().includes('iteration 9 ')) {
              killed = true;
              clearInterval(timer);
              process.kill(run.pid!, 'SIGKILL');
            }
          }, 10);
          void run.done.finally(() => clearInterval(timer));
        },
      );
      expect(killed).toBe(true);
      expect(captured.result.exitCode).toBe(137);
      expect(captured.result.seal?.sealed).toBe(true);
      const session = readJson<SessionJson>(path.join(captured.dir, 'session.json'));
      expect(session.status).toBe('lost');
      expect(session.window.schedule?.cycles).toEqual([{ cycle: 1, steps: [2, 5], complete: true }]);
      const profile = (await openProfile(captured.dir)).profile;
      expect(profilerSteps(profile)).toEqual([2, 3, 4, 5]);
      expect(iterations(profile)).toEqual([2, 3, 4, 5]);
    },
    TIMEOUT,
  );

  it(
    'keeps the cycle in progress, cut short, when the run is cancelled (SIGINT)',
    async () => {
      let cancelled = false;
      const captured = await launch(
        TRAIN,
        { args: ['40', '0.1'], schedule: { wait: 1, warmup: 1, active: 4, repeat: 0 } },
        (run, output) => {
          const timer = setInterval(() => {
            if (!cancelled && output.stdout().includes('iteration 9 ')) {
              cancelled = true;
              clearInterval(timer);
              run.cancel('SIGINT');
            }
          }, 10);
          void run.done.finally(() => clearInterval(timer));
        },
      );
      expect(captured.result.exitCode).toBe(130);
      const cycles = readJson<SessionJson>(path.join(captured.dir, 'session.json')).window.schedule!.cycles;
      expect(cycles).toHaveLength(2);
      expect(cycles[0]).toEqual({ cycle: 1, steps: [2, 5], complete: true });
      const [first, last] = cycles[1].steps;
      expect(cycles[1].complete).toBe(false);
      expect(first).toBe(8);
      expect(last).toBeGreaterThanOrEqual(10);
      const profile = (await openProfile(captured.dir)).profile;
      const expected = [2, 3, 4, 5, ...Array.from({ length: last - first + 1 }, (_, i) => first + i)];
      expect(profilerSteps(profile)).toEqual(expected);
    },
    TIMEOUT,
  );
});

describe('--schedule in agent mode (fake CUPTI)', () => {
  it(
    'records the device events of the recorded steps, under the ops that launched them',
    async () => {
      ensureNativeBuilt();
      const env = { FLAGOS_TRACER_LIBRARY: ensureFakeCupti() };
      const run = await profileRun(
        ['--mode', 'agent', '--schedule', '2,1,3,1'],
        path.join(FIXTURES, 'train_fake_device.py'),
        ['8'],
        env,
      );
      expect(run.code, run.stderr).toBe(0);
      const analysis = analyze((await openProfile(run.out)).profile);
      const { profile } = analysis;
      expect(profilerSteps(profile)).toEqual([3, 4, 5]);
      const launchedBy = new Map<string, string>();
      for (let i = 0; i < profile.slices.length; i++) {
        if (profile.slices.kind[i] !== SliceKind.Kernel) continue;
        const op = analysis.opOf[i];
        launchedBy.set(profile.nameOf(i), op >= 0 ? profile.nameOf(op) : '');
      }
      // The native capture runs from the window's start to the end of the last cycle; only recorded steps have ops.
      for (const step of [3, 4, 5]) expect(launchedBy.get(`step_${step}_kernel`)).toBe(`device step ${step}`);
      for (const step of [0, 1, 2]) expect(launchedBy.get(`step_${step}_kernel`)).toBe('');
      // Closed after the last cycle: the kernels of steps 6 and 7 were not captured.
      expect(launchedBy.has('step_6_kernel')).toBe(false);
      expect(launchedBy.has('step_7_kernel')).toBe(false);
    },
    TIMEOUT,
  );
});
