import { analyze } from '../analysis/analyze';
import { LINE_KIND_LABELS } from '../analysis/lines';
import { buildSummary, type SummaryJson } from '../analysis/summary';
import { openProfile } from '../capture/open';
import { terminalText } from '../shared/text';
import type { CliCommand } from './commands';
import { UserError } from '../import/errors';
import { parseCommandArgs } from './errors';
import { formatUs } from '../shared/format';
import { formatTable } from './format';

export const summaryCommand: CliCommand = {
  synopsis: 'summary TRACE|SESSION [--json] [--top N]   ops, kernels and source lines by device time',
  async run(argv) {
    const parsed = parseCommandArgs(
      argv,
      { json: { type: 'boolean' }, top: { type: 'string' } },
      'usage: flagprof summary TRACE|SESSION [--json] [--top N]',
    );
    const [target, ...extra] = parsed.positionals;
    if (!target || extra.length > 0)
      throw new UserError('usage: flagprof summary TRACE|SESSION [--json] [--top N]');
    const top = parsed.values.top === undefined ? 15 : Number(parsed.values.top);
    if (!Number.isInteger(top) || top <= 0)
      throw new UserError(`--top: expected a positive integer, got '${parsed.values.top}'`);
    const { profile } = await openProfile(target);
    const summary = buildSummary(analyze(profile));
    for (const warning of summary.source.warnings)
      process.stderr.write(`flagprof: warning: ${terminalText(target)}: ${terminalText(warning)}\n`);
    process.stdout.write(
      parsed.values.json ? `${JSON.stringify(summary, null, 1)}\n` : renderSummary(summary, top),
    );
    return 0;
  },
};

/** The summary as text; every name from the trace goes through terminalText (the table cells in formatTable). */
export function renderSummary(summary: SummaryJson, top: number): string {
  const out: string[] = [];
  const d = summary.device_events;
  out.push(
    `${terminalText(summary.source.path)}  (${terminalText(summary.source.format)}, ${summary.source.events.toLocaleString('en-US')} events)`,
  );
  const counts = Object.entries(summary.counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n.toLocaleString('en-US')}`)
    .join(' · ');
  out.push(counts);
  out.push(
    `flows: ${summary.flows.paired} paired, ${summary.flows.start_only} start-only, ${summary.flows.finish_only} finish-only`,
  );
  out.push(
    `device events: ${d.total}, linked to a runtime call ${d.linked_to_runtime}, to an op ${d.linked_to_op} ` +
      `(External id ${d.by_provenance.external_id}, enclosure ${d.by_provenance.enclosure}, none ${d.by_provenance.none})`,
  );
  const device = d.total > 0;
  if (!device) out.push('no device activity in this profile: CPU times only');
  out.push('');
  out.push(`Top ops by ${device ? 'device' : 'CPU'} self time (of ${summary.ops.length})`);
  const opColumns = device
    ? ['op', 'calls', 'device self', 'device total', 'CPU self', 'CPU total']
    : ['op', 'calls', 'CPU self', 'CPU total'];
  out.push(
    formatTable(
      opColumns,
      summary.ops
        .slice(0, top)
        .map((o) => [
          o.name,
          String(o.calls),
          ...(device ? [formatUs(o.device_self_us), formatUs(o.device_total_us)] : []),
          formatUs(o.cpu_self_us),
          formatUs(o.cpu_total_us),
        ]),
    ),
  );
  if (summary.kernels.length > 0) {
    out.push('');
    out.push(`Top kernels by time (of ${summary.kernels.length})`);
    out.push(
      formatTable(
        ['kernel', 'count', 'total', 'launched by'],
        summary.kernels
          .slice(0, top)
          .map((k) => [k.name, String(k.count), formatUs(k.total_us), k.top_op || '—']),
      ),
    );
  }
  if (summary.lines.length > 0) {
    const exact = summary.lines.some((l) => l.exact);
    out.push('');
    out.push(
      `Top source lines (${exact ? 'exact call sites' : 'function level: def lines of the enclosing Python function'}; self: the line's own ops, total: with callees)`,
    );
    out.push(
      formatTable(
        device
          ? ['line', 'function', 'device self', 'device total', 'CPU self', 'CPU total', 'ops']
          : ['line', 'function', 'CPU self', 'CPU total', 'ops'],
        summary.lines
          .slice(0, top)
          .map((l) => [
            `${l.file}:${l.line}${l.kind && l.kind !== 'function' ? ` (${LINE_KIND_LABELS[l.kind]})` : ''}`,
            l.function,
            ...(device ? [formatUs(l.device_self_us), formatUs(l.device_total_us)] : []),
            formatUs(l.cpu_self_us),
            formatUs(l.cpu_total_us),
            String(l.ops),
          ]),
      ),
    );
  }
  return `${out.join('\n')}\n`;
}
