/**
 * The timeline canvas: tracks grouped by process, one row per nesting depth, flows between launches and device
 * slices, a time ruler, selection, hover, and Perfetto's navigation (wheel, drag, trackpad, W/A/S/D).
 *
 * This class holds the state and composes the parts: the viewport (what is on screen), the layout (the rows),
 * the painters (slices, highlights, flows, ruler, track names), the hit tests, the input and the tooltip.
 * render() is synchronous and draws only what is on screen; redraws are coalesced with requestAnimationFrame.
 */
import { formatDuration } from '../../extension/shared/format';
import { isDeviceKind } from '../../extension/shared/kinds';
import type { TimelineCounterTrack } from '../../extension/protocol';
import type { TimelineModel } from '../model';
import { readTheme, type Theme } from '../theme';
import { describeCounterAt, drawCounterHover, drawCounterRow } from './counters';
import { FlowPainter, flowsOf } from './flows';
import type { Frame } from './frame';
import { fitView, type Placed } from './fit';
import { drawHighlights } from './highlights';
import { hitTest, type Hit } from './hitTest';
import { TimelineInput, type InputTarget } from './input';
import { ROW_HEIGHT, TrackLayout } from './layout';
import { SlicePainter } from './paint';
import { drawRuler, rulerTicks } from './ruler';
import { Tooltip } from './tooltip';
import { drawTrackLabels } from './trackLabels';
import { LABEL_WIDTH, RULER_HEIGHT, Viewport } from './viewport';

export interface TimelineCallbacks {
  onSelect(slice: number): void;
  onViewChange(): void;
  /** Enter on the selected slice: open its source site. */
  onActivate(slice: number): void;
  /** A time range was dragged out (ns), or cleared (undefined). */
  onRange(range: TimeRange | undefined): void;
}

export interface TimeRange {
  start: number;
  end: number;
}

/** The most device slices "Fit selection" fits (an op can launch thousands). */
const MAX_FIT_SLICES = 20_000;

export interface FrameStats {
  /** Duration of each render() call in ms (the last 600). */
  frameTimes: number[];
  frames: number;
  blocks: number;
  labels: number;
  flows: number;
  /** Flows in view that were not drawn because there were too many. */
  flowsHidden: number;
  /** Counter points (or buckets of them) drawn. */
  counterPoints: number;
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
  /** Every flow in view drawn, not only the selection's. */
  allFlows = false;
  /** The time range dragged out, if any. */
  range: TimeRange | undefined;
  readonly stats: FrameStats = {
    frameTimes: [],
    frames: 0,
    blocks: 0,
    labels: 0,
    flows: 0,
    flowsHidden: 0,
    counterPoints: 0,
  };
  private readonly ctx: CanvasRenderingContext2D;
  private theme: Theme;
  private readonly rows: TrackLayout;
  private readonly slices: SlicePainter;
  private readonly flows: FlowPainter;
  private readonly tooltip: Tooltip;
  private hovered = -1;
  /** The counter row under the pointer and the time there. */
  private hoveredCounter: { id: number; t: number } | undefined;
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
      'Timeline. W and S zoom, A and D pan, arrow keys move the selection, Enter opens its source, C collapses its process, P pins its track, F fits the selection, 0 fits all, Shift+drag or a drag on the ruler selects a time range, Escape clears it.',
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
    this.stickPinned();
    this.viewport.clampScroll();
  }

  /**
   * Pinned rows stay under the ruler while the rest scrolls, as long as they take at most half the screen; taller,
   * they scroll with the rest (still first), or nothing else could be seen.
   */
  private stickPinned(): void {
    const pinned = this.rows.pinnedHeight;
    this.viewport.fixedHeight = pinned <= this.viewport.rowsHeight / 2 ? pinned : 0;
  }

  private resize(): void {
    const rect = this.container.getBoundingClientRect();
    const viewport = this.viewport;
    viewport.resize(rect.width, rect.height, window.devicePixelRatio || 1);
    this.stickPinned();
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
      this.rows.expand(this.rows.processOf(this.model.lanes[lane]));
      this.layout();
    }
    const laneY = this.rows.laneY;
    let scrollTop = this.viewport.scrollTop;
    const fixed = this.viewport.fixedHeight;
    // Pinned rows are always on screen; the rest scroll in the room below them.
    if (lane >= 0 && laneY[lane] >= fixed) {
      const y = laneY[lane];
      const visible = this.viewport.rowsHeight;
      if (y < scrollTop + fixed || y + ROW_HEIGHT > scrollTop + visible) {
        scrollTop = Math.max(0, y - fixed - (visible - fixed) / 3);
      }
    }
    return scrollTop;
  }

  /**
   * Zooms and scrolls so that the selection and every device slice it launched (its own, its children's) are on
   * one screen (a device slice: with the call that launched it); with nothing selected, fits the whole profile.
   */
  fitSelection(): void {
    const slice = this.selected;
    if (slice < 0) return this.fit();
    const launched = this.fitted(slice);
    for (const s of [slice, ...launched]) {
      const lane = this.model.laneOf(s);
      if (lane && this.rows.laneY[lane.index] < 0) this.rows.expand(this.rows.processOf(lane));
    }
    this.layout();
    const room = this.viewport.rowsHeight - this.viewport.fixedHeight;
    const fitted = fitView(
      this.placed(slice),
      launched.map((s) => this.placed(s)),
      ROW_HEIGHT,
      room,
    );
    this.setView(fitted.start, fitted.end, fitted.scrollTop);
  }

  /** What fitting a slice brings on screen with it: what it launched; for a device slice, its launch. */
  private fitted(slice: number): number[] {
    const { kind, runtimeOf, opOf } = this.model.columns;
    if (!isDeviceKind(kind[slice])) return this.model.launchedUnder(slice, MAX_FIT_SLICES);
    const launch = runtimeOf[slice] >= 0 ? runtimeOf[slice] : opOf[slice];
    return launch >= 0 ? [launch] : [];
  }

  /** A slice for fitView: its row's y in the scrolled part (-1 for a pinned row, which needs no scroll). */
  private placed(slice: number): Placed {
    const top = this.rowTop(slice);
    const fixed = this.viewport.fixedHeight;
    const y = top >= fixed ? top - fixed : -1;
    return { start: this.model.columns.start[slice], end: this.model.end(slice), y };
  }

  /** The content y of the top of a slice's row as laid out now, -1 when it has none (automation). */
  rowTop(slice: number): number {
    const lane = this.model.laneOfSlice[slice];
    return lane >= 0 ? this.rows.laneY[lane] : -1;
  }

  /** Sets the dragged-out time range (ns), or clears it. */
  setRange(range: TimeRange | undefined): void {
    this.range = range && { start: Math.min(range.start, range.end), end: Math.max(range.start, range.end) };
    this.scheduleRedraw();
    this.callbacks.onRange(this.range);
  }

  setAllFlows(all: boolean): void {
    this.allFlows = all;
    this.scheduleRedraw();
  }

  /** Track ids pinned to the top, in no particular order. */
  get pinned(): number[] {
    return [...this.rows.pinned];
  }

  /** Pins a track to the top or unpins it; false for no such track. */
  togglePin(trackId: number): boolean {
    if (!this.model.header.tracks.some((t) => t.id === trackId)) return false;
    this.rows.togglePin(trackId);
    this.layout();
    this.scheduleRedraw();
    this.callbacks.onViewChange();
    return true;
  }

  /** Pins the track whose row is at a screen y (the track-name column's click); false when none is. */
  togglePinAt(y: number): boolean {
    const row = this.rows.trackAt(this.viewport.contentY(y));
    return row?.trackId !== undefined && this.togglePin(row.trackId);
  }

  /** Pins the selection's track (key P); false with nothing selected. */
  togglePinSelected(): boolean {
    const track = this.selected >= 0 ? this.model.trackOf(this.selected) : undefined;
    return track !== undefined && this.togglePin(track.id);
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
    const target =
      process ?? (lane ? this.rows.processOf(lane) : this.rows.processBelow(this.viewport.scrollTop));
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
    this.stats.counterPoints = this.drawCounters(frame);
    const labels = this.slices.drawLabels(frame);
    drawHighlights(frame, { nameMatches: this.nameMatches, hovered: this.hovered, selected: this.selected });
    const flows = this.flows.draw(frame, this.selected, this.allFlows);
    this.stats.flows = flows.drawn;
    this.stats.flowsHidden = flows.hidden;
    ctx.restore();
    drawTrackLabels(frame);
    drawRuler(frame);
    this.drawRange(frame);
    // Too many arrows would hide the slices: say so, and how to get them back.
    this.flows.drawHiddenNote(frame, flows.hidden);
    if (this.forceRaster) ctx.getImageData(0, 0, 1, 1);
    const times = this.stats.frameTimes;
    if (times.length >= 600) times.shift();
    times.push(performance.now() - t0);
    this.stats.frames++;
    this.stats.labels = labels;
  }

  /** The counter rows on screen; answers the points drawn. */
  private drawCounters(frame: Frame): number {
    const { viewport } = frame;
    let points = 0;
    for (const row of this.rows.rows) {
      if (row.kind !== 'counter' || !row.counter) continue;
      const y = viewport.screenY(row.y);
      if (y + row.height < RULER_HEIGHT || y > viewport.height || viewport.covered(row.y)) continue;
      const lods = this.model.seriesOf(row.counter);
      points += drawCounterRow(frame, row.counter, lods, y, row.height);
      const hover = this.hoveredCounter;
      if (hover?.id === row.counter.id) drawCounterHover(frame, row.counter, lods, y, row.height, hover.t);
    }
    return points;
  }

  /** Clears the canvas and sets its font; the frame's shared state. */
  private beginFrame(): Frame {
    const { ctx, theme, viewport } = this;
    const origin = this.model.header.startNs;
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
      ruler: rulerTicks(
        viewport.viewStart - origin,
        viewport.viewEnd - origin,
        viewport.nsPerPx,
        TICK_SPACING_PX,
      ),
      nameMatches: this.nameMatches,
    };
  }

  /** The dragged-out range: shaded over the rows, its edges, and its length on the ruler. */
  private drawRange(frame: Frame): void {
    const range = this.range;
    if (!range) return;
    const { ctx, theme, viewport } = frame;
    const x0 = Math.max(LABEL_WIDTH, viewport.xOf(range.start));
    const x1 = Math.min(viewport.width, viewport.xOf(range.end));
    if (x1 < LABEL_WIDTH || x0 > viewport.width) return;
    ctx.fillStyle = theme.selection;
    ctx.globalAlpha = 0.12;
    ctx.fillRect(x0, RULER_HEIGHT, Math.max(1, x1 - x0), viewport.height - RULER_HEIGHT);
    ctx.globalAlpha = 1;
    ctx.fillRect(x0, 0, 1, viewport.height);
    ctx.fillRect(x1, 0, 1, viewport.height);
    const label = formatDuration(range.end - range.start);
    const width = ctx.measureText(label).width + 8;
    const x = Math.min(Math.max(LABEL_WIDTH, (x0 + x1) / 2 - width / 2), viewport.width - width);
    ctx.fillRect(x, 2, width, RULER_HEIGHT - 4);
    ctx.fillStyle = theme.background;
    ctx.fillText(label, x + 4, RULER_HEIGHT / 2);
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

  /** The counter row under a screen point, if any. */
  counterAt(x: number, y: number): TimelineCounterTrack | undefined {
    if (x < LABEL_WIDTH || y < RULER_HEIGHT) return undefined;
    return this.rows.counterAt(this.viewport.contentY(y))?.counter;
  }

  hover(x: number, y: number, clientX: number, clientY: number): void {
    const counter = this.counterAt(x, y);
    const t = this.viewport.nsAt(x);
    if (counter || this.hoveredCounter) {
      this.hoveredCounter = counter && { id: counter.id, t };
      this.scheduleRedraw();
    }
    if (counter) {
      this.hovered = -1;
      const text = describeCounterAt(counter, this.model.seriesOf(counter), t, this.model.header.startNs);
      this.tooltip.showText(counter.name, text, clientX, clientY);
      return;
    }
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
    this.hoveredCounter = undefined;
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
