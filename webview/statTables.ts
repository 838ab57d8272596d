/**
 * The ops, kernels and lines tables under the timeline: the analysis's rows, sortable; activating a row selects
 * its longest slice in the timeline. Lines in the profiler's own files show only with the profiler's frames.
 */
import { formatCount, formatDuration } from '../extension/shared/format';
import { isDeviceKind, isOpKind } from '../extension/shared/kinds';
import type { KernelStat, LineStat, OpStat } from '../extension/shared/stats';
import type { TimelineModel } from './model';
import { siteKindLabel, siteText } from './sourceSite';
import { VirtualTable, type Column } from './tables';

function durationColumn<Row>(title: string, ns: (row: Row) => number): Column<Row> {
  return { title, value: ns, format: (row) => formatDuration(ns(row)), numeric: true };
}

function countColumn<Row>(title: string, count: (row: Row) => number): Column<Row> {
  return { title, value: count, format: (row) => formatCount(count(row)), numeric: true };
}

/**
 * Device self and total time, for a profile with device activity: a CPU-only run's tables would show a column of
 * zeros each.
 */
function deviceColumns<Row>(
  model: TimelineModel,
  self: (row: Row) => number,
  total: (row: Row) => number,
): Column<Row>[] {
  if (model.header.tables.kernels.length === 0) return [];
  return [durationColumn('Device self', self), durationColumn('Device total', total)];
}

export interface StatTables {
  /** The tables, in their tab order. */
  tabs: { name: string; element: HTMLElement }[];
  /** The model's profiler frames were shown or hidden: the rows of the profiler's own lines follow. */
  profilerFramesChanged(): void;
}

/** The three tables; `select` shows a slice in the timeline. */
export function statTables(model: TimelineModel, select: (slice: number) => void): StatTables {
  const { kind, name: names } = model.columns;
  /** The longest slice satisfying `accept`, selected when there is one. */
  const selectLongest = (accept: (slice: number) => boolean): void => {
    const slice = model.longest(accept);
    if (slice >= 0) select(slice);
  };
  const selectByName = (name: string, accept: (slice: number) => boolean): void => {
    const id = model.strings.indexOf(name);
    if (id >= 0) selectLongest((i) => names[i] === id && accept(i));
  };
  const lines = linesTable(model, selectLongest);
  const tables: [string, { element: HTMLElement }][] = [
    [
      'Ops',
      new VirtualTable<OpStat>(
        'Ops',
        [
          { title: 'Op', value: (r) => r.name },
          countColumn('Calls', (r) => r.calls),
          ...deviceColumns<OpStat>(
            model,
            (r) => r.deviceSelfNs,
            (r) => r.deviceTotalNs,
          ),
          durationColumn('CPU self', (r) => r.cpuSelfNs),
          durationColumn('CPU total', (r) => r.cpuTotalNs),
        ],
        model.header.tables.ops,
        (row) => selectByName(row.name, (i) => isOpKind(kind[i])),
      ),
    ],
    [
      'Kernels',
      new VirtualTable<KernelStat>(
        'Kernels',
        [
          { title: 'Kernel', value: (r) => r.name },
          { title: 'Kind', value: (r) => r.kind },
          countColumn('Count', (r) => r.count),
          durationColumn('Total', (r) => r.totalNs),
          durationColumn('Average', (r) => r.totalNs / Math.max(1, r.count)),
          { title: 'Top op', value: (r) => r.topOp },
        ],
        model.header.tables.kernels,
        (row) => selectByName(row.name, (i) => isDeviceKind(kind[i])),
      ),
    ],
    ['Lines', lines.table],
  ];
  return {
    tabs: tables.map(([name, table]) => ({ name, element: table.element })),
    profilerFramesChanged: lines.profilerFramesChanged,
  };
}

/**
 * The lines of the one line attribution, as the editor's hovers show them: self and total (with callees) device
 * and CPU time, and how each line was found. A row selects the longest slice charged to its line.
 */
function linesTable(
  model: TimelineModel,
  selectLongest: (accept: (slice: number) => boolean) => void,
): { table: VirtualTable<LineStat>; profilerFramesChanged(): void } {
  const { kind, site } = model.columns;
  const all = model.header.tables.lines;
  const lineIndex = new Map(all.map((line, index) => [line, index]));
  const profilerLines = new Set(model.header.profilerLines.map((index) => all[index]));
  const shown = (): LineStat[] =>
    profilerLines.size === 0 || model.profilerFramesShown ? all : all.filter((l) => !profilerLines.has(l));
  const table = new VirtualTable<LineStat>(
    'Lines',
    [
      {
        title: 'Source',
        value: (r) =>
          `${r.file}:${String(r.line).padStart(7, '0')}:${String(r.column ?? 0).padStart(5, '0')}`,
        format: (r) => siteText(r, true),
        width: 3,
      },
      { title: 'Function', value: (r) => r.function, width: 2 },
      ...deviceColumns<LineStat>(
        model,
        (r) => r.deviceSelfNs,
        (r) => r.deviceTotalNs,
      ),
      durationColumn('CPU self', (r) => r.cpuSelfNs),
      durationColumn('CPU total', (r) => r.cpuTotalNs),
      { ...countColumn('Ops', (r: LineStat) => r.ops), width: 0.6 },
      { title: 'Site', value: (r) => siteKindLabel(r) },
    ],
    shown(),
    (row) => {
      const index = lineIndex.get(row) ?? -1;
      selectLongest((i) => site[i] === index && !isDeviceKind(kind[i]));
    },
  );
  return {
    table,
    profilerFramesChanged: () => {
      if (profilerLines.size > 0) table.setRows(shown());
    },
  };
}
