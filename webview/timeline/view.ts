/**
 * The timeline canvas: tracks grouped by process, one row per nesting depth, flows between launches and device
 * slices, a time ruler, selection, hover, and Perfetto's navigation (wheel, drag, trackpad, W/A/S/D).
 *
 * This class holds the state and composes the parts: the viewport (what is on screen), the layout (the rows),
 * the painters (slices, highlights, flows, ruler, track names), the hit tests, the input and the tooltip.
 * render() is synchronous and draws only what is on screen; redraws are coalesced with requestAnimationFrame.
 */
import { tickStep } from '../../extension/shared/format';
import type { TimelineModel } from '../model';
import { readTheme, type Theme } from '../theme';
import { FlowPainter, flowsOf } from './flows';
import type { Frame } from './frame';
import { drawHighlights } from './highlights';
import { hitTest, type Hit } from './hitTest';
import { TimelineInput, type InputTarget } from './input';
import { processOf, ROW_HEIGHT, TrackLayout } from './layout';
import { SlicePainter } from './paint';
import { drawRuler } from './ruler';
import { Tooltip } from './tooltip';
import { drawTrackLabels } from './trackLabels';
import { LABEL_WIDTH, RULER_HEIGHT, Viewport } from './viewport';

export interface TimelineCallbacks {
  onSelect(slice: number): void;
  onViewChange(): void;
  /** Enter on the selected slice: open its source site. */
  onActivate(slice: number): void;
}

export interface FrameStats {
  /** Duration of each render() call in ms (the last 600). */
  frameTimes: number[];
  frames: number;
  blocks: number;
  labels: number;
  flows: number;
  /** Flows in view that were not drawn because there were too many. */
  flowsHidden: number;
}

/** Ruler ticks at least this far apart, CSS px. */
const TICK_SPACING_PX = 110;

export class TimelineView implements InputTarget {
  readonly canvas: HTMLCanvasElement;
  readonly viewport: Viewport;
  selected = -1;
  /** When set, render() forces rasterisation so frame times include it (benchmarks). */
  forceRaster = false;
  /** Level of detail on; off draws every slice in view (the benchmark's baseline). */
  levelOfDetail = true;
  readonly stats: FrameStats = { frameTimes: [], frames: 0, blocks: 0, labels: 0, flows: 0, flowsHidden: 0 };
  private readonly ctx: CanvasRenderingContext2D;
  private theme: Theme;
  private readonly rows: TrackLayout;
  private readonly slices: SlicePainter;
  private readonly flows: FlowPainter;
  private readonly tooltip: Tooltip;
  private hovered = -1;
  private nameMatches: Uint8Array | undefined;
  private redrawPending = false;

  constructor(
    private readonly container: HTMLElement,
    readonly model: TimelineModel,
    private readonly callbacks: TimelineCallbacks,
  ) {
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'timeline-canvas';
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'application');
    this.canvas.setAttribute(
      'aria-label',
      'Timeline. W and S zoom, A and D pan, arrow keys move the selection, Enter opens its source, C collapses its process, F fits the selection, 0 fits all.',
    );
    container.appendChild(this.canvas);
    this.tooltip = new Tooltip(container);
    this.ctx = this.canvas.getContext('2d', { alpha: false })!;
    this.theme = readTheme();
    this.viewport = new Viewport(model.header.startNs, model.header.endNs);
    this.rows = new TrackLayout(model);
    this.slices = new SlicePainter(model, this.theme.palette.length);
    this.flows = new FlowPainter(model);
    this.layout();
    new TimelineInput(this);
    new ResizeObserver(() => this.resize()).observe(container);
    this.resize();
  }

  get viewStart(): number {
    return this.viewport.viewStart;
  }

  get viewEnd(): number {
    return this.viewport.viewEnd;
  }

  get scrollTop(): number {
    return this.viewport.scrollTop;
  }

  get nsPerPx(): number {
    return this.viewport.nsPerPx;
  }

  /** Lays the rows out again (after a process collapses or expands). */
  layout(): void {
    this.rows.build();
    this.viewport.contentHeight = this.rows.height;
    this.viewport.clampScroll();
  }

  private resize(): void {
    const rect = this.container.getBoundingClientRect();
    const viewport = this.viewport;
    viewport.resize(rect.width, rect.height, window.devicePixelRatio || 1);
    this.canvas.width = Math.floor(viewport.width * viewport.dpr);
    this.canvas.height = Math.floor(viewport.height * viewport.dpr);
    this.canvas.style.width = `${viewport.width}px`;
    this.canvas.style.height = `${viewport.height}px`;
    this.render();
  }

  // ------------------------------------------------------------------------------------------------ navigation

  setView(start: number, end: number, scrollTop = this.viewport.scrollTop): void {
    this.viewport.set(start, end, scrollTop);
    this.scheduleRedraw();
    this.callbacks.onViewChange();
  }

  fit(): void {
    const [start, end] = this.viewport.whole();
    this.setView(start, end);
  }

  zoom(factor: number, atX = this.viewport.centreX): void {
    const { viewStart, viewEnd } = this.viewport;
    const anchor = this.viewport.nsAt(atX);
    this.setView(anchor - (anchor - viewStart) * factor, anchor + (viewEnd - anchor) * factor);
  }

  panPx(dx: number, dy = 0): void {
    const { viewStart, viewEnd, scrollTop, nsPerPx } = this.viewport;
    const dt = dx * nsPerPx;
    this.setView(viewStart + dt, viewEnd + dt, scrollTop + dy);
  }

  scrollBy(dy: number): void {
    const { viewStart, viewEnd, scrollTop } = this.viewport;
    this.setView(viewStart, viewEnd, scrollTop + dy);
  }

  /** Brings a slice on screen: centres it (zooming out when it is wider than the view) and scrolls to its row. */
  reveal(slice: number, zoomTo = false): void {
    const start = this.model.columns.start[slice];
    const end = this.model.end(slice);
    const { viewStart, viewEnd } = this.viewport;
    const span = revealedSpan(end - start, viewEnd - viewStart, this.viewport.nsPerPx, zoomTo);
    const scrollTop = this.scrollToLane(this.model.laneOfSlice[slice]);
    const inView = start >= viewStart && end <= viewEnd && !zoomTo && span === viewEnd - viewStart;
    if (inView) this.setView(viewStart, viewEnd, scrollTop);
    else {
      const mid = (start + end) / 2;
      this.setView(mid - span / 2, mid + span / 2, scrollTop);
    }
  }

  /** The scroll that shows a lane (its process expanded first): the current one when the lane is in view. */
  private scrollToLane(lane: number): number {
    if (lane >= 0 && this.rows.laneY[lane] < 0) {
      this.rows.expand(processOf(this.model.lanes[lane]));
      this.layout();
    }
    const laneY = this.rows.laneY;
    let scrollTop = this.viewport.scrollTop;
    if (lane >= 0 && laneY[lane] >= 0) {
      const y = laneY[lane];
      const visible = this.viewport.rowsHeight;
      if (y < scrollTop || y + ROW_HEIGHT > scrollTop + visible) scrollTop = Math.max(0, y - visible / 3);
    }
    return scrollTop;
  }

  select(slice: number, reveal = true): void {
    this.selected = slice;
    if (slice >= 0 && reveal) this.reveal(slice);
    this.scheduleRedraw();
    this.callbacks.onSelect(slice);
  }

  activate(slice: number): void {
    this.callbacks.onActivate(slice);
  }

  toggleProcess(process?: string): boolean {
    const s = this.selected;
    const lane = s >= 0 ? this.model.lanes[this.model.laneOfSlice[s]] : undefined;
    const target = process ?? (lane ? processOf(lane) : this.rows.processBelow(this.viewport.scrollTop));
    if (target === undefined) return false;
    this.rows.toggle(target);
    this.layout();
    this.scheduleRedraw();
    return true;
  }

  /**
   * Shows or hides the profiler's own frames: the rows are laid out again, and the selection, when it is still
   * drawn, kept on screen.
   */
  setProfilerFrames(show: boolean): void {
    if (show === this.model.profilerFramesShown) return;
    this.model.showProfilerFrames(show);
    this.hovered = -1;
    this.layout();
    const lane = this.selected >= 0 ? this.model.laneOfSlice[this.selected] : -1;
    this.setView(this.viewport.viewStart, this.viewport.viewEnd, this.scrollToLane(lane));
  }

  setSearchMatches(nameMatches: Uint8Array | undefined): void {
    this.nameMatches = nameMatches;
    this.scheduleRedraw();
  }

  refreshTheme(): void {
    this.theme = readTheme();
    this.scheduleRedraw();
  }

  scheduleRedraw(): void {
    if (this.redrawPending) return;
    this.redrawPending = true;
    requestAnimationFrame(() => {
      this.redrawPending = false;
      this.render();
    });
  }

  // ------------------------------------------------------------------------------------------------ drawing

  render(): void {
    const t0 = performance.now();
    const frame = this.beginFrame();
    const { ctx, viewport } = frame;
    this.stats.blocks = this.slices.collect(frame, this.levelOfDetail);
    this.slices.paint(frame);
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_WIDTH, RULER_HEIGHT, viewport.width - LABEL_WIDTH, viewport.height - RULER_HEIGHT);
    ctx.clip();
    const labels = this.slices.drawLabels(frame);
    drawHighlights(frame, { nameMatches: this.nameMatches, hovered: this.hovered, selected: this.selected });
    const flows = this.flows.draw(frame, this.selected);
    this.stats.flows = flows.drawn;
    this.stats.flowsHidden = flows.hidden;
    ctx.restore();
    drawTrackLabels(frame);
    drawRuler(frame);
    // Too many arrows would hide the slices: say so, and how to get them back.
    this.flows.drawHiddenNote(frame, flows.hidden);
    if (this.forceRaster) ctx.getImageData(0, 0, 1, 1);
    const times = this.stats.frameTimes;
    if (times.length >= 600) times.shift();
    times.push(performance.now() - t0);
    this.stats.frames++;
    this.stats.labels = labels;
  }

  /** Clears the canvas and sets its font; the frame's shared state. */
  private beginFrame(): Frame {
    const { ctx, theme, viewport } = this;
    ctx.setTransform(viewport.dpr, 0, 0, viewport.dpr, 0, 0);
    ctx.fillStyle = theme.background;
    ctx.fillRect(0, 0, viewport.width, viewport.height);
    ctx.font = theme.font;
    ctx.textBaseline = 'middle';
    return {
      ctx,
      canvas: this.canvas,
      theme,
      model: this.model,
      viewport,
      layout: this.rows,
      charWidth: ctx.measureText('abcdefghijklmnopqrstuvwxyz_:').width / 28,
      step: tickStep(viewport.nsPerPx, TICK_SPACING_PX),
    };
  }

  /** The flows that belong to the selection: into a device slice, out of a launch, or through an op's kernels. */
  selectedFlows(): [number, number][] {
    return flowsOf(this.model, this.selected);
  }

  // ------------------------------------------------------------------------------------------------ pointer

  /** The slice under a screen point, or -1; merged blocks answer with their count for the tooltip. */
  hitTest(x: number, y: number): Hit {
    return hitTest(this.viewport, this.rows, x, y);
  }

  processHeaderAt(y: number): string | undefined {
    return this.rows.processHeaderAt(this.viewport.contentY(y));
  }

  hover(x: number, y: number, clientX: number, clientY: number): void {
    const hit = this.hitTest(x, y);
    if (hit.slice !== this.hovered) {
      this.hovered = hit.merged > 0 ? -1 : hit.slice;
      this.scheduleRedraw();
    }
    if (hit.slice < 0) this.tooltip.hide();
    else this.tooltip.show(this.model, hit, clientX, clientY);
  }

  unhover(): void {
    this.hovered = -1;
    this.tooltip.hide();
    this.scheduleRedraw();
  }

  hideTooltip(): void {
    this.tooltip.hide();
  }
}

/**
 * The span that shows a slice `duration` long: the current `span` unless the slice is wider than 90% of it
 * (three times the slice) or narrower than three pixels (40 times the slice: found but not seen otherwise);
 * zooming to it, 1.5 times the slice.
 */
function revealedSpan(duration: number, span: number, nsPerPx: number, zoomTo: boolean): number {
  if (zoomTo) return Math.max(duration * 1.5, 10);
  if (duration > span * 0.9) return duration * 3;
  if (duration < nsPerPx * 3) return Math.max(duration * 40, 1000);
  return span;
}
