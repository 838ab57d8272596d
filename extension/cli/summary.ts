import { analyze } from '../analysis/analyze';
import { LINE_KIND_LABELS } from '../analysis/lines';
import { buildSummary, type MemoryJson, type StepsJson, type SummaryJson } from '../analysis/summary';
import { openRun } from '../capture/merged';
import { memoryBudgetProblem } from '../timeline/budget';
import {
  openRankTraces,
  openRanks,
  rankFolders,
  rankTraceFiles,
  rankStats,
  type RankStats,
} from '../capture/ranks';
import {
  matchCollectives,
  type CrossRankCollectives,
  type MatchedCollective,
} from '../analysis/ranksCollectives';
import type { MessageSize } from '../analysis/collectives';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { terminalText } from '../shared/text';
import type { CliCommand } from './commands';
import { UserError } from '../import/errors';
import { parseCommandArgs } from './errors';
import { formatBytes, formatUs } from '../shared/format';
import { formatTable } from './format';

const SUMMARY_USAGE = 'usage: flagprof summary TRACE|SESSION|FOLDER [--json] [--top N] [--ranks]';

export const summaryCommand: CliCommand = {
  synopsis:
    'summary TRACE|SESSION|FOLDER [--json] [--top N] [--ranks]   ops, kernels, source lines, steps and memory by device time',
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
    // Refused before reading when it cannot fit; '-' (stdin) has no size to tell.
    const problem = target === '-' ? undefined : memoryBudgetProblem(target);
    if (problem) throw new UserError(problem);
    const multi = isMultiRank(target);
    if (parsed.values.ranks && !multi)
      throw new UserError(
        `${target}: not a multi-process session (no ranks/ parts) nor a folder of rank traces: --ranks needs one`,
      );
    if (multi) {
      const json = parsed.values.json === true;
      process.stdout.write(await renderRanks(target, { top, table: parsed.values.ranks === true, json }));
      return 0;
    }
    // A session with child processes (DataLoader workers) sums them with the main process.
    const { profile } = await openRun(target);
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

/** A session folder of a multi-process run (ranks/ parts, no trace of its own), or a folder of rank traces. */
export function isMultiRank(target: string): boolean {
  let folder = false;
  try {
    folder = statSync(target).isDirectory();
  } catch {
    return false;
  }
  if (!folder || existsSync(path.join(target, 'trace.json.gz'))) return false;
  return rankFolders(target).length > 0 || rankTraceFiles(target).length > 0;
}

/**
 * A multi-process run: one summary per rank, or (`table`) one row per rank with the slowest named, then the
 * collectives matched across the ranks. A part that cannot be opened gets its line saying why.
 */
export async function renderRanks(
  folder: string,
  options: { top: number; table: boolean; json: boolean },
): Promise<string> {
  const ranks = rankFolders(folder).length > 0 ? await openRanks(folder) : await openRankTraces(folder);
  const stats: RankStats[] = [];
  const out: string[] = [];
  for (const rank of ranks) {
    if (!rank.opened) {
      const line = `rank ${terminalText(rank.rank)}: ${terminalText(rank.problem ?? 'no profile')}`;
      // In --json the document stays parseable: the problem goes to stderr.
      if (options.json) process.stderr.write(`flagprof: warning: ${line}\n`);
      else out.push(line);
      continue;
    }
    stats.push(rankStats({ ...rank, opened: rank.opened }));
  }
  const across = matchCollectives(
    stats.map((r) => ({ rank: r.rank, originNs: r.originNs, collectives: r.collectives })),
  );
  if (options.json) return `${JSON.stringify(ranksJson(stats, across, !options.table), null, 1)}\n`;
  if (options.table)
    out.push(...renderRankTable(stats, across), ...renderCollectives(stats, across, options.top));
  else for (const r of stats) out.push(rankHeading(r), renderSummary(r.summary, options.top));
  return `${out.join('\n')}\n`;
}

const us = (ns: number): number => ns / 1e3;

function ranksJson(stats: RankStats[], across: CrossRankCollectives, withSummary: boolean) {
  const waits = new Map(across.perRank.map((w) => [w.rank, w]));
  return {
    ranks: stats.map((r) => {
      const c = r.collectives;
      const w = waits.get(r.rank);
      return {
        rank: r.rank,
        wall_s: r.wallS,
        cpu_ops_us: r.cpuOpsUs,
        device_us: r.deviceUs,
        collective_us: r.collectiveUs,
        communication: {
          device: c.device,
          instances: c.instances.length,
          union_us: us(c.unionNs),
          exposed_us: us(c.exposedNs),
          exposed_share: c.unionNs > 0 ? c.exposedNs / c.unionNs : 0,
          overlap_share: c.overlapShare,
          sum_us: us(c.sumNs),
          ...(c.note ? { note: c.note } : {}),
        },
        straggler_count: w?.stragglerCount ?? 0,
        wait_caused_us: us(w?.waitCausedNs ?? 0),
        wait_suffered_us: us(w?.waitSufferedNs ?? 0),
        ...(withSummary ? { summary: r.summary } : {}),
      };
    }),
    collectives: across.matched.map(collectiveJson),
    unmatched_collectives: across.unmatched,
    clock_skew: {
      reference: across.skew.reference,
      offsets: across.skew.offsets.map((o) => ({ rank: o.rank, offset_us: us(o.offsetNs) })),
      median_duration_us: us(across.skew.medianDurationNs),
      ...(across.skew.note ? { note: across.skew.note } : {}),
    },
  };
}

function collectiveJson(c: MatchedCollective) {
  return {
    name: c.name,
    group: c.group,
    ...(c.groupRanks !== undefined ? { group_ranks: c.groupRanks } : {}),
    ...(c.groupDescription !== undefined ? { group_description: c.groupDescription } : {}),
    index: c.index,
    part: c.part,
    ...(c.size ? { size: sizeJson(c.size) } : {}),
    straggler: c.straggler,
    max_wait_us: us(c.maxWaitNs),
    total_wait_us: us(c.totalWaitNs),
    duration_us: { min: us(c.durationNs.min), median: us(c.durationNs.median), max: us(c.durationNs.max) },
    // Times from the start of the earliest rank's trace, so that ranks read on one axis.
    ranks: c.ranks.map((r) => ({
      rank: r.rank,
      start_us: us(r.startNs),
      end_us: us(r.endNs),
      duration_us: us(r.durationNs),
      wait_us: us(r.waitNs),
    })),
  };
}

function sizeJson(size: MessageSize) {
  return {
    in_elements: size.inElements,
    out_elements: size.outElements,
    in_bytes: size.inBytes,
    out_bytes: size.outBytes,
    dtype: size.dtype,
    group_size: size.groupSize,
    from: size.from,
  };
}

function rankHeading(r: RankStats): string {
  const wall = r.wallS === undefined ? '—' : `${r.wallS.toFixed(3)} s`;
  const c = r.collectives;
  const comm =
    c.instances.length > 0 ? `, comm ${formatUs(us(c.unionNs))} (exposed ${formatUs(us(c.exposedNs))})` : '';
  return `== rank ${terminalText(r.rank)}: wall ${wall}, CPU in ops ${formatUs(r.cpuOpsUs)}, device ${formatUs(r.deviceUs)}, collectives ${formatUs(r.collectiveUs)}${comm} ==`;
}

function share(part: number, whole: number): string {
  return whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '—';
}

/** The table across ranks, then the slowest rank (by the script's wall time). */
function renderRankTable(stats: RankStats[], across: CrossRankCollectives): string[] {
  const slowest = stats.reduce<RankStats | undefined>(
    (worst, r) =>
      r.wallS !== undefined && (worst?.wallS === undefined || r.wallS > worst.wallS) ? r : worst,
    undefined,
  );
  const waits = new Map(across.perRank.map((w) => [w.rank, w]));
  const rows = stats.map((r) => [
    `${r.rank}${r === slowest && stats.length > 1 ? ' (slowest)' : ''}`,
    r.wallS === undefined ? '—' : `${r.wallS.toFixed(3)} s`,
    formatUs(r.cpuOpsUs),
    formatUs(r.deviceUs),
    formatUs(r.collectiveUs),
    share(r.collectiveUs, r.cpuOpsUs + r.deviceUs),
    formatUs(us(r.collectives.unionNs)),
    formatUs(us(r.collectives.exposedNs)),
    share(r.collectives.exposedNs, r.collectives.unionNs),
    String(waits.get(r.rank)?.stragglerCount ?? 0),
  ]);
  const lines = [
    `Ranks (${stats.length}; collectives: nccl/gloo/c10d ops and kernels, self time; comm: the collectives' ` +
      'time as a union; exposed: comm that no other device work overlaps; straggler: collectives the rank started last)',
    formatTable(
      [
        'rank',
        'wall',
        'CPU in ops',
        'device',
        'collectives',
        'in collectives',
        'comm',
        'exposed',
        'exposed share',
        'straggler',
      ],
      rows,
    ),
  ];
  if (slowest && slowest.wallS !== undefined)
    lines.push(`slowest rank: ${terminalText(slowest.rank)} (${slowest.wallS.toFixed(3)} s)`);
  const notes = new Set(stats.map((r) => r.collectives.note).filter((n): n is string => n !== undefined));
  for (const note of notes) lines.push(note);
  return lines;
}

/** The collectives matched across ranks, most waited-for first, and who kept the others waiting. */
function renderCollectives(stats: RankStats[], across: CrossRankCollectives, top: number): string[] {
  if (across.matched.length === 0) {
    const found = stats.reduce((n, r) => n + r.collectives.instances.length, 0);
    return found === 0 ? [] : ['', `Collectives: ${found} found, none on two ranks to compare`];
  }
  const worst = across.perRank.reduce((a, b) => (b.waitCausedNs > a.waitCausedNs ? b : a));
  const byWait = [...across.matched].sort(
    (a, b) => b.maxWaitNs - a.maxWaitNs || b.totalWaitNs - a.totalWaitNs,
  );
  const lines = [
    '',
    `Collectives (${across.matched.length} matched across ranks by name, group and order` +
      `${across.unmatched > 0 ? `, ${across.unmatched} on one rank only` : ''}; top ${Math.min(top, byWait.length)} by the longest wait: ` +
      'each rank waits from its own start to the last rank’s start)',
    formatTable(
      ['collective', 'group', 'size', 'duration min', 'median', 'max', 'straggler', 'max wait'],
      byWait
        .slice(0, top)
        .map((c) => [
          `${c.name} #${c.index}${c.part === 'cpu' ? ' (CPU)' : ''}`,
          groupLabel(c),
          sizeLabel(c.size),
          formatUs(us(c.durationNs.min)),
          formatUs(us(c.durationNs.median)),
          formatUs(us(c.durationNs.max)),
          c.straggler,
          formatUs(us(c.maxWaitNs)),
        ]),
    ),
  ];
  if (worst.stragglerCount > 0)
    lines.push(
      `most waited-for rank: ${terminalText(worst.rank)} (started ${worst.stragglerCount} of ${across.matched.length} ` +
        `collectives last; the others waited ${formatUs(us(worst.waitCausedNs))} in all)`,
    );
  if (across.skew.note) lines.push(across.skew.note);
  return lines;
}

function groupLabel(c: MatchedCollective): string {
  if (c.group === '') return '—';
  return c.groupDescription ? `${c.group} (${c.groupDescription})` : c.group;
}

function sizeLabel(size: MessageSize | undefined): string {
  if (!size) return '—';
  const { inBytes, outBytes } = size;
  if (inBytes === undefined && outBytes === undefined) return '—';
  const text =
    inBytes !== undefined && outBytes !== undefined && inBytes !== outBytes
      ? `${formatBytes(inBytes)} → ${formatBytes(outBytes)}`
      : formatBytes((inBytes ?? outBytes) as number);
  return size.from === 'input' ? `${text} (input)` : text;
}
