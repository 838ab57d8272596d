/**
 * A capture session folder as the bring-up view reads it: the trace, session.json (mode, why, window, devices)
 * and diagnostics.jsonl (the FLAGOS_TRACE lines and the agent's frames). Every file is optional: a folder holding
 * only a trace still gets its checks.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseDiagnostics, summarizeDiagnostics } from './diagnostics';
import type { Diagnostic, DiagnosticsSummary } from './types';
import type { SessionHeader } from './session-header';

export type { SessionHeader } from './session-header';

export interface SessionFiles {
  folder: string;
  tracePath: string | undefined;
  sessionJson: Record<string, unknown> | undefined;
  diagnosticsPath: string | undefined;
}

const TRACE_NAMES = ['trace.json.gz', 'trace.json'];
const DIAGNOSTICS_NAMES = ['diagnostics.jsonl', 'diagnostics.log', 'flagos_trace.log'];

export function isSessionFolder(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}

export function findSessionFiles(folder: string): SessionFiles {
  const has = (name: string): string | undefined => {
    const p = path.join(folder, name);
    return existsSync(p) ? p : undefined;
  };
  let tracePath = TRACE_NAMES.map(has).find(Boolean);
  if (!tracePath) {
    const candidate = readdirSync(folder).find((f) =>
      /\.pt\.trace\.json(\.gz)?$|trace\.json(\.gz)?$/.test(f),
    );
    if (candidate) tracePath = path.join(folder, candidate);
  }
  let sessionJson: Record<string, unknown> | undefined;
  const sessionPath = has('session.json');
  if (sessionPath) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(sessionPath, 'utf8'));
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        sessionJson = parsed as Record<string, unknown>;
    } catch {
      sessionJson = undefined;
    }
  }
  return { folder, tracePath, sessionJson, diagnosticsPath: DIAGNOSTICS_NAMES.map(has).find(Boolean) };
}

/** First present value among dotted paths ("mode", "capture.mode", ...). */
function pick(o: Record<string, unknown> | undefined, ...paths: string[]): unknown {
  if (!o) return undefined;
  for (const p of paths) {
    let v: unknown = o;
    for (const k of p.split('.'))
      v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    if (v !== undefined && v !== null && v !== '') return v;
  }
  return undefined;
}

function str(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function toBigInt(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.round(v));
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return BigInt(v.trim());
  return undefined;
}

/**
 * The profiling window of session.json, absolute epoch ns. Accepted shapes: {start_ns, end_ns} (or startNs/endNs)
 * under "window", "profiling_window" or "profilingWindow", or a [start, end] pair of epoch ns.
 */
export function sessionWindow(
  session: Record<string, unknown> | undefined,
): { startNs: bigint; endNs: bigint } | undefined {
  const w = pick(session, 'profiling_window', 'profilingWindow', 'window', 'capture.window');
  if (Array.isArray(w) && w.length === 2) {
    const [a, b] = w.map(toBigInt);
    return a !== undefined && b !== undefined ? { startNs: a, endNs: b } : undefined;
  }
  if (w && typeof w === 'object') {
    const o = w as Record<string, unknown>;
    const a = toBigInt(o.start_ns ?? o.startNs);
    const b = toBigInt(o.end_ns ?? o.endNs);
    return a !== undefined && b !== undefined ? { startNs: a, endNs: b } : undefined;
  }
  return undefined;
}

const TRACER_OF_COMPONENT: Record<string, string> = {
  cupti: 'CUPTI (CUDA / MetaX MCPTI / PPU)',
  mspti: 'MSPTI (Ascend)',
  mupti: 'MUPTI (MUSA)',
  topspti: 'TOPSPTI (GCU)',
  roctracer: 'ROCtracer (DCU)',
};

/** The session header: session.json where it says, the FLAGOS_TRACE lines where it does not. */
export function sessionHeader(
  session: Record<string, unknown> | undefined,
  summary: DiagnosticsSummary | undefined,
): SessionHeader {
  const tracerFromLog = summary?.tracer ? (TRACER_OF_COMPONENT[summary.tracer] ?? summary.tracer) : '';
  const tracer = str(pick(session, 'tracer.name', 'tracer', 'vendor', 'vendor_tracer', 'device_tracer'));
  const library = str(pick(session, 'tracer.library', 'library', 'tracer_library')) || summary?.library || '';
  const apiVersion =
    str(pick(session, 'tracer.api_version', 'tracer.apiVersion', 'api_version', 'apiVersion')) ||
    summary?.apiVersion ||
    '';
  const devices = pick(session, 'device', 'devices', 'device_properties', 'deviceProperties');
  const device = Array.isArray(devices)
    ? [
        ...new Set(
          devices.map((d) => str(d && typeof d === 'object' ? (d as Record<string, unknown>).name : d)),
        ),
      ].join(', ')
    : str(
        devices && typeof devices === 'object'
          ? ((devices as Record<string, unknown>).name ?? devices)
          : devices,
      );
  const exit = pick(session, 'exit_code', 'exitCode');
  return {
    mode: str(pick(session, 'mode.chosen', 'mode', 'capture_mode')),
    modeReason: str(pick(session, 'mode.reason', 'mode_reason', 'modeReason', 'reason', 'why')),
    tracer: tracer || tracerFromLog,
    tracerReason:
      str(pick(session, 'tracer.reason', 'tracer_reason', 'tracerReason')) ||
      (!tracer && tracerFromLog ? 'named by the FLAGOS_TRACE lines' : ''),
    library,
    apiVersion,
    device,
    torch: str(pick(session, 'torch.version', 'torch_version', 'torch', 'versions.torch')),
    python: str(pick(session, 'python.version', 'python_version', 'python', 'versions.python')),
    exitCode: typeof exit === 'number' ? exit : undefined,
  };
}

export interface LoadedDiagnostics {
  path: string | undefined;
  text: string;
  diagnostics: Diagnostic[];
  summary: DiagnosticsSummary;
}

export function loadDiagnostics(file: string | undefined): LoadedDiagnostics {
  const text = file ? readFileSync(file, 'utf8') : '';
  const diagnostics = parseDiagnostics(text);
  return { path: file, text, diagnostics, summary: summarizeDiagnostics(diagnostics) };
}
