/** The bring-up view's session header: session.json where it says, the FLAGOS_TRACE lines where it does not. */
import type { SessionRecord } from '../capture/session';
import type { SessionHeader } from '../shared/diagnostics';
import { vendorRow } from '../shared/vendors';
import type { DiagnosticsSummary } from './types';

/** The tracer as the header names it: the vendor's API and accelerators, or that no vendor library loaded. */
function tracerText(summary: DiagnosticsSummary | undefined): string {
  if (summary?.noLibraryLoaded) {
    const { tried } = summary.noLibraryLoaded;
    return `no vendor activity library loaded${tried.length ? ` (tried ${tried.join(', ')})` : ''}`;
  }
  if (!summary?.tracer) return '';
  return vendorRow(summary.tracer)?.tracer ?? summary.tracer;
}

/** The session header. The tracer, its library and API version are what the tracer's own lines name. */
export function sessionHeader(
  record: SessionRecord | undefined,
  summary: DiagnosticsSummary | undefined,
): SessionHeader {
  const tracer = tracerText(summary);
  return {
    mode: record?.mode?.chosen ?? '',
    modeReason: record?.mode?.reason ?? '',
    tracer,
    tracerReason: !tracer
      ? ''
      : summary?.noLibraryLoaded
        ? 'as the FLAGOS_TRACE lines say'
        : 'named by the FLAGOS_TRACE lines',
    library: summary?.library ?? '',
    apiVersion: summary?.apiVersion ?? '',
    device: [...new Set(record?.devices)].join(', '),
    torch: record?.torch?.version ?? '',
    python: record?.python?.version ?? '',
    exitCode: record?.exitCode,
  };
}
