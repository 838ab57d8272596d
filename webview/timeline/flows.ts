/**
 * Launch -> device arrows: those of the selection (its launches, or the launches of everything it encloses), and,
 * with "All flows" on, every one in view while few are (beyond that they would hide the slices, and a note says
 * how to get them back). Nothing is drawn when there is nothing selected to draw for.
 */
import { isDeviceKind, isLaunchKind } from '../../extension/shared/kinds';
import { lowerBound, type TimelineModel } from '../model';
import type { Frame } from './frame';
import { ROW_HEIGHT } from './layout';
import { formatCount } from '../../extension/shared/format';

/** Beyond this many launch -> device pairs in view, only the selected slice's flows are drawn. */
const MAX_FLOWS_IN_VIEW = 400;
/** The most arrows drawn for one selected slice (an op can launch thousands of kernels). */
const MAX_SELECTED_FLOWS = 2000;

/** First j with start[target[order[j]]] >= t, order sorted by that key. */
function lowerBoundIndirect(order: Int32Array, target: Int32Array, start: Float64Array, t: number): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (start[target[order[mid]]] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The flows that belong to a selection: into a device slice, out of a launch, or from the launches of an op, its
 * children and everything else it encloses to their device slices.
 */
export function flowsOf(model: TimelineModel, selected: number): [number, number][] {
  if (selected < 0) return [];
  const { kind, runtimeOf, opOf } = model.columns;
  if (isDeviceKind(kind[selected])) {
    const from = runtimeOf[selected] >= 0 ? runtimeOf[selected] : opOf[selected];
    return from >= 0 ? [[from, selected]] : [];
  }
  const isLaunch = isLaunchKind(kind[selected]);
  return model.launchedUnder(selected, MAX_SELECTED_FLOWS).map((device) => {
    const launch = runtimeOf[device] >= 0 ? runtimeOf[device] : opOf[device];
    const from = isLaunch ? selected : launch >= 0 ? launch : selected;
    return [from, device];
  });
}

export class FlowPainter {
  /** Flow indexes sorted by the start of their device slice (the payload sorts them by launch start). */
  private readonly flowsByTo: Int32Array;
  /** The selection's flows, kept while it stays selected (an enclosing frame's walk is long). */
  private selection: { slice: number; framesShown: boolean; flows: [number, number][] } | undefined;

  constructor(private readonly model: TimelineModel) {
    const { flowTo, start } = model.columns;
    const order = new Int32Array(flowTo.length);
    for (let k = 0; k < order.length; k++) order[k] = k;
    this.flowsByTo = order.sort((a, b) => start[flowTo[a]] - start[flowTo[b]] || a - b);
  }

  /**
   * Draws the selection's flows, and with `all` every flow in view; answers how many were drawn and how many
   * were left out.
   */
  draw(frame: Frame, selected: number, all: boolean): { drawn: number; hidden: number } {
    const { ctx, theme } = frame;
    let inView = { drawn: 0, hidden: 0 };
    if (all) {
      ctx.beginPath();
      inView = this.traceFlowsInView(frame);
      ctx.strokeStyle = theme.flow;
      ctx.lineWidth = 1;
      ctx.globalAlpha = 0.7;
      ctx.stroke();
      ctx.globalAlpha = 1;
    }
    let drawn = inView.drawn;
    const flows = this.selectionFlows(selected);
    if (flows.length > 0) {
      ctx.beginPath();
      for (const [from, to] of flows) if (this.arrow(frame, from, to)) drawn++;
      ctx.strokeStyle = theme.flowSelected;
      ctx.lineWidth = 2;
      ctx.stroke();
    }
    return { drawn, hidden: inView.hidden };
  }

  private selectionFlows(selected: number): [number, number][] {
    const framesShown = this.model.profilerFramesShown;
    const kept = this.selection;
    if (kept?.slice === selected && kept.framesShown === framesShown) return kept.flows;
    const flows = flowsOf(this.model, selected);
    this.selection = { slice: selected, framesShown, flows };
    return flows;
  }

  /**
   * Adds the arrows of the flows in view to the path. A flow is in view when its launch or its device slice
   * starts in view: two contiguous ranges, one in the flows sorted by launch start, one in those by device start.
   */
  private traceFlowsInView(frame: Frame): { drawn: number; hidden: number } {
    const { viewStart, viewEnd } = frame.viewport;
    const { flowFrom, flowTo, start } = this.model.columns;
    const fromLo = lowerBound(flowFrom, start, viewStart);
    const fromHi = lowerBound(flowFrom, start, viewEnd + 1e-9);
    const toLo = lowerBoundIndirect(this.flowsByTo, flowTo, start, viewStart);
    const toHi = lowerBoundIndirect(this.flowsByTo, flowTo, start, viewEnd + 1e-9);
    const candidates = fromHi - fromLo + (toHi - toLo);
    if (candidates > MAX_FLOWS_IN_VIEW * 2) return { drawn: 0, hidden: candidates };
    let drawn = 0;
    for (let k = fromLo; k < fromHi; k++) if (this.arrow(frame, flowFrom[k], flowTo[k])) drawn++;
    for (let j = toLo; j < toHi; j++) {
      const k = this.flowsByTo[j];
      const launch = start[flowFrom[k]];
      if (launch >= viewStart && launch <= viewEnd) continue; // drawn above
      if (this.arrow(frame, flowFrom[k], flowTo[k])) drawn++;
    }
    return { drawn, hidden: 0 };
  }

  /** Anchor points of a slice for flow arrows: its start x, and its row's top and bottom y (screen). */
  private anchor(frame: Frame, slice: number): { x: number; top: number; bottom: number } | undefined {
    const { model, layout, viewport } = frame;
    const lane = model.laneOfSlice[slice];
    if (lane < 0 || layout.laneY[lane] < 0 || viewport.covered(layout.laneY[lane])) return undefined;
    const top = viewport.screenY(layout.laneY[lane]);
    return { x: viewport.xOf(model.columns.start[slice]), top, bottom: top + ROW_HEIGHT - 1 };
  }

  /** Adds an arrow from one slice to another to the path; false when either is not laid out. */
  private arrow(frame: Frame, from: number, to: number): boolean {
    const a = this.anchor(frame, from);
    const b = this.anchor(frame, to);
    if (!a || !b) return false;
    const ctx = frame.ctx;
    const down = b.top >= a.bottom;
    const y1 = down ? a.bottom : a.top;
    const y2 = down ? b.top : b.bottom;
    const bend = Math.max(12, Math.abs(y2 - y1) / 2);
    ctx.moveTo(a.x, y1);
    ctx.bezierCurveTo(a.x, y1 + (down ? bend : -bend), b.x, y2 - (down ? bend : -bend), b.x, y2);
    const head = down ? -5 : 5;
    ctx.moveTo(b.x - 4, y2 + head);
    ctx.lineTo(b.x, y2);
    ctx.lineTo(b.x + 4, y2 + head);
    return true;
  }

  /** Says how many flows are in view but not drawn, and how to see them. */
  drawHiddenNote(frame: Frame, hidden: number): void {
    if (hidden <= 0) return;
    const { ctx, theme, viewport } = frame;
    const note = `${formatCount(hidden)} flows in view: zoom in to see them`;
    const width = ctx.measureText(note).width + 12;
    ctx.fillStyle = theme.headerBackground;
    ctx.fillRect(viewport.width - width - 4, viewport.height - 22, width, 18);
    ctx.fillStyle = theme.muted;
    ctx.fillText(note, viewport.width - width + 2, viewport.height - 13);
  }
}
