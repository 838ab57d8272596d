import { analyze } from '../analysis/analyze';
import { LINE_KIND_LABELS } from '../analysis/lines';
import { buildSummary, type MemoryJson, type StepsJson, type SummaryJson } from '../analysis/summary';
import { openProfile } from '../capture/open';
import { openRanks, rankFolders, rankStats, type RankStats } from '../capture/ranks';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { terminalText } from '../shared/text';
import type { CliCommand } from './commands';
import { UserError } from '../import/errors';
import { parseCommandArgs } from './errors';
import { formatBytes, formatUs } from '../shared/format';
import { formatTable } from './format';

const SUMMARY_USAGE = 'usage: flagprof summary TRACE|SESSION [--json] [--top N] [--ranks]';

export const summaryCommand: CliCommand = {
  synopsis:
    'summary TRACE|SESSION [--json] [--top N] [--ranks]   ops, kernels, source lines, steps and memory by device time',
  async run(argv) {
    const parsed = parseCommandArgs(
      argv,
      { json: { type: 'boolean' }, top: { type: 'string' }, ranks: { type: 'boolean' } },
      SUMMARY_USAGE,
    );
    const [target, ...extra] = parsed.positionals;
    if (!target || extra.length > 0) throw new UserError(SUMMARY_USAGE);
    const top = parsed.values.top === undefined ? 15 : Number(parsed.values.top);
    if (!Number.isInteger(top) || top <= 0)
      throw new UserError(`--top: expected a positive integer, got '${parsed.values.top}'`);
    const multi = isMultiRank(target);
    if (parsed.values.ranks && !multi)
      throw new UserError(`${target}: not a multi-process session (no ranks/ parts): --ranks needs one`);
    if (multi) {
      const json = parsed.values.json === true;
      process.stdout.write(await renderRanks(target, { top, table: parsed.values.ranks === true, json }));
      return 0;
    }
    const { profile } = await openProfile(target);
    const summary = buildSummary(analyze(profile), { steps: true, memory: true });
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
  if (summary.steps) out.push('', ...renderSteps(summary.steps, top));
  if (summary.memory) out.push('', ...renderMemory(summary.memory, top));
  return `${out.join('\n')}\n`;
}

/** The steps in time order (the first `top`), with the first set against the steady state. */
function renderSteps(steps: StepsJson, top: number): string[] {
  const steady = steps.steady_median_us;
  const head =
    `Steps (${steps.count} ProfilerStep span${steps.count === 1 ? '' : 's'}): first ${formatUs(steps.first_us)}` +
    (steady === undefined
      ? ''
      : `, steady state (median of the rest) ${formatUs(steady)}${steady > 0 ? ` (first ${ratio(steps.first_us, steady)})` : ''}`) +
    `; slowest #${steps.slowest.step} ${formatUs(steps.slowest.wall_us)}`;
  const rows = steps.rows
    .slice(0, top)
    .map((r) => [
      `#${r.step}${r.step === steps.slowest.step ? ' (slowest)' : ''}`,
      formatUs(r.wall_us),
      formatUs(r.cpu_us),
      formatUs(r.device_us),
    ]);
  const lines = [head, formatTable(['step', 'wall', 'CPU in ops', 'device'], rows)];
  if (steps.rows.length > top) lines.push(`… ${steps.rows.length - top} more (--top N, or --json)`);
  return lines;
}

/** Peak per device, then the lines that allocated the most. */
function renderMemory(memory: MemoryJson, top: number): string[] {
  const deltas = memory.devices.some((d) => d.totals === 'deltas');
  const lines = [
    `Memory (peak allocated per device${deltas ? '; "deltas": the trace has no totals, counted from 0 at the window\'s start' : ''})`,
    formatTable(
      ['device', 'peak allocated', 'at', 'peak reserved', 'allocated', 'freed', 'allocs', 'frees'],
      memory.devices.map((d) => [
        d.device,
        `${formatBytes(d.peak_allocated_bytes)}${d.totals === 'deltas' ? ' (deltas)' : ''}`,
        formatUs(d.peak_allocated_at_us),
        d.peak_reserved_bytes === undefined ? '—' : formatBytes(d.peak_reserved_bytes),
        formatBytes(d.allocated_bytes),
        formatBytes(d.freed_bytes),
        String(d.allocations),
        String(d.frees),
      ]),
    ),
  ];
  for (const u of memory.unattributed)
    lines.push(
      `on no user line (freed between ops, or ops outside your code): ${u.device} ` +
        `${formatBytes(u.allocated_bytes)} allocated, ${formatBytes(u.freed_bytes)} freed`,
    );
  const last = memory.last_allocations.at(-1);
  if (last)
    lines.push(
      `last allocation before the end: ${last.device} ${formatBytes(last.bytes)} at ${formatUs(last.at_us)}` +
        (last.file === undefined ? ', on no user line' : `, ${terminalText(`${last.file}:${last.line}`)}`) +
        (last.total_allocated_bytes === undefined
          ? ''
          : ` (${formatBytes(last.total_allocated_bytes)} allocated)`),
    );
  if (memory.lines.length === 0) return lines;
  lines.push(
    '',
    `Top source lines by bytes allocated (of ${memory.lines.length}; at peak: still held at the device's peak)`,
    formatTable(
      ['line', 'function', 'device', 'allocated', 'freed', 'net', 'at peak', 'allocs'],
      memory.lines
        .slice(0, top)
        .map((l) => [
          `${l.file}:${l.line}${l.kind && l.kind !== 'function' ? ` (${LINE_KIND_LABELS[l.kind]})` : ''}`,
          l.function,
          l.device,
          formatBytes(l.allocated_bytes),
          formatBytes(l.freed_bytes),
          signedBytes(l.net_bytes),
          l.at_peak_bytes === undefined ? '—' : formatBytes(l.at_peak_bytes),
          String(l.allocations),
        ]),
    ),
  );
  return lines;
}

function signedBytes(bytes: number): string {
  return bytes < 0 ? `-${formatBytes(-bytes)}` : formatBytes(bytes);
}

function ratio(value: number, base: number): string {
  return `${(value / base).toFixed(2)}×`;
}

/** A session folder of a multi-process run: ranks/ parts and no trace of its own. */
export function isMultiRank(target: string): boolean {
  let folder = false;
  try {
    folder = statSync(target).isDirectory();
  } catch {
    return false;
  }
  return folder && !existsSync(path.join(target, 'trace.json.gz')) && rankFolders(target).length > 0;
}

/**
 * A multi-process session: one summary per rank, or (`table`) one row per rank with the slowest named. A part
 * that cannot be opened gets its line saying why.
 */
export async function renderRanks(
  folder: string,
  options: { top: number; table: boolean; json: boolean },
): Promise<string> {
  const ranks = await openRanks(folder);
  const stats: RankStats[] = [];
  const out: string[] = [];
  for (const rank of ranks) {
    if (!rank.opened) {
      out.push(`rank ${terminalText(rank.rank)}: ${terminalText(rank.problem ?? 'no profile')}`);
      continue;
    }
    stats.push(rankStats({ ...rank, opened: rank.opened }));
  }
  if (options.json)
    return `${JSON.stringify({ ranks: stats.map((r) => rankJson(r, !options.table)) }, null, 1)}\n`;
  if (options.table) out.push(...renderRankTable(stats));
  else for (const r of stats) out.push(rankHeading(r), renderSummary(r.summary, options.top));
  return `${out.join('\n')}\n`;
}

function rankJson(r: RankStats, withSummary: boolean) {
  return {
    rank: r.rank,
    wall_s: r.wallS,
    cpu_ops_us: r.cpuOpsUs,
    device_us: r.deviceUs,
    collective_us: r.collectiveUs,
    ...(withSummary ? { summary: r.summary } : {}),
  };
}

function rankHeading(r: RankStats): string {
  const wall = r.wallS === undefined ? '—' : `${r.wallS.toFixed(3)} s`;
  return `== rank ${terminalText(r.rank)}: wall ${wall}, CPU in ops ${formatUs(r.cpuOpsUs)}, device ${formatUs(r.deviceUs)}, collectives ${formatUs(r.collectiveUs)} ==`;
}

/** The table across ranks, then the slowest rank (by the script's wall time). */
function renderRankTable(stats: RankStats[]): string[] {
  const slowest = stats.reduce<RankStats | undefined>(
    (worst, r) =>
      r.wallS !== undefined && (worst?.wallS === undefined || r.wallS > worst.wallS) ? r : worst,
    undefined,
  );
  const rows = stats.map((r) => [
    `${r.rank}${r === slowest && stats.length > 1 ? ' (slowest)' : ''}`,
    r.wallS === undefined ? '—' : `${r.wallS.toFixed(3)} s`,
    formatUs(r.cpuOpsUs),
    formatUs(r.deviceUs),
    formatUs(r.collectiveUs),
    r.cpuOpsUs + r.deviceUs > 0 ? `${((100 * r.collectiveUs) / (r.cpuOpsUs + r.deviceUs)).toFixed(1)}%` : '—',
  ]);
  const lines = [
    `Ranks (${stats.length}; collectives: nccl/gloo/c10d ops and kernels, self time)`,
    formatTable(['rank', 'wall', 'CPU in ops', 'device', 'collectives', 'in collectives'], rows),
  ];
  if (slowest && slowest.wallS !== undefined)
    lines.push(`slowest rank: ${terminalText(slowest.rank)} (${slowest.wallS.toFixed(3)} s)`);
  return lines;
}
