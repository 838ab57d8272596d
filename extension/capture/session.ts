/**
 * A capture session folder: trace.json.gz (Kineto), sites.json (exact call sites), session.json (how the run went)
 * and diagnostics.jsonl (FLAGOS_TRACE lines). loadSession turns it into one Profile.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ImportError } from '../import/errors';
import { mergeCapture } from '../import/capture';
import { importTrace } from '../import/kineto';
import { readSites } from '../analysis/sites';
import type { ImportWarning, Profile, SourceFrame } from '../model/profile';
import { RunInProgress, sealSession, sitesFiles } from './seal';

export const SESSION_FILES = {
  trace: 'trace.json.gz',
  sites: 'sites.json',
  session: 'session.json',
  diagnostics: 'diagnostics.jsonl',
  capture: 'capture.fpc',
} as const;

/** A session folder the product cannot load: one line naming the folder and why. */
export class SessionError extends ImportError {
  constructor(dir: string, problem: string) {
    super(dir, undefined, problem);
    this.name = 'SessionError';
  }
}

/** session.json as written by the capture agent (fields the host reads; the file holds more). */
export interface SessionRecord {
  version?: number;
  status?: string;
  exitCode?: number | null;
  mode?: { requested?: string; chosen?: string | null; reason?: string | null };
  torch?: { version?: string } | null;
  python?: { version?: string; executable?: string };
  window?: { captured?: boolean; delayS?: number; durationS?: number | null } | null;
  notes?: string[];
  [key: string]: unknown;
}

export interface DiagnosticLine {
  ts: number;
  line: string;
}

export async function readSessionRecord(dir: string): Promise<SessionRecord | undefined> {
  const file = path.join(dir, SESSION_FILES.session);
  if (!existsSync(file)) return undefined;
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as SessionRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

export async function readDiagnostics(dir: string): Promise<DiagnosticLine[]> {
  const file = path.join(dir, SESSION_FILES.diagnostics);
  if (!existsSync(file)) return [];
  const lines: DiagnosticLine[] = [];
  for (const text of (await readFile(file, 'utf8')).split('\n')) {
    if (!text.trim()) continue;
    try {
      const parsed = JSON.parse(text) as Partial<DiagnosticLine>;
      if (typeof parsed.line === 'string') lines.push({ ts: Number(parsed.ts) || 0, line: parsed.line });
    } catch {
      // A line cut short by a killed run: keep the text, it is what the tracer said.
      lines.push({ ts: 0, line: text });
    }
  }
  return lines;
}

/**
 * The call sites of every segment (sites.json, sites.2.json, …) as one map. External ids keep counting across
 * the profiler's restarts, so the parts never name the same op.
 */
export async function readSessionSites(
  dir: string,
  warnings: ImportWarning[],
): Promise<Map<number, SourceFrame[]> | undefined> {
  const files = sitesFiles(dir);
  let merged: Map<number, SourceFrame[]> | undefined;
  for (const file of files) {
    // A damaged part costs its own segment's exact lines (they fall back to function level, with a warning),
    // never the session or the other segments' lines.
    const part = await readSites(file, warnings);
    if (!part) continue;
    if (!merged) merged = part;
    else for (const [id, frames] of part) merged.set(id, frames);
  }
  return merged;
}

/**
 * Imports DIR/trace.json.gz and attaches DIR/sites.json (profile.sites), session.json (metadata.session) and
 * diagnostics.jsonl (metadata.diagnostics). A folder without a trace is a SessionError saying why, from session.json.
 */
export async function loadSession(dir: string): Promise<Profile> {
  const tracePath = path.join(dir, SESSION_FILES.trace);
  // A run that died (killed, crashed, its launcher gone) left its trace open: close it so its segments read.
  try {
    sealSession(dir);
  } catch (error) {
    if (error instanceof RunInProgress) throw new SessionError(dir, error.message);
    // A read-only copy cannot be sealed: import what is there and let the importer say what is wrong.
  }
  const record = await readSessionRecord(dir);
  if (!existsSync(tracePath)) {
    if (!record && !existsSync(path.join(dir, SESSION_FILES.capture)))
      throw new SessionError(
        dir,
        'is a folder, not a trace file or a session folder (no trace.json.gz, no session.json)',
      );
    const why = record?.notes?.length ? record.notes[record.notes.length - 1] : 'the capture wrote no trace';
    throw new SessionError(dir, `no ${SESSION_FILES.trace} (${why})`);
  }
  const profile = await importTrace(tracePath);
  const sites = await readSessionSites(dir, profile.warnings);
  if (sites) profile.sites = sites;
  if (record) profile.metadata.session = record;
  profile.metadata.diagnostics = await readDiagnostics(dir);
  // Agent mode: the device activity is in capture.fpc. A capture that cannot be decoded (or no addon) keeps the
  // CPU profile and says why, so nothing the user captured is lost.
  const capturePath = path.join(dir, SESSION_FILES.capture);
  if (existsSync(capturePath)) {
    try {
      const merged = mergeCapture(profile, capturePath);
      if (merged.outsideWindow > 0) {
        profile.warnings.push({
          message: `${merged.outsideWindow} device events outside the profiling window were dropped (counted, not shown)`,
        });
      }
    } catch (error) {
      profile.warnings.push({
        message: `${SESSION_FILES.capture} was not decoded: ${(error as Error).message}`,
      });
    }
  }
  return profile;
}
