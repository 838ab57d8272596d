import { readFileSync } from 'node:fs';
import type { Baseline, CheckReport } from '../analysis/checks';
import { BaselineError, parseBaseline } from '../analysis/checks';
import { loadBringup } from '../bringup/load';
import { buildMarkdownReport } from '../bringup/report';
import { terminalLines, terminalText } from '../shared/text';
import type { CliCommand } from './commands';
import { UserError } from '../import/errors';
import { parseCommandArgs } from './errors';

const USAGE = 'usage: flagprof check TRACE|SESSION [--baseline FILE] [--platform NAME] [--json | --markdown]';

/** Reads a baseline file: ours, or upstream's profiler_cuda_baseline.json as it is. */
export function loadBaselineFile(file: string): Baseline {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UserError(
      `${file}: cannot read the baseline (${(error as NodeJS.ErrnoException).code ?? error})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UserError(`${file}: the baseline is not JSON (${(error as Error).message})`);
  }
  try {
    return parseBaseline(value, file);
  } catch (error) {
    if (error instanceof BaselineError) throw new UserError(error.message);
    throw error;
  }
}

const MARK = { pass: 'PASS', fail: 'FAIL', skip: 'skip', info: 'info' } as const;

/** The header: what was read, the platform and why, the window and the baseline. */
function headerLines(report: CheckReport): string[] {
  return [
    `${terminalText(report.source.path)}  (${terminalText(report.source.format)}, ${report.source.events.toLocaleString('en-US')} events)`,
    `platform ${terminalText(report.platform)} (${terminalText(report.platformReason)}); runtime category ${terminalText(report.runtimeCategory || 'none')}`,
    `capture window: ${terminalText(report.window ? report.window.source : 'none')}; baseline: ${terminalText(report.baseline.source)}`,
  ];
}

/** One row per check; a skip shared by several checks names its group instead of repeating the reason. */
function resultRows(report: CheckReport): string[] {
  const width = Math.max(...report.results.map((r) => r.id.length + r.title.length + 1));
  const groupOf = new Map<string, number>();
  sharedSkips(report).forEach((g) => g.ids.forEach((id) => groupOf.set(id, g.n)));
  return report.results.map((r) => {
    const mark = `${MARK[r.status]}${r.status === 'fail' && !r.required ? '*' : ''}`.padEnd(5);
    const group = groupOf.get(r.id);
    const text =
      group !== undefined
        ? `skipped for reason (${group}) below`
        : `${terminalText(r.summary)}${r.status === 'info' ? '  [differs from torch-cuda by design]' : ''}`;
    return `${mark}  ${`${r.id} ${r.title}`.padEnd(width)}  ${text}`;
  });
}

function failureLines(r: CheckReport['results'][number]): string[] {
  const out = ['', `${r.id} ${r.name}: ${terminalText(r.summary)}${r.required ? '' : ' (not required)'}`];
  if (r.location)
    out.push(
      `  at ${terminalText(r.location.file)}:${r.location.line}${r.location.column ? `:${r.location.column}` : ''}${r.location.op ? ` (${terminalText(r.location.op)})` : ''}`,
    );
  const counts = Object.entries(r.counts)
    .map(([k, v]) => `${terminalText(k)} ${v}`)
    .join(' · ');
  if (counts) out.push(`  counts: ${counts}`);
  for (const d of r.details) out.push(`  ${terminalText(d)}`);
  for (const e of r.examples.slice(0, 5))
    out.push(
      `  - [${terminalText(e.cat)}] ${terminalText(e.name, 200)} ts ${e.tsUs} µs dur ${e.durUs} µs${e.note ? `: ${terminalText(e.note)}` : ''}`,
    );
  if (r.hint) out.push(`  fix: ${terminalText(r.hint)}`);
  return out;
}

/** Results that differ from torch-cuda by design, each reason once with the checks it explains. */
function byDesignLines(report: CheckReport): string[] {
  const groups = new Map<string, string[]>();
  for (const r of report.results)
    if (r.status === 'info') groups.set(r.byDesign ?? '', [...(groups.get(r.byDesign ?? '') ?? []), r.id]);
  if (groups.size === 0) return [];
  const out = ['', 'Differs from torch-cuda by design (not a failure):'];
  for (const [why, ids] of groups) out.push(`  ${ids.join(', ')}: ${terminalText(why)}`);
  return out;
}

/** Skip reasons shared by more than one check, numbered for the rows that point at them. */
function sharedSkips(report: CheckReport): { reason: string; ids: string[]; n: number }[] {
  return report.skipGroups.filter((g) => g.ids.length > 1).map((g, n) => ({ ...g, n: n + 1 }));
}

function skipLines(report: CheckReport): string[] {
  const shared = sharedSkips(report);
  if (shared.length === 0) return [];
  return ['', 'Skipped:', ...shared.map((g) => `  (${g.n}) ${g.ids.join(', ')}: ${terminalText(g.reason)}`)];
}

/** The report as text. Results quote the trace (names, categories, metadata): each goes through terminalText. */
export function renderCheckReport(report: CheckReport): string {
  const out = [...headerLines(report), '', ...resultRows(report)];
  const failed = report.results.filter((r) => r.status === 'fail');
  for (const r of failed) out.push(...failureLines(r));
  out.push(...byDesignLines(report), ...skipLines(report));
  const t = report.totals;
  out.push('');
  out.push(
    `${t.pass} passed, ${t.fail} failed (${t.requiredFailed} required), ${t.info} differ by design, ${t.skip} skipped${failed.some((r) => !r.required) ? '  (* not required)' : ''}`,
  );
  return `${out.join('\n')}\n`;
}

export const checkCommand: CliCommand = {
  synopsis:
    'check TRACE|SESSION [--baseline FILE] [--platform NAME] [--json|--markdown]   structural parity checks (exit 1 on a required failure)',
  async run(argv) {
    const parsed = parseCommandArgs(
      argv,
      {
        baseline: { type: 'string' },
        platform: { type: 'string' },
        json: { type: 'boolean' },
        markdown: { type: 'boolean' },
      },
      USAGE,
    );
    const [target, ...extra] = parsed.positionals;
    if (!target || extra.length > 0) throw new UserError(USAGE);
    const baseline = parsed.values.baseline ? loadBaselineFile(parsed.values.baseline) : undefined;
    const model = await loadBringup(target, { baseline, platform: parsed.values.platform });
    const report = model.checks;
    if (!report) throw new UserError(`${target}: the session folder holds no trace (trace.json.gz)`);
    if (parsed.values.json) process.stdout.write(`${JSON.stringify(report, null, 1)}\n`);
    else if (parsed.values.markdown) process.stdout.write(terminalLines(buildMarkdownReport(model)));
    else process.stdout.write(renderCheckReport(report));
    return report.totals.requiredFailed > 0 ? 1 : 0;
  },
};
