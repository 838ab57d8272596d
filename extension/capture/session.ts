/**
 * A capture session folder: trace.json.gz (Kineto), sites.json (exact call sites), session.json (how the run went),
 * diagnostics.jsonl (FLAGOS_TRACE lines) and, in agent mode, capture.fpc. Which file is which, and session.json
 * read typed; extension/capture/open.ts turns a folder into one Profile.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ImportError } from '../import/errors';

/** The names the capture agent and its launcher write. */
export const SESSION_FILES = {
  trace: 'trace.json.gz',
  sites: 'sites.json',
  session: 'session.json',
  diagnostics: 'diagnostics.jsonl',
  capture: 'capture.fpc',
  /** Kineto's own log lines, taken out of the script's stderr (capture/kinetoLog.ts). */
  kinetoLog: 'kineto.log',
} as const;

/** A folder put together by hand or by a workload script: its trace may be plain JSON, or named by torch. */
const TRACE_NAMES = [SESSION_FILES.trace, 'trace.json'];
const TRACE_PATTERN = /\.pt\.trace\.json(\.gz)?$|trace\.json(\.gz)?$/;
/** A FLAGOS_TRACE log kept beside the trace under another name (stderr saved by hand). */
const DIAGNOSTICS_NAMES = [SESSION_FILES.diagnostics, 'diagnostics.log', 'flagos_trace.log'];

/** A session folder the product cannot load: one line naming the folder and why. */
export class SessionError extends ImportError {
  constructor(dir: string, problem: string) {
    super(dir, undefined, problem);
    this.name = 'SessionError';
  }
}

function present(folder: string, name: string): string | undefined {
  const file = path.join(folder, name);
  return existsSync(file) ? file : undefined;
}

/** The folder's trace: trace.json.gz, else trace.json, else the first file named like a trace. */
export function sessionTrace(folder: string): string | undefined {
  const named = TRACE_NAMES.map((name) => present(folder, name)).find(Boolean);
  if (named) return named;
  let names: string[] = [];
  try {
    names = readdirSync(folder);
  } catch {
    return undefined;
  }
  const found = names.find((name) => TRACE_PATTERN.test(name));
  return found ? path.join(folder, found) : undefined;
}

export function sessionDiagnostics(folder: string): string | undefined {
  return DIAGNOSTICS_NAMES.map((name) => present(folder, name)).find(Boolean);
}

export function sessionCapture(folder: string): string | undefined {
  return present(folder, SESSION_FILES.capture);
}

/**
 * The session a file belongs to: a trace or capture.fpc that is its folder's own, in a folder with session.json.
 * Opened alone it would lose the exact call sites (sites.json) and, in agent mode, every device event.
 */
export function sessionOfFile(file: string): string | undefined {
  const folder = path.dirname(file);
  if (!present(folder, SESSION_FILES.session)) return undefined;
  const own =
    path.basename(file) === SESSION_FILES.capture ||
    sessionTrace(folder) === path.join(folder, path.basename(file));
  return own ? folder : undefined;
}

/**
 * session.json as the capture agent writes it (native/agent/python/flagprof_agent/__main__.py, Session): the
 * fields the product reads. A field of another type than the agent writes reads as absent.
 */
export interface SessionRecord {
  status?: string;
  exitCode?: number;
  /** The script that ran, absolute. */
  script?: string;
  mode?: { requested?: string; chosen?: string; reason?: string };
  /** null: the interpreter had no torch, so nothing was profiled. */
  torch?: { version?: string } | null;
  python?: { version?: string; executable?: string };
  /** The devices torch saw, by name where it had one. */
  devices: string[];
  /** The profiling window, absolute epoch ns (the agent writes them as decimal text: doubles would round them). */
  window?: { startNs?: bigint; endNs?: bigint };
  /** What happened to the run, in order; the last says why a profile is missing. */
  notes: string[];
  /** The exception the script ended with (not Ctrl-C or a signal), and where in the user's code it was raised. */
  exception?: { type: string; message: string; file?: string; line?: number; column?: number };
}

/** session.json read: its typed fields, and the whole document as written (for the checks' segment count). */
export interface SessionFile {
  record: SessionRecord;
  document: Record<string, unknown>;
}

type Fields = Record<string, unknown>;

function fields(value: unknown): Fields | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Fields) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function epochNs(value: unknown): bigint | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return BigInt(Math.round(value));
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return BigInt(value.trim());
  return undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

function exceptionOf(exception: Fields | undefined): SessionRecord['exception'] {
  const type = text(exception?.type);
  if (!exception || !type) return undefined;
  return {
    type,
    message: text(exception.message) ?? '',
    file: text(exception.file),
    line: count(exception.line),
    column: count(exception.column),
  };
}

function recordOf(document: Fields): SessionRecord {
  const mode = fields(document.mode);
  const torch = fields(document.torch);
  const python = fields(document.python);
  const window = fields(document.window);
  const devices = Array.isArray(document.devices) ? document.devices : [];
  return {
    status: text(document.status),
    exitCode: typeof document.exitCode === 'number' ? document.exitCode : undefined,
    script: text(document.script),
    mode: mode && { requested: text(mode.requested), chosen: text(mode.chosen), reason: text(mode.reason) },
    torch: document.torch === null ? null : torch && { version: text(torch.version) },
    python: python && { version: text(python.version), executable: text(python.executable) },
    devices: devices.map((d) => text(fields(d)?.name)).filter((name): name is string => Boolean(name)),
    window: window && { startNs: epochNs(window.startNs), endNs: epochNs(window.endNs) },
    exception: exceptionOf(fields(document.exception)),
    notes: Array.isArray(document.notes)
      ? document.notes.filter((n): n is string => typeof n === 'string')
      : [],
  };
}

/** DIR/session.json, or undefined when there is none or it is not a JSON object (a run killed mid-write). */
export function readSessionFile(dir: string): SessionFile | undefined {
  const file = present(dir, SESSION_FILES.session);
  if (!file) return undefined;
  try {
    const document = fields(JSON.parse(readFileSync(file, 'utf8')));
    return document && { record: recordOf(document), document };
  } catch {
    return undefined;
  }
}

/** A line of diagnostics.jsonl: {"ts": epoch ms, "line": the text the tracer printed}. */
export interface DiagnosticLine {
  ts: number;
  line: string;
}

export function diagnosticLines(text: string): DiagnosticLine[] {
  const lines: DiagnosticLine[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    try {
      const parsed = JSON.parse(raw) as Partial<DiagnosticLine>;
      if (typeof parsed.line === 'string') lines.push({ ts: Number(parsed.ts) || 0, line: parsed.line });
    } catch {
      // A line cut short by a killed run: keep the text, it is what the tracer said.
      lines.push({ ts: 0, line: raw });
    }
  }
  return lines;
}
