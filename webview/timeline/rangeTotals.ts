/**
 * Totals over a time range the user dragged out: per op name and per device slice name, how many slices overlap
 * the range and how much of their time lies inside it (a slice cut by an edge counts only its part inside).
 * Plain data, no DOM.
 */
import { isDeviceKind, isOpKind } from '../../extension/shared/kinds';

export interface RangeRow {
  name: string;
  count: number;
  /** Time inside the range, ns (nested ops each count their own). */
  totalNs: number;
}

export interface RangeTotals {
  ops: RangeRow[];
  device: RangeRow[];
}

/** What the totals read of the model. */
export interface RangeSource {
  readonly sliceCount: number;
  readonly strings: readonly string[];
  readonly columns: {
    readonly kind: ArrayLike<number>;
    readonly name: ArrayLike<number>;
    readonly start: ArrayLike<number>;
    readonly dur: ArrayLike<number>;
  };
  isHidden(slice: number): boolean;
}

/** The totals over [from, to] (ns, the slices' own clock), largest first. */
export function rangeTotals(source: RangeSource, from: number, to: number): RangeTotals {
  const { kind, name, start, dur } = source.columns;
  const ops = new Map<number, RangeRow>();
  const device = new Map<number, RangeRow>();
  for (let i = 0; i < source.sliceCount; i++) {
    const table = isOpKind(kind[i]) ? ops : isDeviceKind(kind[i]) ? device : undefined;
    if (!table || start[i] > to || start[i] + dur[i] < from) continue;
    const inside = Math.min(start[i] + dur[i], to) - Math.max(start[i], from);
    if (inside < 0 || (inside === 0 && dur[i] > 0) || source.isHidden(i)) continue;
    let row = table.get(name[i]);
    if (!row) table.set(name[i], (row = { name: source.strings[name[i]] ?? '', count: 0, totalNs: 0 }));
    row.count++;
    row.totalNs += inside;
  }
  return { ops: sorted(ops), device: sorted(device) };
}

function sorted(rows: Map<number, RangeRow>): RangeRow[] {
  return [...rows.values()].sort(
    (a, b) => b.totalNs - a.totalNs || b.count - a.count || (a.name < b.name ? -1 : 1),
  );
}
