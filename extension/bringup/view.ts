/** What the host posts to the bring-up webview for a model (pure, so the CLI tests and the host share it). */
import type { BringupModel } from './load';
import type { BringupView } from './protocol';
import { MAX_VIEW_DIAGNOSTICS, MAX_VIEW_LOG_CHARS } from './protocol';

/** The model trimmed to what one postMessage should carry. */
export function toView(model: BringupModel): BringupView {
  let diagnostics = model.diagnostics;
  let omitted = 0;
  if (diagnostics.length > MAX_VIEW_DIAGNOSTICS) {
    // Keep every error, warning and info line; drop debug lines (the chatty per-record ones) beyond the cap.
    const important = diagnostics.filter((d) => d.severity !== 'debug');
    const room = Math.max(0, MAX_VIEW_DIAGNOSTICS - important.length);
    const debug = diagnostics.filter((d) => d.severity === 'debug').slice(0, room);
    const keep = new Set([...important, ...debug]);
    diagnostics = diagnostics.filter((d) => keep.has(d));
    omitted = model.diagnostics.length - diagnostics.length;
  }
  const logTruncated = model.log.length > MAX_VIEW_LOG_CHARS;
  return {
    target: model.target,
    tracePath: model.tracePath,
    logPath: model.logPath,
    header: model.header,
    checks: model.checks,
    diagnostics,
    diagnosticsOmitted: omitted,
    summary: model.summary,
    log: logTruncated ? model.log.slice(0, MAX_VIEW_LOG_CHARS) : model.log,
    logTruncated,
  };
}
