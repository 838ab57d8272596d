/**
 * Messages between the host and the bring-up view's webview (re-exported by extension/protocol.ts, the one
 * channel module). It imports only extension/shared/: the webview bundles whatever this file pulls in.
 */
import type { CheckReport } from '../shared/checks';
import type { Diagnostic, DiagnosticsSummary, SessionHeader } from '../shared/diagnostics';

export interface BringupView {
  target: string;
  tracePath: string | undefined;
  logPath: string | undefined;
  header: SessionHeader;
  checks: CheckReport | undefined;
  diagnostics: Diagnostic[];
  /** Diagnostics left out of `diagnostics` to keep the message small (debug lines of very long logs). */
  diagnosticsOmitted: number;
  summary: DiagnosticsSummary;
  log: string;
  logTruncated: boolean;
}

export type BringupHostToWebview =
  | { type: 'bringup.show'; view: BringupView }
  | { type: 'bringup.busy'; text: string }
  | { type: 'bringup.error'; text: string }
  | { type: 'bringup.empty' };

export type BringupWebviewToHost =
  | { type: 'bringup.ready' }
  | { type: 'bringup.open' }
  | { type: 'bringup.copyReport' }
  | { type: 'bringup.runParity' }
  | { type: 'bringup.rerun' }
  | { type: 'bringup.openLog'; line: number };

const WEBVIEW_TYPES = new Set([
  'bringup.ready',
  'bringup.open',
  'bringup.copyReport',
  'bringup.runParity',
  'bringup.rerun',
  'bringup.openLog',
]);

export function isBringupWebviewToHost(value: unknown): value is BringupWebviewToHost {
  return (
    !!value && typeof value === 'object' && WEBVIEW_TYPES.has(String((value as { type?: unknown }).type))
  );
}

/** Limits that keep one postMessage small however long the FLAGOS_TRACE log is. */
export const MAX_VIEW_DIAGNOSTICS = 5000;
export const MAX_VIEW_LOG_CHARS = 2_000_000;
