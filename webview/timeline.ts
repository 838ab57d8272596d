/**
 * The timeline canvas: tracks grouped by process, one row per nesting depth, flows between launches and device
 * slices, a time ruler, selection, hover, and Perfetto's navigation (wheel, drag, trackpad, W/A/S/D).
 *
 * render() is synchronous and draws only what is on screen: per lane it picks the level of detail whose
 * resolution matches the current ns-per-pixel, binary-searches the first visible block and stops at the right
 * edge, so a frame costs pixels, not events. Redraws are coalesced with requestAnimationFrame.
 */
import { visibleText } from '../extension/shared/text';
import { formatDuration, formatTick, tickStep } from '../extension/shared/format';
import { firstEndingAfter, sliceAt } from './lod';
import { isDevice, KIND_DRIVER, KIND_RUNTIME, type Lane, type TimelineModel } from './model';
import { colourIndex, readTheme, type Theme } from './theme';

export const LABEL_WIDTH = 200;
export const RULER_HEIGHT = 24;
export const ROW_HEIGHT = 18;
const PROCESS_HEIGHT = 22;
const TRACK_GAP = 6;
const MIN_LABEL_PX = 28;
/** Beyond this many launch -> device pairs in view, only the selected slice's flows are drawn. */
const MAX_FLOWS_IN_VIEW = 400;

interface Row {
  kind: 'process' | 'track';
  y: number;
  height: number;
  label: string;
  detail: string;
  process: string;
  lanes: Lane[];
}

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

export class TimelineView {
  readonly canvas: HTMLCanvasElement;
  private readonly ctx: CanvasRenderingContext2D;
  private theme: Theme;
  private width = 0;
  private height = 0;
  private dpr = 1;
  viewStart: number;
  viewEnd: number;
  scrollTop = 0;
  selected = -1;
  private hovered = -1;
  private rows: Row[] = [];
  private contentHeight = 0;
  /** Per lane: y of its top in content coordinates, -1 when hidden (process collapsed). */
  private laneY: Float64Array;
  private readonly collapsed = new Set<string>();
  private readonly colourOfName: Uint8Array;
  private nameMatches: Uint8Array | undefined;
  private redrawPending = false;
  private readonly keysHeld = new Set<string>();
  private animating = false;
  private lastAnimation = 0;
  private pointer: { x: number; y: number } | undefined;
  private drag:
    | { x: number; y: number; moved: boolean; viewStart: number; viewEnd: number; scrollTop: number }
    | undefined;
  private readonly flowsByTo: Int32Array;
  private readonly tooltip: HTMLElement;
  private charWidth = 6;
  /** When set, render() forces rasterisation so frame times include it (benchmarks). */
  forceRaster = false;
  /** Level of detail on; off draws every slice in view (the benchmark's baseline). */
  levelOfDetail = true;
  readonly stats: FrameStats = { frameTimes: [], frames: 0, blocks: 0, labels: 0, flows: 0, flowsHidden: 0 };
  // Reused per frame: rectangles bucketed by colour, labels.
  private rectX = new Float32Array(4096);
  private rectY = new Float32Array(4096);
  private rectW = new Float32Array(4096);
  private rectC = new Uint8Array(4096);
  private rectCount = 0;
  private bands: number[] = [];
  private bandCount = 0;
  private frame: ImageData | undefined;
  private framePixels: Uint32Array | undefined;
  private pixelColours:
    { theme: Theme; background: number; header: number; grid: number; palette: Uint32Array } | undefined;

  constructor(
    private readonly container: HTMLElement,
    private readonly model: TimelineModel,
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
    this.tooltip = document.createElement('div');
    this.tooltip.className = 'timeline-tooltip';
    this.tooltip.setAttribute('role', 'tooltip');
    this.tooltip.hidden = true;
    container.appendChild(this.tooltip);
    this.ctx = this.canvas.getContext('2d', { alpha: false })!;
    this.theme = readTheme();
    const span = model.header.endNs - model.header.startNs;
    const margin = span * 0.01;
    this.viewStart = model.header.startNs - margin;
    this.viewEnd = model.header.endNs + margin;
    this.laneY = new Float64Array(model.lanes.length).fill(-1);
    this.colourOfName = new Uint8Array(model.strings.length);
    for (let s = 0; s < model.strings.length; s++) {
      this.colourOfName[s] = colourIndex(model.strings[s], this.theme.palette.length);
    }
    this.flowsByTo = this.sortFlowsByTo();
    this.layout();
    this.attachEvents();
    new ResizeObserver(() => this.resize()).observe(container);
    this.resize();
  }

  // ------------------------------------------------------------------------------------------------ geometry

  get nsPerPx(): number {
    return (this.viewEnd - this.viewStart) / Math.max(1, this.width - LABEL_WIDTH);
  }

  private xOf(ns: number): number {
    return LABEL_WIDTH + (ns - this.viewStart) / this.nsPerPx;
  }

  private nsAt(x: number): number {
    return this.viewStart + (x - LABEL_WIDTH) * this.nsPerPx;
  }

  /** Flow indexes sorted by the start of their device slice (the payload sorts them by launch start). */
  private sortFlowsByTo(): Int32Array {
    const { flowTo, start } = this.model.columns;
    const order = new Int32Array(flowTo.length);
    for (let k = 0; k < order.length; k++) order[k] = k;
    return order.sort((a, b) => start[flowTo[a]] - start[flowTo[b]] || a - b);
  }

  layout(): void {
    const rows: Row[] = [];
    this.laneY.fill(-1);
    let y = 0;
    let process = '';
    for (const track of this.model.header.tracks) {
      const processKey = `${track.pid}`;
      if (processKey !== process) {
        process = processKey;
        const label = track.processName || `process ${track.pid}`;
        rows.push({
          kind: 'process',
          y,
          height: PROCESS_HEIGHT,
          label,
          detail: '',
          process: processKey,
          lanes: [],
        });
        y += PROCESS_HEIGHT;
      }
      if (this.collapsed.has(processKey)) continue;
      const lanes = (this.model.lanesOfTrack.get(track.id) ?? []).filter(Boolean);
      if (lanes.length === 0) continue;
      const height = lanes.length * ROW_HEIGHT + TRACK_GAP;
      for (const lane of lanes) this.laneY[lane.index] = y + TRACK_GAP / 2 + lane.depth * ROW_HEIGHT;
      rows.push({
        kind: 'track',
        y,
        height,
        label: track.name || track.tid,
        detail: `${track.sliceCount.toLocaleString('en-US')} slices`,
        process: processKey,
        lanes,
      });
      y += height;
    }
    this.rows = rows;
    this.contentHeight = y;
    this.clampScroll();
  }

  private resize(): void {
    const rect = this.container.getBoundingClientRect();
    this.dpr = window.devicePixelRatio || 1;
    this.width = Math.max(LABEL_WIDTH + 50, Math.floor(rect.width));
    this.height = Math.max(RULER_HEIGHT + 20, Math.floor(rect.height));
    this.canvas.width = Math.floor(this.width * this.dpr);
    this.canvas.height = Math.floor(this.height * this.dpr);
    this.canvas.style.width = `${this.width}px`;
    this.canvas.style.height = `${this.height}px`;
    this.clampScroll();
    this.render();
  }

  private clampScroll(): void {
    const max = Math.max(0, this.contentHeight - (this.height - RULER_HEIGHT));
    this.scrollTop = Math.min(Math.max(0, this.scrollTop), max);
  }

  private clampView(): void {
    const full = this.model.header.endNs - this.model.header.startNs;
    let span = this.viewEnd - this.viewStart;
    const minSpan = 10;
    const maxSpan = Math.max(full * 4, 1000);
    if (span < minSpan) {
      const mid = (this.viewStart + this.viewEnd) / 2;
      this.viewStart = mid - minSpan / 2;
      this.viewEnd = mid + minSpan / 2;
      span = minSpan;
    }
    if (span > maxSpan) {
      const mid = (this.viewStart + this.viewEnd) / 2;
      this.viewStart = mid - maxSpan / 2;
      this.viewEnd = mid + maxSpan / 2;
      span = maxSpan;
    }
    // Keep at least part of the profile on screen.
    const lo = this.model.header.startNs - span * 0.9;
    const hi = this.model.header.endNs + span * 0.9 - span;
    if (this.viewStart < lo) {
      this.viewStart = lo;
      this.viewEnd = lo + span;
    } else if (this.viewStart > hi) {
      this.viewStart = hi;
      this.viewEnd = hi + span;
    }
  }

  // ------------------------------------------------------------------------------------------------ navigation

  setView(start: number, end: number, scrollTop = this.scrollTop): void {
    this.viewStart = start;
    this.viewEnd = end;
    this.scrollTop = scrollTop;
    this.clampView();
    this.clampScroll();
    this.scheduleRedraw();
    this.callbacks.onViewChange();
  }

  fit(): void {
    const { startNs, endNs } = this.model.header;
    const margin = (endNs - startNs) * 0.01;
    this.setView(startNs - margin, endNs + margin);
  }

  zoom(factor: number, atX = LABEL_WIDTH + (this.width - LABEL_WIDTH) / 2): void {
    const anchor = this.nsAt(atX);
    this.setView(anchor - (anchor - this.viewStart) * factor, anchor + (this.viewEnd - anchor) * factor);
  }

  panPx(dx: number, dy = 0): void {
    const dt = dx * this.nsPerPx;
    this.setView(this.viewStart + dt, this.viewEnd + dt, this.scrollTop + dy);
  }

  /** Brings a slice on screen: centres it (zooming out when it is wider than the view) and scrolls to its row. */
  reveal(slice: number, zoomTo = false): void {
    const start = this.model.columns.start[slice];
    const end = this.model.end(slice);
    let span = this.viewEnd - this.viewStart;
    if (zoomTo) span = Math.max((end - start) * 1.5, 10);
    else if (end - start > span * 0.9) span = (end - start) * 3;
    // A slice narrower than a few pixels would be found but not seen: zoom until it is 1/40 of the view.
    else if (end - start < this.nsPerPx * 3) span = Math.max((end - start) * 40, 1000);
    const lane = this.model.laneOfSlice[slice];
    if (lane >= 0 && this.laneY[lane] < 0) {
      this.collapsed.delete(`${this.model.lanes[lane].track.pid}`);
      this.layout();
    }
    let scrollTop = this.scrollTop;
    if (lane >= 0 && this.laneY[lane] >= 0) {
      const y = this.laneY[lane];
      const visible = this.height - RULER_HEIGHT;
      if (y < scrollTop || y + ROW_HEIGHT > scrollTop + visible) scrollTop = Math.max(0, y - visible / 3);
    }
    const inView =
      start >= this.viewStart && end <= this.viewEnd && !zoomTo && span === this.viewEnd - this.viewStart;
    if (inView) this.setView(this.viewStart, this.viewEnd, scrollTop);
    else {
      const mid = (start + end) / 2;
      this.setView(mid - span / 2, mid + span / 2, scrollTop);
    }
  }

  select(slice: number, reveal = true): void {
    this.selected = slice;
    if (slice >= 0 && reveal) this.reveal(slice);
    this.scheduleRedraw();
    this.callbacks.onSelect(slice);
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
    const ctx = this.ctx;
    const theme = this.theme;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = theme.background;
    ctx.fillRect(0, 0, this.width, this.height);
    ctx.font = theme.font;
    ctx.textBaseline = 'middle';
    this.charWidth = ctx.measureText('abcdefghijklmnopqrstuvwxyz_:').width / 28;

    const step = tickStep(this.nsPerPx, 110);
    const top = RULER_HEIGHT;
    this.rectCount = 0;
    let labels = 0;
    const labelQueue: number[] = [];
    this.bandCount = 0;
    for (const row of this.rows) {
      const y = row.y - this.scrollTop + top;
      if (y + row.height < top || y > this.height) continue;
      if (row.kind === 'process') {
        this.bands[this.bandCount++] = y;
        continue;
      }
      for (const lane of row.lanes) {
        const ly = this.laneY[lane.index] - this.scrollTop + top;
        if (ly + ROW_HEIGHT < top || ly > this.height) continue;
        this.collectLane(lane, Math.round(ly), labelQueue);
      }
    }
    this.paintSlices(step);
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_WIDTH, top, this.width - LABEL_WIDTH, this.height - top);
    ctx.clip();
    labels = this.drawLabels(labelQueue);
    this.drawHighlights();
    this.drawFlows();
    ctx.restore();

    this.drawLabelColumn();
    this.drawRuler(step);
    if (this.stats.flowsHidden > 0) {
      // Too many arrows would hide the slices: say so, and how to get them back.
      const note = `${this.stats.flowsHidden.toLocaleString('en-US')} flows in view: zoom in or select a slice to see them`;
      const width = ctx.measureText(note).width + 12;
      ctx.fillStyle = theme.headerBackground;
      ctx.fillRect(this.width - width - 4, this.height - 22, width, 18);
      ctx.fillStyle = theme.muted;
      ctx.fillText(note, this.width - width + 2, this.height - 13);
    }

    if (this.forceRaster) ctx.getImageData(0, 0, 1, 1);
    const elapsed = performance.now() - t0;
    const times = this.stats.frameTimes;
    if (times.length >= 600) times.shift();
    times.push(elapsed);
    this.stats.frames++;
    this.stats.labels = labels;
  }

  private pushRect(x: number, y: number, w: number, colour: number): void {
    if (this.rectCount === this.rectX.length) {
      const grow = <T extends Float32Array | Uint8Array>(a: T): T => {
        const next = new (a.constructor as new (n: number) => T)(a.length * 2);
        next.set(a);
        return next;
      };
      this.rectX = grow(this.rectX);
      this.rectY = grow(this.rectY);
      this.rectW = grow(this.rectW);
      this.rectC = grow(this.rectC);
    }
    const i = this.rectCount++;
    this.rectX[i] = x;
    this.rectY[i] = y;
    this.rectW[i] = w;
    this.rectC[i] = colour;
  }

  private collectLane(lane: Lane, y: number, labelQueue: number[]): void {
    const nsPerPx = this.nsPerPx;
    const level = this.levelOfDetail ? lane.lod.levelFor(nsPerPx) : lane.lod.finest;
    const name = this.model.columns.name;
    const colourOfName = this.colourOfName;
    const viewStart = this.viewStart;
    const viewEnd = this.viewEnd;
    const right = this.width;
    let lastRight = -Infinity;
    const { start, end, slice, count } = level;
    for (let k = firstEndingAfter(level, viewStart); k < level.length; k++) {
      const s = start[k];
      if (s > viewEnd) break;
      // Whole device pixels: crisp edges, and the rasteriser's fast path for axis-aligned rectangles.
      let x0 = Math.round(LABEL_WIDTH + (s - viewStart) / nsPerPx);
      let x1 = Math.round(LABEL_WIDTH + (end[k] - viewStart) / nsPerPx);
      if (x1 <= x0) x1 = x0 + 1;
      // Several blocks in one pixel column: the first one drawn already covers it.
      if (x1 <= lastRight) continue;
      if (x0 < lastRight) x0 = lastRight;
      if (x0 < LABEL_WIDTH - 1) x0 = LABEL_WIDTH - 1;
      if (x1 > right + 1) x1 = right + 1;
      lastRight = x1;
      const sl = slice[k];
      this.pushRect(x0, y, x1 - x0, colourOfName[name[sl]]);
      if (count[k] === 1 && x1 - x0 >= MIN_LABEL_PX) labelQueue.push(sl, x0, y, x1 - x0);
    }
  }

  /**
   * The slice area is painted in JavaScript into a pixel buffer and put on the canvas in one call: the cost is
   * bounded by the area's pixels (the rows of one lane never overlap), however many blocks a dense view holds,
   * where a canvas fillRect per block costs tens of ms for tens of thousands of blocks in a software rasteriser.
   */
  private paintSlices(step: number): void {
    const dpr = this.dpr;
    const left = Math.round(LABEL_WIDTH * dpr);
    const top = Math.round(RULER_HEIGHT * dpr);
    const w = Math.max(1, this.canvas.width - left);
    const h = Math.max(1, this.canvas.height - top);
    if (!this.frame || this.frame.width !== w || this.frame.height !== h) {
      this.frame = this.ctx.createImageData(w, h);
      this.framePixels = new Uint32Array(this.frame.data.buffer);
    }
    const pixels = this.framePixels!;
    const colours = this.themePixels();
    pixels.fill(colours.background);
    // Process header bands.
    const bandHeight = Math.round(PROCESS_HEIGHT * dpr);
    for (let b = 0; b < this.bandCount; b++) {
      const y0 = Math.max(0, Math.round(this.bands[b] * dpr) - top);
      const y1 = Math.min(h, Math.round(this.bands[b] * dpr) - top + bandHeight);
      if (y1 > y0) pixels.fill(colours.header, y0 * w, y1 * w);
    }
    // Grid lines at the ruler's ticks.
    const first = Math.ceil(this.viewStart / step) * step;
    const lineWidth = Math.max(1, Math.round(dpr));
    for (let t = first; t <= this.viewEnd; t += step) {
      const x = Math.round(this.xOf(t) * dpr) - left;
      if (x < 0 || x + lineWidth > w) continue;
      for (let y = 0; y < h; y++) pixels.fill(colours.grid, y * w + x, y * w + x + lineWidth);
    }
    // Blocks.
    const rowHeight = ROW_HEIGHT - 1;
    const palette = colours.palette;
    for (let i = 0; i < this.rectCount; i++) {
      const x0 = Math.max(0, Math.round(this.rectX[i] * dpr) - left);
      const x1 = Math.min(w, Math.round((this.rectX[i] + this.rectW[i]) * dpr) - left);
      const y0 = Math.max(0, Math.round(this.rectY[i] * dpr) - top);
      const y1 = Math.min(h, Math.round((this.rectY[i] + rowHeight) * dpr) - top);
      if (x1 <= x0 || y1 <= y0) continue;
      const colour = palette[this.rectC[i]];
      for (let y = y0; y < y1; y++) pixels.fill(colour, y * w + x0, y * w + x1);
    }
    this.ctx.putImageData(this.frame, left, top);
    const border = this.theme.contrastBorder;
    if (border) {
      const ctx = this.ctx;
      ctx.strokeStyle = border;
      ctx.lineWidth = 1;
      for (let i = 0; i < this.rectCount; i++) {
        if (this.rectW[i] >= 3)
          ctx.strokeRect(this.rectX[i] + 0.5, this.rectY[i] + 0.5, this.rectW[i] - 1, rowHeight - 1);
      }
    }
    this.stats.blocks = this.rectCount;
  }

  /** The theme's colours as RGBA pixels (little-endian ABGR words), resolved by the canvas itself. */
  private themePixels(): { background: number; header: number; grid: number; palette: Uint32Array } {
    if (this.pixelColours && this.pixelColours.theme === this.theme) return this.pixelColours;
    const probe = document.createElement('canvas');
    probe.width = 1;
    probe.height = 1;
    const ctx = probe.getContext('2d', { willReadFrequently: true })!;
    const resolve = (css: string): number => {
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = '#000';
      ctx.fillStyle = css;
      ctx.fillRect(0, 0, 1, 1);
      const [r, g, b] = ctx.getImageData(0, 0, 1, 1).data;
      return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
    };
    this.pixelColours = {
      theme: this.theme,
      background: resolve(this.theme.background),
      header: resolve(this.theme.headerBackground),
      grid: resolve(this.theme.grid),
      palette: Uint32Array.from(this.theme.palette.map(resolve)),
    };
    return this.pixelColours;
  }

  private drawLabels(queue: number[]): number {
    const ctx = this.ctx;
    let drawn = 0;
    for (let q = 0; q < queue.length; q += 4) {
      const slice = queue[q];
      const x = queue[q + 1];
      const y = queue[q + 2];
      const w = queue[q + 3];
      const room = Math.floor((w - 6) / this.charWidth);
      if (room < 3) continue;
      const name = this.model.nameOf(slice);
      const text = name.length <= room ? name : `${name.slice(0, room - 1)}…`;
      ctx.fillStyle = this.theme.paletteText[this.colourOfName[this.model.columns.name[slice]]];
      ctx.fillText(text, Math.max(x, LABEL_WIDTH) + 3, y + ROW_HEIGHT / 2);
      drawn++;
    }
    return drawn;
  }

  /** Outline for the selected slice, the hovered one, and search matches on screen. */
  private drawHighlights(): void {
    const ctx = this.ctx;
    const matches = this.nameMatches;
    if (matches) {
      ctx.beginPath();
      for (const row of this.rows) {
        if (row.kind !== 'track') continue;
        for (const lane of row.lanes) {
          const y = this.laneY[lane.index] - this.scrollTop + RULER_HEIGHT;
          if (y + ROW_HEIGHT < RULER_HEIGHT || y > this.height) continue;
          const level = lane.lod.levelFor(this.nsPerPx);
          for (
            let k = firstEndingAfter(level, this.viewStart);
            k < level.length && level.start[k] <= this.viewEnd;
            k++
          ) {
            if (!matches[this.model.columns.name[level.slice[k]]]) continue;
            const x0 = this.xOf(level.start[k]);
            const w = Math.max(2, this.xOf(level.end[k]) - x0);
            ctx.rect(x0 + 0.5, y + 0.5, w - 1, ROW_HEIGHT - 2);
          }
        }
      }
      ctx.strokeStyle = this.theme.match;
      ctx.lineWidth = 2;
      ctx.stroke();
    }
    for (const [slice, colour, width] of [
      [this.hovered, this.theme.focus, 1],
      [this.selected, this.theme.selection, 2],
    ] as const) {
      if (slice < 0) continue;
      const lane = this.model.laneOfSlice[slice];
      if (lane < 0 || this.laneY[lane] < 0) continue;
      const y = this.laneY[lane] - this.scrollTop + RULER_HEIGHT;
      const x0 = this.xOf(this.model.columns.start[slice]);
      const w = Math.max(3, this.xOf(this.model.end(slice)) - x0);
      ctx.strokeStyle = colour;
      ctx.lineWidth = width;
      ctx.strokeRect(x0 - 0.5, y - 0.5, w + 1, ROW_HEIGHT);
    }
  }

  /** Anchor points of a slice for flow arrows: its start x, and its row's top and bottom y (screen). */
  private anchor(slice: number): { x: number; top: number; bottom: number } | undefined {
    const lane = this.model.laneOfSlice[slice];
    if (lane < 0 || this.laneY[lane] < 0) return undefined;
    const top = this.laneY[lane] - this.scrollTop + RULER_HEIGHT;
    return { x: this.xOf(this.model.columns.start[slice]), top, bottom: top + ROW_HEIGHT - 1 };
  }

  private arrow(from: number, to: number): boolean {
    const a = this.anchor(from);
    const b = this.anchor(to);
    if (!a || !b) return false;
    const ctx = this.ctx;
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

  /** The flows that belong to the selection: into a device slice, out of a launch, or through an op's kernels. */
  selectedFlows(): [number, number][] {
    const s = this.selected;
    if (s < 0) return [];
    const { kind, runtimeOf, opOf } = this.model.columns;
    const pairs: [number, number][] = [];
    if (isDevice(kind[s])) {
      const from = runtimeOf[s] >= 0 ? runtimeOf[s] : opOf[s];
      if (from >= 0) pairs.push([from, s]);
    } else {
      const launched = this.model.launchedBy(s);
      const isLaunch = kind[s] === KIND_RUNTIME || kind[s] === KIND_DRIVER;
      for (let k = 0; k < launched.length && pairs.length < 2000; k++) {
        const device = launched[k];
        if (isLaunch && runtimeOf[device] !== s) continue;
        const from = isLaunch ? s : runtimeOf[device] >= 0 ? runtimeOf[device] : s;
        pairs.push([from, device]);
      }
    }
    return pairs;
  }

  private drawFlows(): void {
    const ctx = this.ctx;
    const { flowFrom, flowTo, start } = this.model.columns;
    let drawn = 0;
    let hidden = 0;
    // A flow is in view when its launch or its device slice starts in view: two contiguous ranges, one in the
    // flows sorted by launch start, one in the flows sorted by device start.
    const fromLo = lowerBound(flowFrom, start, this.viewStart);
    const fromHi = lowerBound(flowFrom, start, this.viewEnd + 1e-9);
    const toLo = lowerBoundIndirect(this.flowsByTo, flowTo, start, this.viewStart);
    const toHi = lowerBoundIndirect(this.flowsByTo, flowTo, start, this.viewEnd + 1e-9);
    const candidates = fromHi - fromLo + (toHi - toLo);
    ctx.beginPath();
    if (candidates <= MAX_FLOWS_IN_VIEW * 2) {
      for (let k = fromLo; k < fromHi; k++) if (this.arrow(flowFrom[k], flowTo[k])) drawn++;
      for (let j = toLo; j < toHi; j++) {
        const k = this.flowsByTo[j];
        const launch = start[flowFrom[k]];
        if (launch >= this.viewStart && launch <= this.viewEnd) continue; // drawn above
        if (this.arrow(flowFrom[k], flowTo[k])) drawn++;
      }
    } else hidden = candidates;
    ctx.strokeStyle = this.theme.flow;
    ctx.lineWidth = 1;
    ctx.globalAlpha = 0.7;
    ctx.stroke();
    ctx.globalAlpha = 1;
    const selected = this.selectedFlows();
    if (selected.length > 0) {
      ctx.beginPath();
      for (const [from, to] of selected) if (this.arrow(from, to)) drawn++;
      ctx.strokeStyle = this.theme.flowSelected;
      ctx.lineWidth = 2;
      ctx.stroke();
    }
    this.stats.flows = drawn;
    this.stats.flowsHidden = hidden;
  }

  private drawLabelColumn(): void {
    const ctx = this.ctx;
    const theme = this.theme;
    ctx.fillStyle = theme.headerBackground;
    ctx.fillRect(0, RULER_HEIGHT, LABEL_WIDTH, this.height - RULER_HEIGHT);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, RULER_HEIGHT, this.width, this.height - RULER_HEIGHT);
    ctx.clip();
    const maxChars = Math.floor((LABEL_WIDTH - 24) / this.charWidth);
    const clip = (text: string, room = maxChars): string =>
      text.length <= room ? text : `${text.slice(0, room - 1)}…`;
    for (const row of this.rows) {
      const y = row.y - this.scrollTop + RULER_HEIGHT;
      if (y + row.height < RULER_HEIGHT || y > this.height) continue;
      if (row.kind === 'process') {
        ctx.fillStyle = theme.foreground;
        ctx.font = `bold ${theme.font}`;
        const marker = this.collapsed.has(row.process) ? '▸' : '▾';
        ctx.fillText(
          `${marker} ${clip(row.label, Math.floor((this.width - 30) / this.charWidth))}`,
          6,
          y + row.height / 2,
        );
        ctx.font = theme.font;
        ctx.fillStyle = theme.border;
        ctx.fillRect(0, y + row.height - 1, this.width, 1);
      } else {
        ctx.fillStyle = theme.foreground;
        ctx.fillText(clip(row.label), 16, y + TRACK_GAP / 2 + ROW_HEIGHT / 2);
        if (row.lanes.length > 1 || row.height > ROW_HEIGHT * 1.5) {
          ctx.fillStyle = theme.muted;
          ctx.fillText(clip(row.detail), 16, y + TRACK_GAP / 2 + ROW_HEIGHT * 1.5);
        }
        ctx.fillStyle = theme.border;
        ctx.fillRect(0, y + row.height - 1, this.width, 1);
      }
    }
    ctx.restore();
    ctx.fillStyle = theme.border;
    ctx.fillRect(LABEL_WIDTH - 1, RULER_HEIGHT, 1, this.height - RULER_HEIGHT);
  }

  private drawRuler(step: number): void {
    const ctx = this.ctx;
    const theme = this.theme;
    ctx.fillStyle = theme.headerBackground;
    ctx.fillRect(0, 0, this.width, RULER_HEIGHT);
    ctx.fillStyle = theme.border;
    ctx.fillRect(0, RULER_HEIGHT - 1, this.width, 1);
    ctx.fillStyle = theme.muted;
    const origin = this.model.header.startNs;
    ctx.fillText(`span ${formatDuration(this.viewEnd - this.viewStart)}`, 6, RULER_HEIGHT / 2);

    const first = Math.ceil((this.viewStart - origin) / step) * step + origin;
    for (let t = first; t <= this.viewEnd; t += step) {
      const x = Math.round(this.xOf(t));
      if (x < LABEL_WIDTH) continue;
      ctx.fillStyle = theme.border;
      ctx.fillRect(x, RULER_HEIGHT - 7, 1, 6);
      ctx.fillStyle = theme.foreground;
      ctx.fillText(formatTick(t - origin, step), x + 3, RULER_HEIGHT / 2 - 2);
    }
  }

  // ------------------------------------------------------------------------------------------------ hit tests

  /** The lane under a y (screen), or -1. */
  private laneAt(y: number): Lane | undefined {
    const contentY = y - RULER_HEIGHT + this.scrollTop;
    for (const row of this.rows) {
      if (row.kind !== 'track' || contentY < row.y || contentY >= row.y + row.height) continue;
      for (const lane of row.lanes) {
        const ly = this.laneY[lane.index];
        if (contentY >= ly && contentY < ly + ROW_HEIGHT) return lane;
      }
    }
    return undefined;
  }

  private processHeaderAt(y: number): string | undefined {
    const contentY = y - RULER_HEIGHT + this.scrollTop;
    for (const row of this.rows) {
      if (row.kind === 'process' && contentY >= row.y && contentY < row.y + row.height) return row.process;
    }
    return undefined;
  }

  /** The slice under a screen point, or -1; merged blocks answer with their count for the tooltip. */
  hitTest(x: number, y: number): { slice: number; merged: number } {
    if (x < LABEL_WIDTH || y < RULER_HEIGHT) return { slice: -1, merged: 0 };
    const lane = this.laneAt(y);
    if (!lane) return { slice: -1, merged: 0 };
    const t = this.nsAt(x);
    const slice = sliceAt(lane.lod.finest, t, this.nsPerPx * 2);
    if (slice >= 0) return { slice, merged: 0 };
    const level = lane.lod.levelFor(this.nsPerPx);
    const k = firstEndingAfter(level, t - this.nsPerPx);
    if (k < level.length && level.start[k] <= t + this.nsPerPx && level.count[k] > 1) {
      return { slice: level.slice[k], merged: level.count[k] };
    }
    return { slice: -1, merged: 0 };
  }

  // ------------------------------------------------------------------------------------------------ events

  private attachEvents(): void {
    const canvas = this.canvas;
    canvas.addEventListener('wheel', (event) => this.onWheel(event), { passive: false });
    canvas.addEventListener('pointerdown', (event) => {
      canvas.focus();
      if (event.button !== 0) return;
      canvas.setPointerCapture(event.pointerId);
      this.drag = {
        x: event.offsetX,
        y: event.offsetY,
        moved: false,
        viewStart: this.viewStart,
        viewEnd: this.viewEnd,
        scrollTop: this.scrollTop,
      };
    });
    canvas.addEventListener('pointermove', (event) => {
      this.pointer = { x: event.offsetX, y: event.offsetY };
      const drag = this.drag;
      if (drag) {
        const dx = event.offsetX - drag.x;
        const dy = event.offsetY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (drag.moved) {
          const dt = dx * ((drag.viewEnd - drag.viewStart) / Math.max(1, this.width - LABEL_WIDTH));
          this.setView(drag.viewStart - dt, drag.viewEnd - dt, drag.scrollTop - dy);
          this.hideTooltip();
          return;
        }
      }
      this.updateHover(event.offsetX, event.offsetY, event.clientX, event.clientY);
    });
    canvas.addEventListener('pointerup', (event) => {
      const drag = this.drag;
      this.drag = undefined;
      if (!drag || drag.moved) return;
      const process = event.offsetX < this.width && this.processHeaderAt(event.offsetY);
      if (process) {
        if (this.collapsed.has(process)) this.collapsed.delete(process);
        else this.collapsed.add(process);
        this.layout();
        this.scheduleRedraw();
        return;
      }
      const hit = this.hitTest(event.offsetX, event.offsetY);
      if (hit.merged > 0) {
        // Clicking a merged block zooms into it, as a person would next.
        this.zoom(0.25, event.offsetX);
        return;
      }
      this.select(hit.slice, false);
    });
    canvas.addEventListener('pointerleave', () => {
      this.pointer = undefined;
      this.hovered = -1;
      this.hideTooltip();
      this.scheduleRedraw();
    });
    canvas.addEventListener('keydown', (event) => this.onKeyDown(event));
    canvas.addEventListener('keyup', (event) => this.keysHeld.delete(event.key.toLowerCase()));
    canvas.addEventListener('blur', () => this.keysHeld.clear());
  }

  private onWheel(event: WheelEvent): void {
    event.preventDefault();
    const scale = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? this.height : 1;
    const dx = event.deltaX * scale;
    const dy = event.deltaY * scale;
    if (event.ctrlKey || event.metaKey) {
      // Pinch on a trackpad arrives as ctrl+wheel.
      this.zoom(Math.exp(dy * 0.01), event.offsetX);
    } else if (event.shiftKey) {
      this.panPx(dy || dx);
    } else {
      if (Math.abs(dx) > 0) this.panPx(dx);
      if (Math.abs(dy) > 0) {
        if (event.altKey) this.zoom(Math.exp(dy * 0.002), event.offsetX);
        else this.setView(this.viewStart, this.viewEnd, this.scrollTop + dy);
      }
    }
    this.hideTooltip();
  }

  private onKeyDown(event: KeyboardEvent): void {
    const key = event.key.toLowerCase();
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if ('wasd'.includes(key) && key.length === 1) {
      this.keysHeld.add(key);
      if (!this.animating) {
        this.animating = true;
        this.lastAnimation = performance.now();
        requestAnimationFrame((now) => this.animate(now));
      }
      event.preventDefault();
      return;
    }
    const model = this.model;
    const s = this.selected;
    switch (event.key) {
      case '0':
      case 'Home':
        this.fit();
        break;
      case 'f':
      case 'F':
        if (s >= 0) this.reveal(s, true);
        else this.fit();
        break;
      case 'Escape':
        this.select(-1, false);
        break;
      case 'Enter':
        if (s < 0) return;
        this.callbacks.onActivate(s);
        break;
      case 'c':
      case 'C': {
        // Collapse or expand the selected slice's process (else the first process on screen).
        const lane = s >= 0 ? this.model.lanes[this.model.laneOfSlice[s]] : undefined;
        const process = lane
          ? `${lane.track.pid}`
          : this.rows.find((r) => r.y + r.height > this.scrollTop)?.process;
        if (process === undefined) return;
        if (this.collapsed.has(process)) this.collapsed.delete(process);
        else this.collapsed.add(process);
        this.layout();
        this.scheduleRedraw();
        break;
      }
      case 'ArrowLeft':
      case 'ArrowRight': {
        if (s < 0) return;
        const lane = model.lanes[model.laneOfSlice[s]];
        if (!lane) return;
        const pos = lane.order.indexOf(s);
        const next = lane.order[pos + (event.key === 'ArrowLeft' ? -1 : 1)];
        if (next !== undefined) this.select(next);
        break;
      }
      case 'ArrowUp': {
        if (s < 0) this.setView(this.viewStart, this.viewEnd, this.scrollTop - ROW_HEIGHT * 3);
        else {
          const parent = this.parentOf(s);
          if (parent >= 0) this.select(parent);
        }
        break;
      }
      case 'ArrowDown': {
        if (s < 0) this.setView(this.viewStart, this.viewEnd, this.scrollTop + ROW_HEIGHT * 3);
        else {
          const child = this.firstChildOf(s);
          if (child >= 0) this.select(child);
        }
        break;
      }
      case 'PageUp':
        this.setView(this.viewStart, this.viewEnd, this.scrollTop - (this.height - RULER_HEIGHT) * 0.8);
        break;
      case 'PageDown':
        this.setView(this.viewStart, this.viewEnd, this.scrollTop + (this.height - RULER_HEIGHT) * 0.8);
        break;
      default:
        return;
    }
    event.preventDefault();
  }

  /** The enclosing slice one level up on the same track. */
  private parentOf(slice: number): number {
    const { depth, track, start } = this.model.columns;
    if (depth[slice] === 0) return -1;
    const lanes = this.model.lanesOfTrack.get(track[slice]);
    const lane = lanes?.[depth[slice] - 1];
    return lane ? sliceAt(lane.lod.finest, start[slice], 0) : -1;
  }

  private firstChildOf(slice: number): number {
    const { depth, track, start } = this.model.columns;
    const lane = this.model.lanesOfTrack.get(track[slice])?.[depth[slice] + 1];
    if (!lane) return -1;
    const level = lane.lod.finest;
    const end = this.model.end(slice);
    for (let k = firstEndingAfter(level, start[slice]); k < level.length && level.start[k] <= end; k++) {
      if (level.start[k] >= start[slice]) return level.slice[k];
    }
    return -1;
  }

  private animate(now: number): void {
    if (this.keysHeld.size === 0) {
      this.animating = false;
      return;
    }
    const dt = Math.min(0.05, (now - this.lastAnimation) / 1000);
    this.lastAnimation = now;
    const atX = this.pointer?.x ?? LABEL_WIDTH + (this.width - LABEL_WIDTH) / 2;
    if (this.keysHeld.has('w')) this.zoom(Math.exp(-3 * dt), atX);
    if (this.keysHeld.has('s')) this.zoom(Math.exp(3 * dt), atX);
    const panPx = (this.width - LABEL_WIDTH) * 0.8 * dt;
    if (this.keysHeld.has('a')) this.panPx(-panPx);
    if (this.keysHeld.has('d')) this.panPx(panPx);
    requestAnimationFrame((next) => this.animate(next));
  }

  private updateHover(x: number, y: number, clientX: number, clientY: number): void {
    const hit = this.hitTest(x, y);
    if (hit.slice !== this.hovered) {
      this.hovered = hit.merged > 0 ? -1 : hit.slice;
      this.scheduleRedraw();
    }
    if (hit.slice < 0) {
      this.hideTooltip();
      return;
    }
    const model = this.model;
    const tip = this.tooltip;
    tip.replaceChildren();
    const title = document.createElement('div');
    title.className = 'tooltip-title';
    const meta = document.createElement('div');
    meta.className = 'tooltip-meta';
    if (hit.merged > 0) {
      title.textContent = `${hit.merged.toLocaleString('en-US')} slices`;
      meta.textContent = `longest: ${visibleText(model.nameOf(hit.slice))} — click or press W to zoom in`;
    } else {
      title.textContent = visibleText(model.nameOf(hit.slice), Infinity);
      const parts = [model.kindOf(hit.slice), formatDuration(model.columns.dur[hit.slice])];
      const op = model.columns.opOf[hit.slice];
      if (op >= 0) parts.push(`launched by ${visibleText(model.nameOf(op))}`);
      meta.textContent = parts.join(' · ');
    }
    tip.append(title, meta);
    tip.hidden = false;
    const bounds = this.container.getBoundingClientRect();
    const left = Math.min(clientX - bounds.left + 14, bounds.width - 320);
    tip.style.left = `${Math.max(0, left)}px`;
    tip.style.top = `${Math.min(clientY - bounds.top + 16, bounds.height - 60)}px`;
  }

  private hideTooltip(): void {
    this.tooltip.hidden = true;
  }
}

/** First k with start[order[k]] >= t, order sorted by start. */
function lowerBound(order: Int32Array, start: Float64Array, t: number): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (start[order[mid]] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

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
