/**
 * flagprof profile [options] [--] script.py [args...]: runs the script under the capture agent, then prints the
 * summary and the session folder. The exit code is the script's.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { analyze } from '../analysis/analyze';
import { buildSummary } from '../analysis/summary';
import { findInterpreter, InterpreterError, noTorchFix } from '../capture/interpreter';
import {
  CAPTURE_MODES,
  parseStepSchedule,
  ScheduleError,
  SessionBusyError,
  startCapture,
  type CaptureMode,
  type StepSchedule,
} from '../capture/launcher';
import { openRun } from '../capture/merged';
import { locateSession, type SessionSource } from '../capture/open';
import { createSessionDir, pruneSessions } from '../capture/sessions';
import { ImportError } from '../import/errors';
import type { CliCommand } from './commands';
import { UserError } from '../import/errors';
import { parseCommandArgs } from './errors';
import { isMultiRank, renderRanks, renderSummary } from './summary';

const USAGE =
  'usage: flagprof profile [--out DIR] [--python PY] [--mode auto|kineto|agent|cpu] [--delay S] [--duration S] [--schedule W,U,A[,R]] [--segment S] [--memory] [--preload LIB]... [--json] [--keep N] [--no-flagos-trace] -- script.py|-m module|torchrun ... [args...]';

/** The modules that launch one worker per rank: each worker is profiled into SESSION/ranks/<rank>/. */
const RANK_LAUNCHERS = new Set(['torch.distributed.run', 'torch.distributed.launch']);

/** What to run: a script, a module (`-m`), or torchrun (a module whose workers run a script). */
interface LaunchForm {
  /** The file the session is named after and checked to exist: the script, or torchrun's training script. */
  scriptPath: string | undefined;
  /** The script as the user wrote it. */
  scriptWord: string | undefined;
  module: string | undefined;
  args: string[];
  ranks: boolean;
}

/**
 * `script.py`, `-m module`, `python -m module` or `python script.py` (the profiled interpreter runs it), and
 * `torchrun ...` (`python -m torch.distributed.run` with the profiled interpreter).
 */
export function launchForm(command: string, args: string[]): LaunchForm {
  const word = path.basename(command);
  if (/^python[0-9.]*$/.test(word) && args.length > 0) return launchForm(args[0], args.slice(1));
  if (word === 'torchrun') return launchForm('-m', ['torch.distributed.run', ...args]);
  if (command !== '-m')
    return { scriptPath: path.resolve(command), scriptWord: command, module: undefined, args, ranks: false };
  const [module, ...rest] = args;
  if (!module) throw new UserError(`-m: expected a module name\n${USAGE}`);
  const ranks = RANK_LAUNCHERS.has(module);
  const script = ranks ? rest.find((a) => a.endsWith('.py')) : undefined;
  return { scriptPath: script && path.resolve(script), scriptWord: script, module, args: rest, ranks };
}

const VALUE_OPTIONS = new Set([
  '--out',
  '--python',
  '--mode',
  '--delay',
  '--duration',
  '--schedule',
  '--segment',
  '--preload',
  '--keep',
  '--top',
]);

/** A year: more than any profiling window, and below what the agent's timer can hold. */
const MAX_SECONDS = 365 * 24 * 3600;

/** Splits at `--`, or at the first word that is not one of ours: everything after it belongs to the script. */
export function splitProfileArgv(argv: string[]): {
  own: string[];
  script: string | undefined;
  scriptArgs: string[];
} {
  const own: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') return { own, script: argv[i + 1], scriptArgs: argv.slice(i + 2) };
    // `python -m` style: -m is not an option of ours, so the command starts there.
    if (word === '-m') return { own, script: word, scriptArgs: argv.slice(i + 1) };
    if (word.startsWith('-')) {
      own.push(word);
      if (VALUE_OPTIONS.has(word) && i + 1 < argv.length) own.push(argv[++i]);
      continue;
    }
    return { own, script: word, scriptArgs: argv.slice(i + 1) };
  }
  return { own, script: undefined, scriptArgs: [] };
}

function seconds(name: string, text: string | undefined, allowZero: boolean): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0) || value > MAX_SECONDS) {
    const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
    throw new UserError(
      `${name}: expected a number of seconds${allowZero ? '' : ' above 0'} up to ${MAX_SECONDS}, got '${shown}'`,
    );
  }
  return value;
}

/** --schedule, checked; a window in seconds and one in steps have no one meaning together. */
function stepSchedule(
  text: string | undefined,
  delayS: number | undefined,
  durationS: number | undefined,
): StepSchedule | undefined {
  if (text === undefined) return undefined;
  let schedule: StepSchedule;
  try {
    schedule = parseStepSchedule(text);
  } catch (error) {
    if (error instanceof ScheduleError) throw new UserError(`--schedule: ${error.message}`);
    throw error;
  }
  if (delayS !== undefined || durationS !== undefined)
    throw new UserError(
      `--schedule cannot be combined with ${delayS !== undefined ? '--delay' : '--duration'}: the schedule picks the steps itself`,
    );
  return schedule;
}

export const DEFAULT_SESSIONS_ROOT = path.join('.flagprof', 'sessions');

/** The command's own words, checked: what to run and how. */
function profileOptions(argv: string[]) {
  const { own, script, scriptArgs } = splitProfileArgv(argv);
  const { values } = parseCommandArgs(
    own,
    {
      out: { type: 'string' },
      python: { type: 'string' },
      mode: { type: 'string' },
      delay: { type: 'string' },
      duration: { type: 'string' },
      schedule: { type: 'string' },
      segment: { type: 'string' },
      preload: { type: 'string', multiple: true },
      keep: { type: 'string' },
      top: { type: 'string' },
      json: { type: 'boolean' },
      memory: { type: 'boolean' },
      'no-flagos-trace': { type: 'boolean' },
    },
    USAGE,
    false,
  );
  if (!script) throw new UserError(`no script given\n${USAGE}`);
  const launch = launchForm(script, scriptArgs);
  const { scriptPath } = launch;
  if (scriptPath && (!existsSync(scriptPath) || !statSync(scriptPath).isFile()))
    throw new UserError(`${launch.scriptWord}: no such file`);
  const mode = (values.mode ?? 'auto') as CaptureMode;
  if (!CAPTURE_MODES.includes(mode))
    throw new UserError(`--mode: expected one of ${CAPTURE_MODES.join(', ')}, got '${values.mode}'`);
  const delayS = seconds('--delay', values.delay, true);
  const durationS = seconds('--duration', values.duration, false);
  const segmentS = seconds('--segment', values.segment, true);
  const schedule = stepSchedule(values.schedule, delayS, durationS);
  // Each one must be a file: ld.so only warns about a missing preload, and the run would silently lack it.
  const preload = (values.preload ?? []).map((lib) => {
    const file = path.resolve(lib);
    if (!existsSync(file) || !statSync(file).isFile()) throw new UserError(`--preload ${lib}: no such file`);
    if (file.includes(':'))
      throw new UserError(`--preload ${lib}: a path with ':' cannot go into LD_PRELOAD`);
    return file;
  });
  const keep = values.keep === undefined ? 10 : Number(values.keep);
  if (!Number.isInteger(keep) || keep < 1)
    throw new UserError(`--keep: expected a positive integer, got '${values.keep}'`);
  const top = values.top === undefined ? 15 : Number(values.top);
  if (!Number.isInteger(top) || top < 1)
    throw new UserError(`--top: expected a positive integer, got '${values.top}'`);
  return {
    scriptPath,
    module: launch.module,
    ranks: launch.ranks,
    scriptArgs: launch.args,
    mode,
    delayS,
    durationS,
    schedule,
    segmentS,
    keep,
    top,
    out: values.out,
    python: values.python,
    json: values.json === true,
    memory: values.memory === true,
    flagosTrace: values['no-flagos-trace'] !== true,
    preload,
  };
}

type ProfileOptions = ReturnType<typeof profileOptions>;

/** Runs the script under the agent, passing our signals on, until it has written its profile. */
async function runAgent(options: ProfileOptions, python: string, sessionDir: string) {
  let run;
  try {
    run = startCapture({
      python,
      script: options.scriptPath ?? process.cwd(),
      module: options.module,
      args: options.scriptArgs,
      // torchrun passes a signal on to its workers and waits up to 30 s while each writes its profile.
      termAfterMs: options.ranks ? 45_000 : undefined,
      sessionDir,
      cwd: process.cwd(),
      mode: options.mode,
      delayS: options.delayS,
      durationS: options.durationS,
      schedule: options.schedule,
      segmentS: options.segmentS,
      profileMemory: options.memory,
      flagosTrace: options.flagosTrace,
      preload: options.preload,
      stdin: 'inherit',
      // With --json, stdout carries only the summary: the script's own output moves to stderr.
      stdout: options.json ? (chunk) => process.stderr.write(chunk) : 'inherit',
    });
  } catch (error) {
    if (error instanceof SessionBusyError) throw new UserError(error.message);
    const code = (error as NodeJS.ErrnoException).code;
    if (code) throw new UserError(`${sessionDir}: cannot write the session folder (${code})`);
    throw error;
  }
  // The agent runs in its own process group, so signals reach it through us: each is passed on as it came
  // (Ctrl-C → 130, SIGTERM → 143, a closed terminal → 129), and the profile captured so far is kept.
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((signal) => {
    const handler = (): void => run.cancel(signal);
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  // A closed terminal makes our own writes fail: that must not end us before the run has written its profile.
  const quiet = (): void => undefined;
  process.stdout.on('error', quiet);
  process.stderr.on('error', quiet);
  try {
    return await run.done;
  } catch (error) {
    throw new UserError(`${python} could not be started (${(error as Error).message})`);
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}

/** What the run left: its summary, or why there is none. */
async function printSession(
  session: SessionSource,
  options: ProfileOptions,
  exitCode: number,
): Promise<void> {
  const record = session.session?.record;
  if (isMultiRank(session.folder)) {
    // torchrun: every rank's summary, then the table across ranks.
    const each = await renderRanks(session.folder, { top: options.top, table: false, json: options.json });
    const table = options.json
      ? ''
      : await renderRanks(session.folder, { top: options.top, table: true, json: false });
    process.stdout.write(options.json ? each : `\n${each}\n${table}`);
  } else if (session.tracePath) {
    try {
      // With the run's child processes (DataLoader workers) where it had any.
      const summary = buildSummary(analyze((await openRun(session.folder)).profile), {
        steps: true,
        memory: true,
      });
      process.stdout.write(
        options.json ? `${JSON.stringify(summary, null, 1)}\n` : `\n${renderSummary(summary, options.top)}`,
      );
    } catch (error) {
      if (!(error instanceof ImportError)) throw error;
      process.stderr.write(`flagprof: the capture could not be read: ${error.message}\n`);
    }
  } else if (record?.notes.length) {
    process.stderr.write(`flagprof: no trace was written: ${record.notes.at(-1)}\n`);
  } else if (!record) {
    process.stderr.write(`flagprof: the capture agent wrote nothing (exit code ${exitCode})\n`);
  }
}

export const profileCommand: CliCommand = {
  synopsis:
    'profile [--out DIR] [--python PY] [--mode M] [--json] -- script.py|-m module|torchrun ... [args]   run a script (every rank of a torchrun job) under the profiler',
  async run(argv) {
    const options = profileOptions(argv);
    let python: string;
    try {
      python = (await findInterpreter({ configured: options.python ?? process.env.FLAGPROF_PYTHON })).path;
    } catch (error) {
      if (error instanceof InterpreterError) throw new UserError(`${error.message}; ${error.fix}`);
      throw error;
    }

    let sessionDir: string;
    if (options.out) {
      sessionDir = path.resolve(options.out);
    } else {
      const root = path.resolve(DEFAULT_SESSIONS_ROOT);
      sessionDir = createSessionDir(root, options.scriptPath ?? options.module ?? 'script');
      pruneSessions(root, options.keep, sessionDir);
    }

    const result = await runAgent(options, python, sessionDir);
    const session = locateSession(sessionDir);
    const record = session.session?.record;
    if (!result.agentStarted && !record) {
      // `--python /bin/true`: something ran, but not the capture agent.
      throw new UserError(
        `${python} did not run the capture agent (exit code ${result.exitCode}, no progress reported): is it a Python interpreter (3.9 or newer)?`,
      );
    }
    if (result.seal?.note) process.stderr.write(`flagprof: ${result.seal.note}\n`);
    if (record?.torch === null) {
      process.stderr.write(
        `flagprof: ${python} has no torch, so nothing was profiled; ${noTorchFix(python)}\n`,
      );
    }
    await printSession(session, options, result.exitCode);
    if (options.json) process.stderr.write(`flagprof: session folder: ${sessionDir}\n`);
    else process.stdout.write(`session: ${sessionDir}\n`);
    return result.exitCode;
  },
};
