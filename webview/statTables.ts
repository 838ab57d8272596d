/**
 * The ops, kernels and lines tables under the timeline: the analysis's rows, sortable; activating a row selects
 * its longest slice in the timeline.
 */
import { formatCount, formatDuration } from '../extension/shared/format';
import { isDeviceKind, isOpKind } from '../extension/shared/kinds';
import type { KernelStat, LineStat, OpStat } from '../extension/shared/stats';
import type { TimelineModel } from './model';
import { VirtualTable, type Column } from './tables';

function durationColumn<Row>(title: string, ns: (row: Row) => number): Column<Row> {
  return { title, value: ns, format: (row) => formatDuration(ns(row)), numeric: true };
}

function countColumn<Row>(title: string, count: (row: Row) => number): Column<Row> {
  return { title, value: count, format: (row) => formatCount(count(row)), numeric: true };
}

/** The three tables, in their tab order; `select` shows a slice in the timeline. */
export function statTables(
  model: TimelineModel,
  select: (slice: number) => void,
): { name: string; element: HTMLElement }[] {
  const { kind, name: names, site } = model.columns;
  /** The longest slice satisfying `accept`, selected when there is one. */
  const selectLongest = (accept: (slice: number) => boolean): void => {
    const slice = model.longest(accept);
    if (slice >= 0) select(slice);
  };
  const selectByName = (name: string, accept: (slice: number) => boolean): void => {
    const id = model.strings.indexOf(name);
    if (id >= 0) selectLongest((i) => names[i] === id && accept(i));
  };
  const lineIndex = new Map(model.header.tables.lines.map((line, index) => [line, index]));
  const tables: [string, { element: HTMLElement }][] = [
    [
      'Ops',
      new VirtualTable<OpStat>(
        'Ops',
        [
          { title: 'Op', value: (r) => r.name },
          countColumn('Calls', (r) => r.calls),
          durationColumn('Device self', (r) => r.deviceSelfNs),
          durationColumn('Device total', (r) => r.deviceTotalNs),
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
    [
      'Lines',
      new VirtualTable<LineStat>(
        'Lines',
        [
          {
            title: 'Source',
            value: (r) => `${r.file}:${String(r.line).padStart(7, '0')}`,
            format: (r) => `${r.file.split(/[\\/]/).pop()}:${r.line}`,
          },
          { title: 'Function', value: (r) => r.function },
          durationColumn('Device', (r) => r.deviceNs),
          durationColumn('CPU', (r) => r.cpuNs),
          countColumn('Ops', (r) => r.ops),
          { title: 'Site', value: (r) => (r.exact ? 'call site' : 'function') },
        ],
        model.header.tables.lines,
        (row) => {
          const index = lineIndex.get(row) ?? -1;
          selectLongest((i) => site[i] === index && !isDeviceKind(kind[i]));
        },
      ),
    ],
  ];
  return tables.map(([name, table]) => ({ name, element: table.element }));
}
