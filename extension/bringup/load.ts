/**
 * Everything the bring-up view shows for one target (a trace file, a session folder, or a FLAGOS_TRACE log),
 * assembled without VS Code so the CLI and the panel show the same thing.
 */
import { analyze } from '../analysis/analyze';
import type { Baseline, CheckOptions, CheckReport } from '../analysis/checks';
import { importFailureReport, runChecks } from '../analysis/checks';
import type { Analysis } from '../analysis/types';
import { locateProfile, openProfile, type OpenedProfile, type ProfileSource } from '../capture/open';
import type { SessionRecord } from '../capture/session';
import type { CaptureDiagnostic } from '../import/addon';
import { ImportError } from '../import/errors';
import type { Profile } from '../model/profile';
import type { SessionHeader } from '../shared/diagnostics';
import {
  deriveFindings,
  displayLog,
  fromFrame,
  parseDiagnostics,
  parseLine,
  summarizeDiagnostics,
} from './diagnostics';
import { sessionHeader } from './session';
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
  /** The session's profile when the caller already opened and analysed it (a finished capture). */
  preloaded?: { opened: OpenedProfile; analysis: Analysis };
}

/** Runs the checks on a trace; a trace the importer rejects gets the X1 report instead of an exception. */
export async function checkTrace(
  tracePath: string,
  options: CheckOptions & {
    /** How to load the profile when it is more than the trace (a session). */
    load?: () => Promise<Profile>;
  } = {},
): Promise<CheckReport> {
  let profile;
  try {
    profile = await (options.load ? options.load() : openProfile(tracePath).then((o) => o.profile));
  } catch (error) {
    // X1 reports a trace that is not valid JSON; valid JSON that is no trace at all is bad input, as everywhere.
    if (error instanceof ImportError && !/^not a trace\b/.test(error.problem))
      return importFailureReport(tracePath, error.message, options.baseline);
    throw error;
  }
  return runChecks(profile, analyze(profile), options);
}

/**
 * The lines the capture recorded (capture.fpc's diagnostics frame) and a capture that could not be decoded, as
 * diagnostics; those diagnostics.jsonl already holds are not repeated.
 */
function captureDiagnostics(opened: OpenedProfile | undefined, known: readonly Diagnostic[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (opened?.captureProblem)
    out.push(fromFrame({ component: 'agent', severity: 'warning', message: opened.captureProblem }));
  const recorded = opened?.profile.metadata.captureDiagnostics as CaptureDiagnostic[] | undefined;
  const seen = new Set(known.map((d) => d.raw));
  for (const d of recorded ?? []) {
    if (seen.has(d.message)) continue;
    out.push(
      d.message.includes('[flagos')
        ? parseLine(d.message)
        : { ...fromFrame({ component: 'agent', severity: d.severity, message: d.message }), code: d.code },
    );
  }
  return out;
}

/** What the checks take from session.json: its profiling window, and a CPU-only capture's reason. */
function sessionCheckOptions(record: SessionRecord | undefined): CheckOptions {
  const { startNs, endNs } = record?.window ?? {};
  const mode = record?.mode;
  return {
    sessionWindow: startNs !== undefined && endNs !== undefined ? { startNs, endNs } : undefined,
    cpuOnlyReason:
      mode?.chosen === 'cpu' ? (mode.reason ? `mode cpu (${mode.reason})` : 'mode cpu') : undefined,
    captureMode: mode?.chosen,
  };
}

function withFindings(diagnostics: Diagnostic[]): Diagnostic[] {
  return [...diagnostics, ...deriveFindings(diagnostics)];
}

/** The bring-up of a trace, a capture, a session folder or a session's own file. */
export async function loadBringup(
  target: string | ProfileSource,
  options: BringupOptions = {},
): Promise<BringupModel> {
  const { preloaded, ...checkOptions } = options;
  const source = preloaded?.opened.source ?? (typeof target === 'string' ? locateProfile(target) : target);
  if (source.kind !== 'session') {
    const checks = await checkTrace(source.path, {
      ...checkOptions,
      load: async () => (await openProfile(source)).profile,
    });
    return modelOf({
      target: source.path,
      tracePath: source.path,
      checks,
      diagnostics: [],
      log: '',
      logPath: undefined,
    });
  }
  const logged = parseDiagnostics(source.diagnosticsText);
  const record = source.session?.record;
  let opened = preloaded?.opened;
  let checks: CheckReport | undefined;
  if (source.tracePath) {
    const sessionOptions = { ...checkOptions, ...sessionCheckOptions(record) };
    checks = preloaded
      ? runChecks(preloaded.opened.profile, preloaded.analysis, sessionOptions)
      : await checkTrace(source.tracePath, {
          ...sessionOptions,
          load: async () => (opened = await openProfile(source)).profile,
        });
  }
  const diagnostics = withFindings([...logged, ...captureDiagnostics(opened, logged)]);
  return modelOf(
    {
      target: source.folder,
      tracePath: source.tracePath,
      checks,
      diagnostics,
      log: displayLog(source.diagnosticsText),
      logPath: source.diagnosticsPath,
    },
    record,
  );
}

/** The model of what was read; its header and counts follow from the diagnostics (and session.json). */
function modelOf(read: Omit<BringupModel, 'header' | 'summary'>, record?: SessionRecord): BringupModel {
  const summary = summarizeDiagnostics(read.diagnostics);
  return { ...read, header: sessionHeader(record, summary), summary };
}

/** A FLAGOS_TRACE log on its own (stderr text or diagnostics.jsonl). */
export function bringupFromLog(logPath: string, text: string): BringupModel {
  const diagnostics = withFindings(parseDiagnostics(text));
  return modelOf({
    target: logPath,
    tracePath: undefined,
    checks: undefined,
    diagnostics,
    log: displayLog(text),
    logPath,
  });
}
