/**
 * The summary as markdown, for the read-only view shown after a capture when no timeline consumes the profile.
 * It sits beside buildSummary (summary.ts), whose document it renders, so the editor can use it without reaching
 * into the command line; the terminal rendering of the same document is the command line's own (cli/summary.ts).
 */
import { pathToFileURL } from 'node:url';
import { LINE_KIND_LABELS } from './lines';
import type { SummaryJson } from './summary';
import { formatUs } from '../shared/format';
import { markdownCode, markdownText } from '../shared/text';

/** Free text of the run (paths, notes, function names): rendered as exactly these characters. */
function cell(text: string): string {
  return markdownText(text);
}

/** Names from the trace (ops, kernels): a code span no name can break out of, in a table cell. */
function name(text: string): string {
  return markdownCode(text, { tableCell: true });
}

export interface SummaryContext {
  script: string;
  sessionDir: string;
  exitCode: number;
  mode?: string;
  modeReason?: string;
  notes?: string[];
}

export function summaryMarkdown(summary: SummaryJson, context: SummaryContext, top = 15): string {
  const out: string[] = [];
  out.push(`# FlagOS profile: ${cell(context.script)}`, '');
  out.push(`- exit code: ${context.exitCode}`);
  if (context.mode)
    out.push(`- mode: ${context.mode}${context.modeReason ? ` (${cell(context.modeReason)})` : ''}`);
  out.push(`- session: ${markdownCode(context.sessionDir)}`);
  const d = summary.device_events;
  out.push(`- device events: ${d.total}, linked to an op: ${d.linked_to_op}`);
  for (const note of context.notes ?? []) out.push(`- note: ${cell(note)}`);
  if (summary.lines.length > 0) {
    const exact = summary.lines.some((l) => l.exact);
    out.push('', `## Source lines (${exact ? 'exact call sites' : 'function level'})`, '');
    out.push("Self: the line's own ops; total: with the functions it calls.", '');
    out.push(
      '| line | function | device self | device total | CPU self | CPU total | ops |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const l of summary.lines.slice(0, top)) {
      const link = l.file.startsWith('/') ? `${pathToFileURL(l.file).href}#L${l.line}` : undefined;
      const kind = l.kind && l.kind !== 'function' ? ` (${LINE_KIND_LABELS[l.kind]})` : '';
      const label = `${l.file.split('/').pop()}:${l.line}${kind}`;
      out.push(
        `| ${link ? `[${cell(label)}](<${link}>)` : cell(label)} | ${cell(l.function)} | ${formatUs(l.device_self_us)} | ${formatUs(l.device_total_us)} | ${formatUs(l.cpu_self_us)} | ${formatUs(l.cpu_total_us)} | ${l.ops} |`,
      );
    }
  }
  out.push(
    '',
    '## Ops',
    '',
    '| op | calls | device self | CPU self | CPU total |',
    '| --- | ---: | ---: | ---: | ---: |',
  );
  for (const o of summary.ops.slice(0, top)) {
    out.push(
      `| ${name(o.name)} | ${o.calls} | ${formatUs(o.device_self_us)} | ${formatUs(o.cpu_self_us)} | ${formatUs(o.cpu_total_us)} |`,
    );
  }
  if (summary.kernels.length > 0) {
    out.push('', '## Kernels', '', '| kernel | count | total | launched by |', '| --- | ---: | ---: | --- |');
    for (const k of summary.kernels.slice(0, top)) {
      out.push(
        `| ${name(k.name)} | ${k.count} | ${formatUs(k.total_us)} | ${k.top_op ? name(k.top_op) : '—'} |`,
      );
    }
  }
  return `${out.join('\n')}\n`;
}
