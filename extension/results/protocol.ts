/**
 * Messages between the host and the Results view's webview. It imports only extension/shared/: the webview
 * bundles whatever this file pulls in.
 */
import type { ResultsModel } from '../shared/results';

export type { ResultsModel } from '../shared/results';

export type ResultsHostToWebview =
  { type: 'results.show'; model: ResultsModel } | { type: 'results.error'; text: string };

export type ResultsWebviewToHost =
  | { type: 'results.ready' }
  | { type: 'results.openTimeline' }
  | { type: 'results.openBringup' }
  | { type: 'results.showOutput' }
  | { type: 'results.compare' }
  | { type: 'results.openLine'; file: string; line: number; column?: number };

const WEBVIEW_TYPES = new Set([
  'results.ready',
  'results.openTimeline',
  'results.openBringup',
  'results.showOutput',
  'results.compare',
  'results.openLine',
]);

export function isResultsWebviewToHost(value: unknown): value is ResultsWebviewToHost {
  if (!value || typeof value !== 'object') return false;
  const message = value as { type?: unknown; file?: unknown; line?: unknown };
  if (!WEBVIEW_TYPES.has(String(message.type))) return false;
  return (
    message.type !== 'results.openLine' ||
    (typeof message.file === 'string' && Number.isInteger(message.line))
  );
}
