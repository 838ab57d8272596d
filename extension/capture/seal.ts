/**
 * Closing the trace of a run that died. The capture agent appends each segment of the profile to trace.json.gz as
 * one gzip member and then records in session.json how many bytes of the file are whole (flagprof_agent/
 * segments.py); its last member, TRAILER, ends the JSON document. A run killed before writing it leaves a trace
 * that is whole up to `trace.wholeBytes`: sealing cuts anything after that (a member cut short) and appends
 * TRAILER, so every segment written before the kill reads back.
 */
import {
  appendFileSync,
  existsSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/** The bytes flagprof_agent/segments.py writes as TRAILER: keep them equal. */
export const TRACE_TRAILER = '\n],"traceName": "trace.json.gz"}\n';

/** Files a run writes through a temporary name; one left behind is an interrupted write, never data. */
const TEMPORARY = /(^\.segment\.json\.tmp$|\.tmp$|^\.flagprof-reserve$)/;

export interface SealResult {
  /** True when this call closed the trace (the run had died before closing it). */
  sealed: boolean;
  segments: number;
  /** Temporary files removed. */
  removed: string[];
  note?: string;
}

interface TraceState {
  segments?: number;
  wholeBytes?: number;
  sealed?: boolean;
}

/** What the end of a run looked like, for the note: the launcher passes what it saw of the child's exit. */
export interface RunEnd {
  exitCode?: number;
  signal?: string | null;
}

/** The session's run is still writing it: sealing now would cut what it appends next. */
export class RunInProgress extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`the run is still in progress (process ${pid}); open it when it has finished`);
    this.name = 'RunInProgress';
  }
}

/** The pid of the agent still writing this session, if its record is unfinished and the process lives. */
export function runningAgent(record: Record<string, unknown>): number | undefined {
  const status = record.status;
  if (status !== undefined && status !== 'starting' && status !== 'running') return undefined;
  const pid = (record.agent as { pid?: unknown } | undefined)?.pid;
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: gone. EPERM: another user's process under a reused pid, so not our run either.
    return undefined;
  }
  // A zombie (exited, not yet reaped by its parent) no longer writes.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (/^\d+ \(.*\) Z /s.test(stat)) return undefined;
  } catch {
    // No /proc: trust kill(0).
  }
  return pid;
}

function removeTemporaries(dir: string): string[] {
  const removed: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!TEMPORARY.test(name)) continue;
    try {
      rmSync(path.join(dir, name), { force: true });
      removed.push(name);
    } catch {
      // Not ours to insist on: a leftover temporary is harmless.
    }
  }
  return removed;
}

function describeEnd(end: RunEnd | undefined): string {
  if (end?.signal) return `it was killed by ${end.signal}`;
  if (end?.exitCode !== undefined) return `it exited with code ${end.exitCode} before finishing the profile`;
  return 'it was killed or crashed';
}

/**
 * Makes DIR's trace readable after a run that died: idempotent, and a no-op for a run that finished. Writes
 * session.json's `trace.sealed`, the run's status ("lost" when it never got to write one) and a note.
 */
export function sealSession(dir: string, end?: RunEnd): SealResult {
  const sessionFile = path.join(dir, 'session.json');
  if (!existsSync(sessionFile)) return { sealed: false, segments: 0, removed: removeTemporaries(dir) };
  let record: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(readFileSync(sessionFile, 'utf8'));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      return { sealed: false, segments: 0, removed: [] };
    record = parsed as Record<string, unknown>;
  } catch {
    return { sealed: false, segments: 0, removed: [] };
  }
  const running = runningAgent(record);
  if (running !== undefined) throw new RunInProgress(dir, running);
  const removed = removeTemporaries(dir);
  const trace = (record.trace ?? undefined) as TraceState | undefined;
  const status = typeof record.status === 'string' ? record.status : undefined;
  const unfinished = status === undefined || status === 'starting' || status === 'running';
  if (!trace || (trace.sealed && !unfinished))
    return { sealed: false, segments: trace?.segments ?? 0, removed };

  const tracePath = path.join(dir, 'trace.json.gz');
  const segments = trace.segments ?? 0;
  const whole = trace.wholeBytes ?? 0;
  let sealed = false;
  if (!trace.sealed) {
    if (segments > 0 && whole > 0 && existsSync(tracePath) && statSync(tracePath).size >= whole) {
      truncateSync(tracePath, whole);
      appendFileSync(tracePath, gzipSync(TRACE_TRAILER));
      trace.wholeBytes = statSync(tracePath).size;
      sealed = true;
    } else {
      // No whole segment reached the disk: a partial file is no trace.
      rmSync(tracePath, { force: true });
    }
    trace.sealed = true;
    record.trace = trace;
  }
  let note: string | undefined;
  if (unfinished) {
    note =
      segments > 0
        ? `the run ended without finishing its profile (${describeEnd(end)}); the ${segments} segment${segments === 1 ? '' : 's'} written until then ${segments === 1 ? 'is' : 'are'} kept` +
          ' (what ran after the last of them was written is lost)'
        : `the run ended without finishing its profile (${describeEnd(end)}) before any of it was written`;
    record.status = 'lost';
    if (end?.exitCode !== undefined) record.exitCode = end.exitCode;
    const notes = Array.isArray(record.notes) ? (record.notes as unknown[]) : [];
    notes.push(note);
    record.notes = notes;
  }
  const temporary = `${sessionFile}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(record, null, 2)}\n`);
    renameSync(temporary, sessionFile);
  } catch (error) {
    // A full disk cuts the write short: no half-written file is left beside the session.json that stays.
    rmSync(temporary, { force: true });
    throw error;
  }
  return { sealed, segments, removed, note };
}

/** The call sites of segment 2, 3, …: sites.2.json (segment 1 writes sites.json). */
export const SITES_PART = /^sites\.(\d+)\.json$/;

/** The session's sites files in segment order: sites.json, sites.2.json, sites.3.json, … */
export function sitesFiles(dir: string): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const parts = names
    .map((name) => SITES_PART.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name: m[0], n: Number(m[1]) }))
    .sort((a, b) => a.n - b.n)
    .map((p) => path.join(dir, p.name));
  const first = path.join(dir, 'sites.json');
  return existsSync(first) ? [first, ...parts] : parts;
}
