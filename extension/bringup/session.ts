/** The bring-up view's session header: session.json where it says, the FLAGOS_TRACE lines where it does not. */
import type { SessionRecord } from '../capture/session';
import type { SessionHeader } from '../shared/diagnostics';
import type { DiagnosticsSummary } from './types';

const TRACER_OF_COMPONENT: Record<string, string> = {
  cupti: 'CUPTI (CUDA / MetaX MCPTI / PPU)',
  mspti: 'MSPTI (Ascend)',
  mupti: 'MUPTI (MUSA)',
  topspti: 'TOPSPTI (GCU)',
  roctracer: 'ROCtracer (DCU)',
};

/** The session header. The tracer, its library and API version are what the tracer's own lines name. */
export function sessionHeader(
  record: SessionRecord | undefined,
  summary: DiagnosticsSummary | undefined,
): SessionHeader {
  const tracer = summary?.tracer ? (TRACER_OF_COMPONENT[summary.tracer] ?? summary.tracer) : '';
  return {
    mode: record?.mode?.chosen ?? '',
    modeReason: record?.mode?.reason ?? '',
    tracer,
    tracerReason: tracer ? 'named by the FLAGOS_TRACE lines' : '',
    library: summary?.library ?? '',
    apiVersion: summary?.apiVersion ?? '',
    device: [...new Set(record?.devices)].join(', '),
    torch: record?.torch?.version ?? '',
    python: record?.python?.version ?? '',
    exitCode: record?.exitCode,
  };
}
