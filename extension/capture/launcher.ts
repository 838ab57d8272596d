/**
 * Runs `python -m flagprof_agent` for one script, in its own process group so cancelling reaches every process
 * the script started.
 *
 * Streams: stdout goes where the caller says (the terminal for the CLI, the Output channel in VS Code). stderr is
 * always read here and passed on unchanged, and the lines the torch_fl tracer prints ([flagos] ..., [flagos-cupti-
 * shim] ...) are also appended to DIR/diagnostics.jsonl as {"ts": epoch ms, "line": text}. Teeing in the launcher,
 * not inside the agent, keeps the last lines of a run that crashes or is killed. Progress arrives as JSON lines on
 * fd 3, never on stdout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  createWriteStream,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
  type WriteStream,
} from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { findAgentRoot } from './agent';
import { sealSession, SITES_PART, type SealResult } from './seal';
import { SESSION_FILES } from './session';
import { KinetoLogFilter } from './kinetoLog';
import { PROCS_FOLDER, RANKS_FOLDER } from './ranks';

export type CaptureMode = 'auto' | 'kineto' | 'agent' | 'cpu';
export const CAPTURE_MODES: readonly CaptureMode[] = ['auto', 'kineto', 'agent', 'cpu'];

export type CapturePhase = 'starting' | 'running' | 'exporting' | 'done';

/**
 * torch.profiler's step schedule, counted in the script's optimizer steps (the agent's schedule.py): `wait` steps
 * skipped, `warmup` warmed up, `active` recorded, the cycle run `repeat` times (0: until the run ends, as torch).
 */
export interface StepSchedule {
  wait: number;
  warmup: number;
  active: number;
  repeat: number;
}

const SCHEDULE_FIELDS = ['wait', 'warmup', 'active', 'repeat'] as const;
const SCHEDULE_FORM = 'wait=W,warmup=U,active=A[,repeat=R] (or W,U,A[,R])';
const MAX_SCHEDULE_STEPS = 2 ** 31;

/** A schedule that cannot run: the message names the field and what it must be (the agent words it the same). */
export class ScheduleError extends Error {}

function scheduleCount(field: string, word: string): number {
  if (!/^[0-9]+$/.test(word)) {
    const shown = word.length > 40 ? `${word.slice(0, 40)}…` : word;
    throw new ScheduleError(`${field} must be a whole number of steps ≥ 0, got '${shown}'`);
  }
  const value = Number(word);
  if (value > MAX_SCHEDULE_STEPS)
    throw new ScheduleError(`${field} must be at most ${MAX_SCHEDULE_STEPS} steps`);
  return value;
}

/** `wait=2,warmup=1,active=3[,repeat=R]` or `2,1,3[,R]`; throws ScheduleError with one line otherwise. */
export function parseStepSchedule(text: string): StepSchedule {
  if (text.trim() === '') throw new ScheduleError(`expected ${SCHEDULE_FORM}, got nothing`);
  const words = text.split(',').map((word) => word.trim());
  const named = words.filter((word) => word.includes('=')).length;
  if (named > 0 && named < words.length)
    throw new ScheduleError('use either wait=W,warmup=U,active=A[,repeat=R] or W,U,A[,R], not both');
  const values: Partial<Record<(typeof SCHEDULE_FIELDS)[number], number>> = {};
  if (named > 0) {
    for (const word of words) {
      const at = word.indexOf('=');
      const key = word.slice(0, at).trim();
      const field = SCHEDULE_FIELDS.find((f) => f === key);
      if (!field)
        throw new ScheduleError(
          `unknown field '${key.slice(0, 40)}' (expected ${SCHEDULE_FIELDS.join(', ')})`,
        );
      if (values[field] !== undefined) throw new ScheduleError(`${field} given twice`);
      values[field] = scheduleCount(field, word.slice(at + 1).trim());
    }
    for (const field of SCHEDULE_FIELDS.slice(0, 3))
      if (values[field] === undefined)
        throw new ScheduleError(`${field} is missing (expected wait=W,warmup=U,active=A[,repeat=R])`);
  } else {
    if (words.length < 3 || words.length > 4)
      throw new ScheduleError(`expected 3 or 4 numbers W,U,A[,R], got ${words.length}`);
    words.forEach((word, i) => (values[SCHEDULE_FIELDS[i]] = scheduleCount(SCHEDULE_FIELDS[i], word)));
  }
  const schedule = {
    wait: values.wait ?? 0,
    warmup: values.warmup ?? 0,
    active: values.active ?? 0,
    repeat: values.repeat ?? 0,
  };
  if (schedule.active < 1) throw new ScheduleError('active must be ≥ 1');
  return schedule;
}

/** The schedule as the agent's --schedule reads it. */
export function stepScheduleText(schedule: StepSchedule): string {
  return SCHEDULE_FIELDS.map((field) => `${field}=${schedule[field]}`).join(',');
}

export interface ProgressEvent {
  phase: CapturePhase;
  elapsedS?: number;
  profiling?: boolean;
  mode?: string;
  reason?: string;
  exitCode?: number;
  status?: string;
  [key: string]: unknown;
}

export interface CaptureOptions {
  python: string;
  script: string;
  /** Runs `python -m module args` instead of the script (torchrun is torch.distributed.run: every rank is profiled). */
  module?: string;
  args?: string[];
  sessionDir: string;
  cwd?: string;
  mode?: CaptureMode;
  delayS?: number;
  durationS?: number;
  /** Records the steps torch.profiler's schedule picks, a step ending at each optimizer step (not with delayS/durationS). */
  schedule?: StepSchedule;
  /** Record every allocation and free (torch.profiler's profile_memory): `[memory]` events in the trace. */
  profileMemory?: boolean;
  /** FLAGOS_TRACE=1 in the child (default on); off removes it from the child's environment. */
  flagosTrace?: boolean;
  /**
   * Libraries loaded at the profiled process's start (LD_PRELOAD of that process only, before any it already has):
   * Ascend's libmspti.so records memcpy and memset only when preloaded, and preloading it into every process of a
   * job is not safe (seed 000), so it is asked for per run.
   */
  preload?: string[];
  env?: NodeJS.ProcessEnv;
  /** 'inherit' passes the terminal through (CLI); a function receives the bytes (Output channel). */
  stdout?: 'inherit' | ((chunk: Buffer) => void);
  /** Receives the child's stderr unchanged; by default it is written to this process's stderr. */
  stderr?: (chunk: Buffer) => void;
  stdin?: 'inherit' | 'ignore';
  onProgress?: (event: ProgressEvent) => void;
  /** Python's output unbuffered, so an Output channel shows it as it happens. */
  unbuffered?: boolean;
  agentRoot?: string;
  /** Seconds of capture per segment written to disk (the agent's default when absent; 0: once, at the end). */
  segmentS?: number;
  /**
   * Cancel sequence (tests shorten it): the signal, then SIGTERM when the agent has not begun writing its profile
   * within `termAfterMs`, SIGKILL `killAfterMs` after that; once it writes, SIGKILL only when no progress has
   * arrived for `stallMs`.
   */
  termAfterMs?: number;
  killAfterMs?: number;
  stallMs?: number;
}

export interface CaptureResult {
  /** The script's exit code (128 + signal number when the process was killed). */
  exitCode: number;
  signal: NodeJS.Signals | null;
  sessionDir: string;
  cancelled: boolean;
  wallMs: number;
  /** The last progress event seen (its phase tells how far the run got). */
  lastProgress: ProgressEvent | undefined;
  diagnosticLines: number;
  /** Whether the agent ever reported progress (false: the interpreter never ran it). */
  agentStarted: boolean;
  /** The launcher closed the trace of a run that died before closing it. */
  seal?: SealResult;
}

/** A session folder another run is writing: two runs never write one folder. */
export class SessionBusyError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`${dir}: another profiling run (process ${pid}) is writing this session folder`);
    this.name = 'SessionBusyError';
  }
}

const LOCK_FILE = '.flagprof.lock';
/** Folders this process is writing now (the pid in their lock is ours, so the pid alone cannot tell). */
const lockedHere = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes DIR's lock (O_EXCL, holding our pid) or throws SessionBusyError; a dead holder's lock is taken over. */
function lockSession(dir: string): () => void {
  const file = path.join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      lockedHere.add(file);
      return () => {
        lockedHere.delete(file);
        try {
          if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
        } catch {
          // Already gone.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(file, 'utf8').trim());
    } catch {
      // Removed meanwhile: try again.
    }
    const ours = holder === process.pid;
    if ((ours && lockedHere.has(file)) || (!ours && Number.isInteger(holder) && holder > 0 && alive(holder)))
      throw new SessionBusyError(dir, holder);
    rmSync(file, { force: true });
  }
  throw new SessionBusyError(dir, 0);
}

/** Lines of stderr the tracer family prints; the bring-up parser decides what each means. */
export const FLAGOS_LINE = /^\[flagos[^\]\n]*\]/;

export function isFlagosTraceLine(line: string): boolean {
  return FLAGOS_LINE.test(line);
}

/** Appends one line to a session file; a folder removed under the run costs the line, not the run. */
function appendLine(file: string, line: string): void {
  try {
    appendFileSync(file, `${line}\n`);
  } catch {
    // The line is Kineto's own log: nothing the user needs.
  }
}

/** Splits a byte stream into lines (the last partial line is flushed at the end). */
class LineSplitter {
  private pending = '';
  constructor(private readonly onLine: (line: string) => void) {}
  push(text: string): void {
    const parts = (this.pending + text).split('\n');
    this.pending = parts.pop() ?? '';
    for (const part of parts) this.onLine(part.endsWith('\r') ? part.slice(0, -1) : part);
  }
  end(): void {
    if (this.pending) this.onLine(this.pending);
    this.pending = '';
  }
}

class DiagnosticsTee {
  private stream: WriteStream | undefined;
  count = 0;
  constructor(private readonly file: string) {}
  line(line: string): void {
    if (!isFlagosTraceLine(line)) return;
    if (!this.stream) {
      this.stream = createWriteStream(this.file, { flags: 'a' });
      // A session folder removed under us must not take the run down; the lines still reach the user.
      this.stream.on('error', () => undefined);
    }
    this.stream.write(`${JSON.stringify({ ts: Date.now(), line })}\n`);
    this.count++;
  }
  close(): Promise<void> {
    const stream = this.stream;
    if (!stream) return Promise.resolve();
    return new Promise((resolve) => stream.end(resolve));
  }
}

function childEnv(options: CaptureOptions, agentRoot: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env) };
  const original = env.PYTHONPATH;
  env.PYTHONPATH = original ? `${agentRoot}${path.delimiter}${original}` : agentRoot;
  // The agent takes its own folder off sys.path and PYTHONPATH again before the script runs.
  env.FLAGPROF_AGENT_PATH = agentRoot;
  if (original) env.FLAGPROF_ORIGINAL_PYTHONPATH = original;
  else delete env.FLAGPROF_ORIGINAL_PYTHONPATH;
  if (options.flagosTrace === false) delete env.FLAGOS_TRACE;
  else if (!env.FLAGOS_TRACE) env.FLAGOS_TRACE = '1';
  if (options.unbuffered) env.PYTHONUNBUFFERED = '1';
  if (options.preload?.length)
    env.LD_PRELOAD = [...options.preload, ...(env.LD_PRELOAD ? [env.LD_PRELOAD] : [])].join(':');
  // The agent dies with us (PR_SET_PDEATHSIG), and checks we are still its parent.
  env.FLAGPROF_LAUNCHER_PID = String(process.pid);
  return env;
}

export function agentArgs(options: CaptureOptions): string[] {
  const args = ['-m', 'flagprof_agent', '--session', options.sessionDir, '--progress-fd', '3'];
  if (options.mode) args.push('--mode', options.mode);
  if (options.delayS !== undefined) args.push('--delay', String(options.delayS));
  if (options.durationS !== undefined) args.push('--duration', String(options.durationS));
  if (options.segmentS !== undefined) args.push('--segment', String(options.segmentS));
  if (options.schedule) args.push('--schedule', stepScheduleText(options.schedule));
  if (options.profileMemory) args.push('--profile-memory');
  args.push('--', ...(options.module ? ['-m', options.module] : [options.script]), ...(options.args ?? []));
  return args;
}

function signalNumber(signal: NodeJS.Signals | null): number {
  if (!signal) return 0;
  return (constants.signals as Record<string, number>)[signal] ?? 0;
}

/** One running capture: `done` settles when the agent has exited and its output is drained. */
export class CaptureRun {
  readonly done: Promise<CaptureResult>;
  readonly child: ChildProcess;
  private cancelled = false;
  private exited = false;
  /** The agent is finishing the profile (the script has stopped). */
  private writing = false;
  /** The agent is writing a segment while the script runs (the script is paused meanwhile). */
  private inSegment = false;
  private lastProgressAt = Date.now();
  private watch: NodeJS.Timeout | undefined;
  private readonly unlock: () => void;

  constructor(readonly options: CaptureOptions) {
    const agentRoot = options.agentRoot ?? findAgentRoot();
    const started = Date.now();
    mkdirSync(options.sessionDir, { recursive: true });
    this.unlock = lockSession(options.sessionDir);
    // A reused folder (--out) must not show an earlier run's files as this run's.
    for (const name of [...Object.values(SESSION_FILES), 'summary.md'])
      rmSync(path.join(options.sessionDir, name), { force: true });
    for (const parts of [RANKS_FOLDER, PROCS_FOLDER])
      rmSync(path.join(options.sessionDir, parts), { recursive: true, force: true });
    for (const name of readdirSync(options.sessionDir))
      if (SITES_PART.test(name) || name.endsWith('.tmp'))
        rmSync(path.join(options.sessionDir, name), { force: true });
    const tee = new DiagnosticsTee(path.join(options.sessionDir, SESSION_FILES.diagnostics));
    const stdoutMode = options.stdout === 'inherit' || options.stdout === undefined ? 'inherit' : 'pipe';
    try {
      this.child = spawn(options.python, agentArgs(options), {
        cwd: options.cwd ?? path.dirname(options.script),
        env: childEnv(options, agentRoot),
        stdio: [options.stdin ?? 'ignore', stdoutMode, 'pipe', 'pipe'],
        // Its own process group: cancelling signals the whole group, the user's subprocesses included.
        detached: true,
      });
    } catch (error) {
      this.unlock();
      throw error;
    }
    const child = this.child;
    let lastProgress: ProgressEvent | undefined;
    let agentStarted = false;
    const drains: Promise<void>[] = [];
    const drain = (stream: Readable | null | undefined, onData: (chunk: Buffer) => void): void => {
      if (!stream) return;
      drains.push(
        new Promise((resolve) => {
          stream.on('data', onData);
          stream.on('end', resolve);
          stream.on('error', () => resolve());
          stream.on('close', resolve);
        }),
      );
    };
    if (typeof options.stdout === 'function') drain(child.stdout, options.stdout);
    const toUser = options.stderr ?? ((chunk: Buffer) => process.stderr.write(chunk));
    const kinetoLog = new KinetoLogFilter(toUser, (line) =>
      appendLine(path.join(options.sessionDir, SESSION_FILES.kinetoLog), line),
    );
    const stderrLines = new LineSplitter((line) => tee.line(line));
    // A character split across two reads must not become two replacement characters in the diagnostics.
    const stderrText = new StringDecoder('utf8');
    drain(child.stderr, (chunk) => {
      kinetoLog.push(chunk);
      stderrLines.push(stderrText.write(chunk));
    });
    const progressLines = new LineSplitter((line) => {
      if (!line.trim()) return;
      try {
        const event = JSON.parse(line) as ProgressEvent;
        lastProgress = event;
        agentStarted = true;
        this.onAgentProgress(event);
        options.onProgress?.(event);
      } catch {
        // Not a progress record; the channel is ours, so this only happens if the agent is cut mid-line.
      }
    });
    drain(child.stdio[3] as Readable | null, (chunk) => progressLines.push(chunk.toString('utf8')));

    this.done = new Promise<CaptureResult>((resolve, reject) => {
      child.on('error', (error) => {
        this.exited = true;
        this.clearTimers();
        this.unlock();
        reject(error);
      });
      child.on('exit', (code, signal) => {
        this.exited = true;
        this.clearTimers();
        if (this.cancelled) this.signalGroup('SIGKILL'); // the script's own leftovers
        // A background process the script left behind may hold our pipes open: wait briefly, then let go.
        let grace: NodeJS.Timeout | undefined;
        const settled = Promise.race([
          Promise.all(drains),
          new Promise((r) => (grace = setTimeout(r, 2_000))),
        ]);
        void settled.then(async () => {
          clearTimeout(grace);
          for (const stream of [child.stdout, child.stderr, child.stdio[3]])
            (stream as Readable | null)?.destroy();
          stderrLines.push(stderrText.end());
          kinetoLog.end();
          stderrLines.end();
          progressLines.end();
          await tee.close();
          let seal: SealResult | undefined;
          try {
            seal = sealSession(options.sessionDir, { exitCode: code ?? 128 + signalNumber(signal), signal });
          } catch {
            // A folder removed under us, or one another process writes: nothing of ours to close.
          }
          this.unlock();
          resolve({
            exitCode: code ?? 128 + signalNumber(signal),
            signal,
            sessionDir: options.sessionDir,
            cancelled: this.cancelled,
            wallMs: Date.now() - started,
            lastProgress,
            diagnosticLines: tee.count,
            agentStarted,
            seal,
          });
        });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private signalGroup(signal: NodeJS.Signals): boolean {
    const pid = this.child.pid;
    if (pid === undefined) return false;
    try {
      process.kill(-pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  private clearTimers(): void {
    if (this.watch) clearInterval(this.watch);
    this.watch = undefined;
  }

  /** What the agent is doing, as its progress reports say: finishing the profile, or writing one segment. */
  private onAgentProgress(event: ProgressEvent): void {
    this.lastProgressAt = Date.now();
    if (event.phase === 'done') this.writing = true;
    else if (event.phase === 'exporting') {
      // Segments are written while the script runs too (steps 'segment', 'trace', 'sites', then 'running'): only
      // the end of the run (step 'stop' first) means the script has stopped and the profile is being finished.
      if (event.step === 'stop' || event.step === undefined) this.writing = true;
      else this.inSegment = true;
    } else if (event.phase === 'running') this.inSegment = false;
  }

  /**
   * Stops the run the way `signal` asks (SIGINT: Ctrl-C or Cancel; SIGTERM; SIGHUP: a closed terminal), which the
   * agent answers by writing what it captured. While the agent writes (its profile, or a segment it had begun
   * before the signal, which it answers afterwards) it gets as long as progress keeps coming: SIGKILL only after
   * 60 s without any. Otherwise, if the script has not stopped within 10 s (a script that ignores the signal),
   * SIGTERM, then SIGKILL 5 s later. A second call forces the end now (SIGKILL): the segments on disk are kept.
   */
  cancel(signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP' = 'SIGINT'): void {
    if (this.exited) return;
    if (this.cancelled) {
      this.signalGroup('SIGKILL');
      return;
    }
    this.cancelled = true;
    this.signalGroup(signal);
    const termAfter = this.options.termAfterMs ?? 10_000;
    const killAfter = this.options.killAfterMs ?? 5_000;
    const stallMs = this.options.stallMs ?? 60_000;
    const tickMs = 100;
    let idleMs = 0;
    let sent: 'none' | 'term' | 'kill' = 'none';
    this.watch = setInterval(() => {
      if (this.exited || sent === 'kill') return;
      if (this.writing || this.inSegment) {
        if (Date.now() - this.lastProgressAt > stallMs) {
          sent = 'kill';
          this.signalGroup('SIGKILL');
        }
        return;
      }
      // Only time the script spends running counts toward escalation, not time spent writing segments.
      idleMs += tickMs;
      if (sent === 'none' && idleMs >= termAfter) {
        sent = 'term';
        this.signalGroup('SIGTERM');
      } else if (sent === 'term' && idleMs >= termAfter + killAfter) {
        sent = 'kill';
        this.signalGroup('SIGKILL');
      }
    }, tickMs);
  }
}

export function startCapture(options: CaptureOptions): CaptureRun {
  return new CaptureRun(options);
}
