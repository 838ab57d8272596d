/** The bring-up report as markdown, for bug reports ("FlagOS: Copy Bring-up Report", `flagprof check --markdown`). */
import type { CheckResult, EvidenceEvent } from '../analysis/checks/types';
import type { BringupModel } from './load';
import type { Diagnostic } from './types';
import { markdownCode, visibleText } from '../shared/text';
import { formatDuration } from '../shared/format';

export const STATUS_MARK: Record<CheckResult['status'], string> = {
  pass: '✅',
  fail: '❌',
  skip: '⏭️',
  info: 'ℹ️',
};

/**
 * Text in a Markdown table cell: invisible characters written visibly, and the characters that would start a
 * link, an image, HTML or a new cell escaped (names come from the trace, which may be someone else's).
 */
function cell(text: string): string {
  return visibleText(text).replace(/[\\[\]<>|!`]/g, (c) => `\\${c}`);
}

function evidenceTable(events: EvidenceEvent[]): string[] {
  if (events.length === 0) return [];
  const out = [
    '| cat | name | ts (µs) | dur (µs) | correlation | External id | note |',
    '|---|---|---:|---:|---:|---:|---|',
  ];
  for (const e of events)
    out.push(
      `| ${markdownCode(e.cat, { tableCell: true })} | ${markdownCode(e.name, { tableCell: true })} | ${e.tsUs} | ${e.durUs} | ${e.correlation ?? ''} | ${e.externalId ?? ''} | ${cell(e.note ?? '')} |`,
    );
  return out;
}

function countsLine(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  return entries.length ? entries.map(([k, v]) => `${k} ${v}`).join(' · ') : '';
}

function failureSection(r: CheckResult): string[] {
  const out = [
    `### ${STATUS_MARK[r.status]} ${r.id} ${r.title}${r.required ? '' : ' (not required)'}`,
    '',
    r.summary,
    '',
  ];
  if (r.hint) out.push(`**Fix:** ${r.hint}`, '');
  const counts = countsLine(r.counts);
  if (counts) out.push(`Counts: ${counts}`, '');
  for (const d of r.details) out.push(`- ${d}`);
  if (r.details.length) out.push('');
  const table = evidenceTable(r.examples);
  if (table.length) out.push(...table, '');
  return out;
}

const FENCE = '```';

export function buildMarkdownReport(model: BringupModel, options: { maxLogLines?: number } = {}): string {
  const out: string[] = ['# FlagOS bring-up report', ''];
  const h = model.header;
  const c = model.checks;
  if (c) {
    out.push(
      `- Trace: ${markdownCode(c.source.path)} (${c.source.format}, ${c.source.events.toLocaleString('en-US')} events)`,
    );
    out.push(
      `- Platform: ${c.platform} (${c.platformReason}); runtime category: ${c.runtimeCategory || 'none'}`,
    );
    out.push(
      `- Capture window: ${c.window ? `${c.window.source}, ${formatDuration(c.window.endNs - c.window.startNs)}` : 'none'}`,
    );
    out.push(
      `- Baseline: ${c.baseline.source}${c.baseline.generatedBy ? ` (${c.baseline.generatedBy})` : ''}`,
    );
  }
  const session = [
    h.mode && `mode ${cell(h.mode)}${h.modeReason ? ` (${cell(h.modeReason)})` : ''}`,
    h.tracer && `tracer ${cell(h.tracer)}${h.tracerReason ? ` (${cell(h.tracerReason)})` : ''}`,
    h.library && `library ${markdownCode(h.library)}`,
    h.apiVersion && `API version ${h.apiVersion}`,
    h.device && `device ${cell(h.device)}`,
    h.torch && `torch ${h.torch}`,
  ].filter(Boolean);
  if (session.length) out.push(`- Session: ${session.join(' · ')}`);
  out.push('');

  if (c) {
    const t = c.totals;
    out.push(
      `## Checks: ${t.pass} passed · ${t.fail} failed (${t.requiredFailed} required) · ${t.info} differ from torch-cuda by design · ${t.skip} skipped`,
      '',
    );
    out.push('| | Check | Result |', '|---|---|---|');
    for (const r of c.results)
      out.push(
        `| ${STATUS_MARK[r.status]} | ${r.id} ${cell(r.title)} | ${cell(r.summary)}${r.byDesign ? ` (by design: ${cell(r.byDesign)})` : ''} |`,
      );
    out.push('');
    const failed = c.results.filter((r) => r.status === 'fail');
    if (failed.length) {
      out.push('## Failures', '');
      for (const r of failed) out.push(...failureSection(r));
    }
  }

  const s = model.summary;
  if (model.diagnostics.length) {
    out.push(
      `## FLAGOS_TRACE diagnostics: ${s.total} (${s.bySeverity.error} errors, ${s.bySeverity.warning} warnings)`,
      '',
    );
    const lifted = [
      s.eventsDrained !== undefined && `events drained ${s.eventsDrained}`,
      s.candidates !== undefined &&
        `linked ${s.linked}/${s.candidates}${s.resolver ? ` (resolver ${s.resolver})` : ''}`,
      s.totalDevice !== undefined && `in window ${s.inWindow}/${s.totalDevice}`,
      (s.buffersRequested || s.buffersCompleted) &&
        `buffers requested ${s.buffersRequested} / completed ${s.buffersCompleted}`,
      Object.keys(s.recordsDropped).length &&
        `records dropped: ${Object.entries(s.recordsDropped)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      Object.keys(s.enableResults).length &&
        `enable results: ${Object.entries(s.enableResults)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
    ].filter(Boolean);
    if (lifted.length) out.push(`Counts: ${lifted.join(' · ')}`, '');
    const serious = model.diagnostics.filter((d) => d.severity === 'error' || d.severity === 'warning');
    for (const d of serious.slice(0, 50)) out.push(...diagnosticLines(d));
    if (serious.length > 50) out.push(`- … ${serious.length - 50} more`);
    if (serious.length) out.push('');
  }
  if (model.log) {
    const max = options.maxLogLines ?? 200;
    const lines = model.log.split('\n');
    out.push(
      `<details><summary>FLAGOS_TRACE log${lines.length > max ? ` (first ${max} of ${lines.length} lines)` : ''}</summary>`,
      '',
      FENCE,
      ...lines.slice(0, max).map((l) => visibleText(l, Number.POSITIVE_INFINITY).replace(/```/g, "'''")),
      FENCE,
      '',
      '</details>',
      '',
    );
  }
  return out.join('\n');
}

function diagnosticLines(d: Diagnostic): string[] {
  const mark = d.severity === 'error' ? '❌' : '⚠️';
  const code = d.code ? ` ${d.code}` : '';
  return [
    `- ${mark} **${cell(d.component)}${code}** (line ${d.line}): ${cell(d.message)}`,
    `  ${markdownCode(d.raw.split('\n')[0])}`,
  ];
}
