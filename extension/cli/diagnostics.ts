import { readFileSync } from 'node:fs';
import { bringupFromLog, loadBringup } from '../bringup/load';
import type { BringupModel } from '../bringup/load';
import type { Diagnostic } from '../bringup/types';
import { locateProfile } from '../capture/open';
import { terminalText } from '../shared/text';
import type { CliCommand } from './commands';
import { UserError } from '../import/errors';
import { parseCommandArgs } from './errors';

const USAGE = 'usage: flagprof diagnostics SESSION|LOG [--json] [--all]';

/** The diagnostics as text. Every field comes from a log someone else may have written: through terminalText. */
function renderDiagnostics(model: BringupModel, all: boolean): string {
  const out: string[] = [];
  const s = model.summary;
  const h = model.header;
  out.push(
    `${terminalText(model.logPath ?? model.target)}: ${s.total} diagnostics (${s.bySeverity.error} errors, ${s.bySeverity.warning} warnings, ${s.bySeverity.info} info, ${s.bySeverity.debug} debug)`,
  );
  const header = [
    h.mode && `mode ${terminalText(h.mode)}${h.modeReason ? ` (${terminalText(h.modeReason)})` : ''}`,
    h.tracer &&
      `tracer ${terminalText(h.tracer)}${h.tracerReason ? ` (${terminalText(h.tracerReason)})` : ''}`,
    h.library && `library ${terminalText(h.library)}`,
    h.apiVersion && `API version ${terminalText(String(h.apiVersion))}`,
  ].filter(Boolean);
  if (header.length) out.push(header.join(' · '));
  const lifted = [
    s.eventsDrained !== undefined && `events drained ${s.eventsDrained}`,
    s.candidates !== undefined &&
      `linked ${s.linked}/${s.candidates}${s.resolver ? ` (resolver ${terminalText(s.resolver)})` : ''}`,
    s.totalDevice !== undefined && `in window ${s.inWindow}/${s.totalDevice}`,
    (s.buffersRequested || s.buffersCompleted) &&
      `buffers requested ${s.buffersRequested}, completed ${s.buffersCompleted}`,
    Object.keys(s.recordsDropped).length &&
      `dropped ${Object.entries(s.recordsDropped)
        .map(([k, v]) => `${terminalText(k)} ${v}`)
        .join(', ')}`,
    Object.keys(s.enableResults).length &&
      `enable ${Object.entries(s.enableResults)
        .map(([k, v]) => `${terminalText(k)}=${terminalText(String(v))}`)
        .join(' ')}`,
  ].filter(Boolean);
  if (lifted.length) out.push(lifted.join(' · '));
  out.push('');
  const shown = all ? model.diagnostics : model.diagnostics.filter((d) => d.severity !== 'debug');
  const byComponent = new Map<string, Diagnostic[]>();
  for (const d of shown) {
    const list = byComponent.get(d.component) ?? [];
    list.push(d);
    byComponent.set(d.component, list);
  }
  for (const [component, list] of byComponent) {
    out.push(`${terminalText(component)} (${list.length})`);
    for (const d of list) {
      out.push(
        `  ${terminalText(d.severity).padEnd(7)} ${terminalText(`${d.code || '-'}`).padEnd(7)} line ${d.line}: ${terminalText(d.message)}`,
      );
      if (d.severity === 'error' || d.severity === 'warning' || d.component === 'unknown')
        out.push(`          ${terminalText(d.raw.split('\n')[0])}`);
    }
  }
  if (!all && shown.length < model.diagnostics.length)
    out.push('', `(${model.diagnostics.length - shown.length} debug lines hidden; --all shows them)`);
  return `${out.join('\n')}\n`;
}

export const diagnosticsCommand: CliCommand = {
  synopsis: 'diagnostics SESSION|LOG [--json] [--all]   FLAGOS_TRACE lines as structured diagnostics',
  async run(argv) {
    const parsed = parseCommandArgs(argv, { json: { type: 'boolean' }, all: { type: 'boolean' } }, USAGE);
    const [target, ...extra] = parsed.positionals;
    if (!target || extra.length > 0) throw new UserError(USAGE);
    const source = locateProfile(target);
    let model: BringupModel;
    if (source.kind === 'session') {
      if (!source.diagnosticsPath)
        throw new UserError(`${target}: the session folder holds no diagnostics.jsonl`);
      model = await loadBringup(source);
    } else {
      let text: string;
      try {
        text = readFileSync(target, 'utf8');
      } catch (error) {
        throw new UserError(`${target}: cannot read (${(error as NodeJS.ErrnoException).code ?? error})`);
      }
      model = bringupFromLog(target, text);
    }
    if (parsed.values.json) {
      process.stdout.write(
        `${JSON.stringify({ source: model.logPath ?? model.target, header: model.header, summary: model.summary, diagnostics: model.diagnostics }, null, 1)}\n`,
      );
    } else process.stdout.write(renderDiagnostics(model, parsed.values.all ?? false));
    return 0;
  },
};
