/** `flagprof diff A B`: two runs compared by op, kernel, source line and step (analysis/diff.ts). */
import { existsSync } from 'node:fs';
import { analyze } from '../analysis/analyze';
import {
  diffAnalyses,
  type DiffLevel,
  type DiffRowBase,
  type DiffRun,
  type DiffSide,
  type LineDiff,
  type ProfileDiff,
  type StepDiff,
  type TotalDiff,
} from '../analysis/diff';
import { LINE_KIND_LABELS } from '../analysis/lines';
import { diffRunOf } from '../capture/diffRun';
import { openProfile } from '../capture/open';
import { UserError } from '../import/errors';
import { formatDuration } from '../shared/format';
import { terminalText } from '../shared/text';
import type { CliCommand } from './commands';
import { parseCommandArgs } from './errors';
import { formatTable } from './format';

const USAGE = 'usage: flagprof diff A B [--by op|kernel|line|step|all] [--top N] [--json]';

/** What `flagprof diff --help` prints. */
export const DIFF_HELP = `${USAGE}

Compares two runs — before and after a change, or one vendor's device against another's: totals, then source
lines, ops, kernels and ProfilerStep#N steps with A's and B's times, Δ (B − A) and ratio (B / A), largest |Δ|
first. The time compared is device time when both runs have device activity, else CPU time. Rows only in A are
"missing", only in B "new". When the script changed between the runs, lines are matched across the edit and the
changed lines lead the line table. A and B are each a TRACE or a SESSION.
TRACE is a Kineto trace (.json or .json.gz), a pipe, a FIFO or - (stdin); SESSION a folder written by flagprof profile.

options:
  --by LEVEL   the tables to show: op, kernel, line, step or all (default all)
  --top N      rows per table (default 10)
  --json       the whole diff as JSON, every row of every level (times in ns; ratio null where A's is 0)
  -h, --help   this help
`;

const LEVELS: readonly DiffLevel[] = ['op', 'kernel', 'line', 'step'];

export const diffCommand: CliCommand = {
  synopsis: 'diff A B [--by op|kernel|line|step|all] [--top N] [--json]   compare two runs',
  async run(argv) {
    const parsed = parseCommandArgs(
      argv,
      { by: { type: 'string' }, top: { type: 'string' }, json: { type: 'boolean' } },
      USAGE,
    );
    const [first, second, ...extra] = parsed.positionals;
    if (!first || !second || extra.length > 0) throw new UserError(USAGE);
    const by = parsed.values.by ?? 'all';
    if (by !== 'all' && !LEVELS.includes(by as DiffLevel))
      throw new UserError(`--by: expected op, kernel, line, step or all, got '${by}'`);
    const top = parsed.values.top === undefined ? 10 : Number(parsed.values.top);
    if (!Number.isInteger(top) || top <= 0)
      throw new UserError(`--top: expected a positive integer, got '${parsed.values.top}'`);
    if (isStdin(first) && isStdin(second))
      throw new UserError('flagprof diff: only one of A and B can be - (stdin)');
    const runA = await openRun(first);
    const runB = await openRun(second);
    const diff = diffAnalyses(runA, runB);
    const levels = by === 'all' ? diff.order : [by as DiffLevel];
    process.stdout.write(
      parsed.values.json ? `${JSON.stringify(diff, null, 1)}\n` : renderDiff(diff, levels, top),
    );
    return 0;
  },
};

function isStdin(target: string): boolean {
  return target === '-' || target === '/dev/stdin';
}

/** A side opened and analysed, with its script folder and a reader of the source texts it profiled. */
async function openRun(target: string): Promise<DiffRun> {
  // Every input is opened through a path (a session folder is told from a trace by stat): `-` is /dev/stdin.
  const opened = await openProfile(target === '-' && existsSync('/dev/stdin') ? '/dev/stdin' : target);
  for (const warning of opened.profile.warnings)
    process.stderr.write(`flagprof: warning: ${terminalText(target)}: ${terminalText(warning.message)}\n`);
  const session = opened.source.kind === 'session' ? opened.source.session?.record : undefined;
  return diffRunOf(opened.profile, analyze(opened.profile), session, target);
}

function signed(ns: number): string {
  if (ns === 0) return '0';
  return `${ns > 0 ? '+' : '−'}${formatDuration(Math.abs(ns))}`;
}

function time(ns: number | undefined): string {
  return ns === undefined ? '—' : ns === 0 ? '0' : formatDuration(ns);
}

function ratio(r: number | null): string {
  return r === null ? '—' : `${r.toFixed(r >= 10 ? 1 : 2)}×`;
}

function calls(row: DiffRowBase): string {
  return `${row.a?.calls ?? '—'} → ${row.b?.calls ?? '—'}`;
}

const STATUS: Record<DiffRowBase['status'], string> = { both: '', missing: 'missing', new: 'new' };

/** The totals as a small table: wall, CPU and (when either run has it) device time. */
function renderTotals(diff: ProfileDiff): string {
  const rows: [string, TotalDiff][] = [
    ['wall', diff.totals.wallNs],
    ['CPU (in ops)', diff.totals.cpuNs],
  ];
  if (diff.a.hasDevice || diff.b.hasDevice) rows.push(['device', diff.totals.deviceNs]);
  return formatTable(
    ['', 'A', 'B', 'Δ', 'ratio'],
    rows.map(([name, t]) => [name, time(t.a), time(t.b), signed(t.deltaNs), ratio(t.ratio)]),
  );
}

/** The primary time's columns of a row: A, B, Δ, ratio. */
function primaryCells(row: DiffRowBase, pick: (s: DiffSide) => number): string[] {
  return [
    time(row.a ? pick(row.a) : undefined),
    time(row.b ? pick(row.b) : undefined),
    signed(row.deltaNs),
    ratio(row.ratio),
  ];
}

function lineLabel(row: LineDiff): string {
  const at = row.lineB ?? row.lineA;
  const moved =
    row.lineA !== null && row.lineB !== null && row.lineA !== row.lineB ? ` (A:${row.lineA})` : '';
  const kind = row.kind && row.kind !== 'function' ? ` (${LINE_KIND_LABELS[row.kind]})` : '';
  return `${row.file}:${at}${moved}${kind}`;
}

function lineStatus(row: LineDiff): string {
  return [row.edited ? 'edited' : '', STATUS[row.status]].filter(Boolean).join(', ');
}

/** The primary time's readers: self and total of a side, and the words for it. */
interface Primary {
  device: boolean;
  what: string;
  self: (s: DiffSide) => number;
  totalDelta: (r: DiffRowBase) => string;
}

function primaryOf(diff: ProfileDiff): Primary {
  const device = diff.primary === 'device';
  const totalOf = device ? (s: DiffSide) => s.deviceTotalNs : (s: DiffSide) => s.cpuTotalNs;
  return {
    device,
    what: device ? 'device' : 'CPU',
    self: device ? (s) => s.deviceSelfNs : (s) => s.cpuSelfNs,
    totalDelta: (r) => signed((r.b ? totalOf(r.b) : 0) - (r.a ? totalOf(r.a) : 0)),
  };
}

function renderLines(diff: ProfileDiff, p: Primary, top: number): string | undefined {
  if (diff.lines.length === 0) return undefined;
  return table(
    `Source lines by Δ ${p.what} self (edited lines first; of ${diff.lines.length})`,
    ['line', 'function', 'A self', 'B self', 'Δ self', 'ratio', 'Δ total', 'calls', 'status'],
    diff.lines
      .slice(0, top)
      .map((r) => [
        lineLabel(r),
        r.function,
        ...primaryCells(r, p.self),
        p.totalDelta(r),
        calls(r),
        lineStatus(r),
      ]),
  );
}

function renderOps(diff: ProfileDiff, p: Primary, top: number): string | undefined {
  return table(
    `Ops by Δ ${p.what} self (of ${diff.ops.length})`,
    ['op', 'A self', 'B self', 'Δ self', 'ratio', 'Δ total', 'calls', 'status'],
    diff.ops
      .slice(0, top)
      .map((r) => [r.name, ...primaryCells(r, p.self), p.totalDelta(r), calls(r), STATUS[r.status]]),
  );
}

function renderKernels(diff: ProfileDiff, _p: Primary, top: number): string | undefined {
  if (diff.kernels.length === 0) return undefined;
  return table(
    `Kernels by Δ time (of ${diff.kernels.length}${diff.crossVendor ? '; names differ across vendors' : ''})`,
    ['kernel', 'A', 'B', 'Δ', 'ratio', 'count', 'status'],
    diff.kernels
      .slice(0, top)
      .map((r) => [r.name, ...primaryCells(r, (s) => s.deviceTotalNs), calls(r), STATUS[r.status]]),
  );
}

function stepLabel(r: StepDiff): string {
  if (r.stepA === null || r.stepA === r.stepB) return `#${r.stepB}`;
  return r.stepB === null ? `#${r.stepA}` : `#${r.stepA} / #${r.stepB}`;
}

function renderSteps(diff: ProfileDiff, p: Primary, top: number): string | undefined {
  if (diff.steps.length === 0) return undefined;
  return table(
    `Steps by Δ wall time (ProfilerStep#N; of ${diff.steps.length})`,
    ['step', 'A wall', 'B wall', 'Δ', 'ratio', ...(p.device ? ['A device', 'B device'] : []), 'status'],
    diff.steps
      .slice(0, top)
      .map((r) => [
        stepLabel(r),
        ...primaryCells(r, (s) => s.cpuTotalNs),
        ...(p.device ? [time(r.a?.deviceTotalNs), time(r.b?.deviceTotalNs)] : []),
        STATUS[r.status],
      ]),
  );
}

const RENDER: Record<DiffLevel, (diff: ProfileDiff, p: Primary, top: number) => string | undefined> = {
  line: renderLines,
  op: renderOps,
  kernel: renderKernels,
  step: renderSteps,
};

function table(title: string, header: string[], rows: string[][]): string {
  return `${title}\n${formatTable(header, rows)}`;
}

/** The diff as text; every name from a trace goes through terminalText (table cells in formatTable). */
export function renderDiff(diff: ProfileDiff, levels: readonly DiffLevel[], top: number): string {
  const run = (label: string, r: ProfileDiff['a']) =>
    `${label}  ${terminalText(r.path)}  (${r.format}, ${r.events.toLocaleString('en-US')} events, ${r.hasDevice ? r.platform : 'no device activity'})`;
  const out = [run('A', diff.a), run('B', diff.b)];
  for (const note of diff.notes) out.push(`note: ${terminalText(note)}`);
  out.push('', renderTotals(diff));
  for (const level of levels) {
    const text = RENDER[level](diff, primaryOf(diff), top);
    if (text) out.push('', text);
  }
  return `${out.join('\n')}\n`;
}
