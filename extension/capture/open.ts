/**
 * Opening what the user opened — a Kineto trace (.json, .json.gz, .pt.trace.json…), a capture (.fpc), a session
 * folder, or a session's own trace or capture inside its folder — as one Profile with the session's facts. The
 * command line, the editor and the bring-up view all open through here. It sits in capture/, not import/, because
 * opening a session may first have to seal the trace of a run that died (seal.ts), which is the capture's business;
 * import/ reads single files and knows nothing of sessions.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { AddonLoadError } from '../import/addon';
import { importCapture, mergeCapture } from '../import/capture';
import { ImportError } from '../import/errors';
import { importTrace, type ImportOptions } from '../import/kineto';
import { readSites } from '../import/sites';
import type { ImportWarning, Profile, SourceFrame } from '../model/profile';
import { rankFolders } from './ranks';
import { RunInProgress, sealSession, sitesFiles } from './seal';
import {
  SESSION_FILES,
  SessionError,
  diagnosticLines,
  readSessionFile,
  sessionCapture,
  sessionDiagnostics,
  sessionOfFile,
  sessionTrace,
  type SessionFile,
} from './session';

/** A file opened on its own. */
export interface FileSource {
  kind: 'trace' | 'capture';
  path: string;
}

/** A session folder as found (sealed if its run had died): its files and session.json; nothing imported yet. */
export interface SessionSource {
  kind: 'session';
  folder: string;
  tracePath: string | undefined;
  capturePath: string | undefined;
  diagnosticsPath: string | undefined;
  /** The diagnostics file as written; '' without one. */
  diagnosticsText: string;
  session: SessionFile | undefined;
  /** Why the session cannot be opened yet (its run is still writing it). */
  busy?: string;
}

export type ProfileSource = FileSource | SessionSource;

export interface OpenedProfile {
  source: ProfileSource;
  profile: Profile;
  /** Why the session's capture.fpc was not merged (the profile's warnings say it too). */
  captureProblem?: string;
}

/** A session folder as found, sealed first when its run died. */
export function locateSession(folder: string): SessionSource {
  let busy: string | undefined;
  try {
    // A run that died (killed, crashed, its launcher gone) left its trace open: close it so its segments read.
    // Only a folder with session.json is a run of ours: nothing is removed from any other.
    if (existsSync(path.join(folder, SESSION_FILES.session))) sealSession(folder);
  } catch (error) {
    if (error instanceof RunInProgress) busy = error.message;
    // A read-only copy cannot be sealed: import what is there and let the importer say what is wrong.
  }
  const diagnosticsPath = sessionDiagnostics(folder);
  return {
    kind: 'session',
    folder,
    tracePath: sessionTrace(folder),
    capturePath: sessionCapture(folder),
    diagnosticsPath,
    diagnosticsText: diagnosticsPath ? readFileSync(diagnosticsPath, 'utf8') : '',
    session: readSessionFile(folder),
    busy,
  };
}

/** What TARGET is, without importing it: a session folder (sealed if need be), a trace or a capture. */
export function locateProfile(target: string): ProfileSource {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(target).isDirectory();
  } catch {
    throw new ImportError(target, undefined, 'no such file or folder');
  }
  if (isDirectory) return locateSession(target);
  const folder = sessionOfFile(target);
  if (folder) return locateSession(folder);
  return { kind: /\.fpc$/i.test(target) ? 'capture' : 'trace', path: target };
}

/**
 * The call sites of every segment (sites.json, sites.2.json, …) as one map. External ids keep counting across
 * the profiler's restarts, so the parts never name the same op.
 */
async function readSessionSites(
  dir: string,
  warnings: ImportWarning[],
): Promise<Map<number, SourceFrame[]> | undefined> {
  let merged: Map<number, SourceFrame[]> | undefined;
  for (const file of sitesFiles(dir)) {
    // A damaged part costs its own segment's exact lines (they fall back to function level, with a warning),
    // never the session or the other segments' lines.
    const part = await readSites(file, warnings);
    if (!part) continue;
    if (!merged) merged = part;
    else for (const [id, frames] of part) merged.set(id, frames);
  }
  return merged;
}

/** Agent mode: the device activity is in capture.fpc. One that cannot be decoded keeps the CPU profile, saying why. */
function mergeSessionCapture(profile: Profile, capturePath: string): string | undefined {
  try {
    const merged = mergeCapture(profile, capturePath);
    if (merged.outsideWindow > 0) {
      profile.warnings.push({
        message: `${merged.outsideWindow} device events outside the profiling window were dropped (counted, not shown)`,
      });
    }
    return undefined;
  } catch (error) {
    const problem = `${SESSION_FILES.capture} was not decoded: ${(error as Error).message}`;
    profile.warnings.push({ message: problem });
    return problem;
  }
}

/**
 * The session's trace with its sites (profile.sites), session.json (metadata.session), diagnostics
 * (metadata.diagnostics) and capture merged. A folder without a trace is a SessionError saying why.
 */
/**
 * What opening may report (the share of the trace read) and how it is cancelled: importTrace's options; and what
 * reads a trace file: importTrace, or the editor's importOffThread (the same profile, read on a worker).
 */
export type OpenOptions = Pick<
  ImportOptions,
  'onProgress' | 'signal' | 'timings' | 'onPartial' | 'partialAfterMs'
> & { read?: (file: string, options: ImportOptions) => Promise<Profile> };

function readTrace(file: string, options: OpenOptions): Promise<Profile> {
  const { read = importTrace, ...importOptions } = options;
  return read(file, importOptions);
}

async function openSession(source: SessionSource, options: OpenOptions = {}): Promise<OpenedProfile> {
  const { folder, session } = source;
  if (source.busy) throw new SessionError(folder, source.busy);
  // A multi-process session (torchrun) has no trace of its own: it opens as rank 0's part, the first of its
  // parts; ranks.ts's openRanks opens them all.
  const firstRank = source.tracePath ? undefined : rankFolders(folder)[0];
  if (firstRank) return openSession(locateSession(firstRank.folder), options);
  if (!source.tracePath) {
    if (!session && !source.capturePath)
      throw new SessionError(
        folder,
        'is a folder, not a trace file or a session folder (no trace.json.gz, no session.json)',
      );
    const why = session?.record.notes.at(-1) ?? 'the capture wrote no trace';
    throw new SessionError(folder, `no ${SESSION_FILES.trace} (${why})`);
  }
  const profile = await readTrace(source.tracePath, options);
  const sites = await readSessionSites(folder, profile.warnings);
  if (sites) profile.sites = sites;
  if (session) profile.metadata.session = session.document;
  profile.metadata.diagnostics = diagnosticLines(source.diagnosticsText);
  const captureProblem = source.capturePath ? mergeSessionCapture(profile, source.capturePath) : undefined;
  return { source, profile, captureProblem };
}

/** Opens a target (a path, or what locateProfile found); errors are ImportErrors: one line naming the file. */
export async function openProfile(
  target: string | ProfileSource,
  options: OpenOptions = {},
): Promise<OpenedProfile> {
  const source = typeof target === 'string' ? locateProfile(target) : target;
  if (source.kind === 'session') return openSession(source, options);
  const profile =
    source.kind === 'capture' ? openCapture(source.path) : await readTrace(source.path, options);
  return { source, profile };
}

function openCapture(file: string): Profile {
  try {
    return importCapture(file);
  } catch (error) {
    // No addon on this machine: still one line about the file the user opened.
    if (error instanceof AddonLoadError) throw new ImportError(file, undefined, error.message);
    throw error;
  }
}
