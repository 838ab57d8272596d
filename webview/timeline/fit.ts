/**
 * "Fit selection": the view that shows a slice and every device slice it launched on one screen: their time range
 * with a margin, and the scroll that shows all their rows, or, when they are too far apart to fit, the slice's
 * own row with as many of the others as fit. Plain arithmetic, no DOM.
 */

export interface Placed {
  start: number;
  end: number;
  /** Content y of the top of its row. */
  y: number;
}

export interface FitView {
  start: number;
  end: number;
  scrollTop: number;
}

/** Margin each side, as a fraction of the time range. */
const TIME_MARGIN = 0.05;
/** The narrowest range fitted, ns (a 0-length slice still gets a view). */
const MIN_SPAN_NS = 100;
/** Space kept above the top row and below the bottom one, px. */
const Y_MARGIN = 8;

/**
 * The view fitting `anchor` (the selection) and `others` (what it launched), in a slice area `rowsHeight` px
 * high with rows `rowHeight` px each. Items without a row (y < 0) count for the time range only.
 */
export function fitView(
  anchor: Placed,
  others: readonly Placed[],
  rowHeight: number,
  rowsHeight: number,
): FitView {
  let t0 = anchor.start;
  let t1 = anchor.end;
  let y0 = anchor.y >= 0 ? anchor.y : Infinity;
  let y1 = anchor.y >= 0 ? anchor.y + rowHeight : -Infinity;
  for (const item of others) {
    t0 = Math.min(t0, item.start);
    t1 = Math.max(t1, item.end);
    if (item.y < 0) continue;
    y0 = Math.min(y0, item.y);
    y1 = Math.max(y1, item.y + rowHeight);
  }
  const span = Math.max(t1 - t0, MIN_SPAN_NS);
  const mid = (t0 + t1) / 2;
  const half = (span * (1 + 2 * TIME_MARGIN)) / 2;
  return { start: mid - half, end: mid + half, scrollTop: fitScroll(anchor, y0, y1, rowHeight, rowsHeight) };
}

function fitScroll(anchor: Placed, y0: number, y1: number, rowHeight: number, rowsHeight: number): number {
  if (!Number.isFinite(y0)) return 0;
  const height = y1 - y0 + 2 * Y_MARGIN;
  if (height <= rowsHeight) return Math.max(0, y0 - Y_MARGIN - (rowsHeight - height) / 2);
  if (anchor.y < 0) return Math.max(0, y0 - Y_MARGIN);
  // Too tall for the screen: the anchor's row stays on it, with as much of the rest as fits on its side.
  return Math.max(0, y0 - Y_MARGIN, anchor.y + rowHeight + Y_MARGIN - rowsHeight);
}
