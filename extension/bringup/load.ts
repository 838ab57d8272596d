/**
 * Everything the bring-up view shows for one target (a trace file, a session folder, or a FLAGOS_TRACE log),
 * assembled without VS Code so the CLI and the panel show the same thing.
 */
import { analyze } from '../analysis/analyze';
import type { Baseline, CheckReport } from '../analysis/checks';
import { importFailureReport, runChecks } from '../analysis/checks';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadSession, SESSION_FILES } from '../capture/session';
import type { CaptureDiagnostic } from '../import/addon';
import { mergeCapture } from '../import/capture';
import { ImportError, importTrace } from '../import/kineto';
import type { Profile } from '../model/profile';
import type { Analysis } from '../analysis/types';
import {
  deriveFindings,
  displayLog,
  fromFrame,
  parseDiagnostics,
  parseLine,
  summarizeDiagnostics,
} from './diagnostics';
import { findSessionFiles, isSessionFolder, loadDiagnostics, sessionHeader, sessionWindow } from './session';
import type { SessionHeader } from './session';
import type { Diagnostic, DiagnosticsSummary } from './types';

export interface BringupModel {
  /** What was opened: a session folder or a trace file. */
  target: string;
  tracePath: string | undefined;
  header: SessionHeader;
  checks: CheckReport | undefined;
  diagnostics: Diagnostic[];
  summary: DiagnosticsSummary;
  /** The FLAGOS_TRACE log, one line per line of the file (JSON lines shown as the text they hold). */
  log: string;
  logPath: string | undefined;
}

export interface BringupOptions {
  baseline?: Baseline;
  platform?: string;
  /** The session's profile when the caller already loaded and analysed it (a finished capture). */
  preloaded?: { profile: Profile; analysis: Analysis };
}

/** Runs the checks on a trace; a trace the importer rejects gets the X1 report instead of an exception. */
export async function checkTrace(
  tracePath: string,
  options: BringupOptions & {
    sessionWindow?: { startNs: bigint; endNs: bigint };
    cpuOnlyReason?: string;
    captureMode?: string;
    /** How to load the profile when it is more than the trace (a session). */
    load?: () => Promise<Profile>;
  } = {},
): Promise<CheckReport> {
  if (options.preloaded) return runChecks(options.preloaded.profile, options.preloaded.analysis, options);
  let profile;
  try {
    profile = await (options.load ? options.load() : importTrace(tracePath));
  } catch (error) {
    if (error instanceof ImportError) return importFailureReport(tracePath, error.message, options.baseline);
    throw error;
  }
  return runChecks(profile, analyze(profile), options);
}

/**
 * A session's profile as the rest of the product loads it (trace, sites, session record); in agent mode the
 * device events live in capture.fpc and are merged in. The tracer lines the capture recorded come back as
 * diagnostics, skipping those diagnostics.jsonl already holds.
 */
async function loadSessionProfile(
  folder: string,
  tracePath: string,
  mode: unknown,
  known: Diagnostic[],
): Promise<Profile> {
  const profile =
    path.basename(tracePath) === SESSION_FILES.trace
      ? await loadSession(folder)
      : await importTrace(tracePath);
  const capturePath = path.join(folder, SESSION_FILES.capture);
  if (mode === 'agent' && existsSync(capturePath) && profile.metadata.capture === undefined) {
    try {
      mergeCapture(profile, capturePath);
    } catch (error) {
      known.push(
        fromFrame({
          component: 'agent',
          severity: 'warning',
          message: `capture.fpc was not decoded: ${(error as Error).message}`,
        }),
      );
    }
  }
  const recorded = profile.metadata.captureDiagnostics as CaptureDiagnostic[] | undefined;
  const seen = new Set(known.map((d) => d.raw));
  for (const d of recorded ?? []) {
    if (seen.has(d.message)) continue;
    known.push(
      d.message.includes('[flagos')
        ? parseLine(d.message)
        : { ...fromFrame({ component: 'agent', severity: d.severity, message: d.message }), code: d.code },
    );
  }
  return profile;
}

/** A session that chose CPU-only capture says so in session.json (mode.chosen == "cpu", with its reason). */
function cpuOnlyReason(session: Record<string, unknown> | undefined): string | undefined {
  const mode = session?.mode;
  const chosen = mode && typeof mode === 'object' ? (mode as Record<string, unknown>).chosen : mode;
  if (chosen !== 'cpu') return undefined;
  const reason = mode && typeof mode === 'object' ? (mode as Record<string, unknown>).reason : undefined;
  return typeof reason === 'string' && reason ? `mode cpu (${reason})` : 'mode cpu';
}

function withFindings(diagnostics: Diagnostic[]): Diagnostic[] {
  return [...diagnostics, ...deriveFindings(diagnostics)];
}

export async function loadBringup(target: string, options: BringupOptions = {}): Promise<BringupModel> {
  if (isSessionFolder(target)) {
    const files = findSessionFiles(target);
    const loaded = loadDiagnostics(files.diagnosticsPath);
    const logged = [...loaded.diagnostics];
    const tracePath = files.tracePath;
    const mode = (files.sessionJson?.mode as { chosen?: unknown } | undefined)?.chosen;
    const checks = tracePath
      ? await checkTrace(tracePath, {
          ...options,
          sessionWindow: sessionWindow(files.sessionJson),
          cpuOnlyReason: cpuOnlyReason(files.sessionJson),
          captureMode: typeof mode === 'string' ? mode : undefined,
          load: () => loadSessionProfile(target, tracePath, mode, logged),
        })
      : undefined;
    const diagnostics = withFindings(logged);
    const summary = summarizeDiagnostics(diagnostics);
    return {
      target,
      tracePath: files.tracePath,
      header: sessionHeader(files.sessionJson, summary),
      checks,
      diagnostics,
      summary,
      log: displayLog(loaded.text),
      logPath: files.diagnosticsPath,
    };
  }
  const checks = await checkTrace(target, options);
  const diagnostics: Diagnostic[] = [];
  const summary = summarizeDiagnostics(diagnostics);
  return {
    target,
    tracePath: target,
    header: sessionHeader(undefined, summary),
    checks,
    diagnostics,
    summary,
    log: '',
    logPath: undefined,
  };
}

/** A FLAGOS_TRACE log on its own (stderr text or diagnostics.jsonl). */
export function bringupFromLog(logPath: string, text: string): BringupModel {
  const diagnostics = withFindings(parseDiagnostics(text));
  const summary = summarizeDiagnostics(diagnostics);
  return {
    target: logPath,
    tracePath: undefined,
    header: sessionHeader(undefined, summary),
    checks: undefined,
    diagnostics,
    summary,
    log: displayLog(text),
    logPath,
  };
}
