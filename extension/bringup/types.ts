/**
 * Structured FLAGOS_TRACE diagnostics. The shapes the bring-up view receives are defined with the other wire
 * shapes (shared/diagnostics.ts); the agent's raw frames stay here, on the host.
 */

export { COMPONENTS, SEVERITIES } from '../shared/diagnostics';
export type { Component, Diagnostic, DiagnosticsSummary, Severity } from '../shared/diagnostics';

/** A structured frame as the native agent emits it (diagnostics.jsonl or the .fpc diagnostics frame). */
export interface DiagnosticFrame {
  component: string;
  severity: string;
  message: string;
  counts?: Record<string, number>;
}
