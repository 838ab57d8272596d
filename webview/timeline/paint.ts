/**
 * The slices: per visible lane, the level of detail whose resolution matches the current ns per pixel, from the
 * first block in view to the right edge, so a frame costs pixels, not events. Blocks are painted in JavaScript
 * into one pixel buffer and put on the canvas in one call; the names of blocks wide enough go on top.
 */
import { firstEndingAfter, type LodLevel } from '../lod';
import type { TimelineModel } from '../model';
import { colourIndex, themePixels } from '../theme';
import { clipText, type Frame } from './frame';
import { PROCESS_HEIGHT, ROW_HEIGHT } from './layout';
import { LABEL_WIDTH, RULER_HEIGHT } from './viewport';

/** Set in a block's palette index when a search is on and its name does not match: drawn dimmed. */
const DIMMED = 0x80;
/** How much of the background a dimmed block's colour is. */
const DIM_MIX = 0.75;

/** Narrowest block that gets its name written in it, CSS px. */
const MIN_LABEL_PX = 28;

function grow<T extends Float32Array | Uint8Array>(a: T): T {
  const next = new (a.constructor as new (n: number) => T)(a.length * 2);
  next.set(a);
  return next;
}

let dimmedPalette: { palette: Uint32Array; background: number; all: Uint32Array } | undefined;

/** The palette, then at DIMMED onwards each colour mixed with the background (little-endian ABGR words). */
function withDimmed(palette: Uint32Array, background: number): Uint32Array {
  if (dimmedPalette?.palette === palette && dimmedPalette.background === background) return dimmedPalette.all;
  const all = new Uint32Array(DIMMED * 2);
  all.set(palette.subarray(0, DIMMED));
  const mix = (c: number, shift: number): number =>
    Math.round(((c >>> shift) & 255) * (1 - DIM_MIX) + ((background >>> shift) & 255) * DIM_MIX);
  for (let i = 0; i < palette.length && i < DIMMED; i++) {
    const c = palette[i];
    all[DIMMED + i] = ((255 << 24) | (mix(c, 16) << 16) | (mix(c, 8) << 8) | mix(c, 0)) >>> 0;
  }
  dimmedPalette = { palette, background, all };
  return all;
}

export class SlicePainter {
  /** Per string id: its palette index, so one name keeps its colour everywhere. */
  readonly colourOfName: Uint8Array;
  // Reused per frame: rectangles (CSS px) with their palette index, process header bands, labels to write.
  private rectX = new Float32Array(4096);
  private rectY = new Float32Array(4096);
  private rectW = new Float32Array(4096);
  private rectC = new Uint8Array(4096);
  private rectCount = 0;
  private bands: number[] = [];
  private bandCount = 0;
  /** Per label: slice, x, y, width. */
  private labelQueue: number[] = [];
  private image: ImageData | undefined;
  private pixels: Uint32Array | undefined;

  constructor(
    private readonly model: TimelineModel,
    paletteSize: number,
  ) {
    this.colourOfName = new Uint8Array(model.strings.length);
    for (let s = 0; s < model.strings.length; s++) {
      this.colourOfName[s] = colourIndex(model.strings[s], paletteSize);
    }
  }

  /** The blocks of the frame's visible lanes (every slice when `levelOfDetail` is off); answers their count. */
  collect(frame: Frame, levelOfDetail: boolean): number {
    const { viewport, layout } = frame;
    const top = RULER_HEIGHT;
    const bottom = viewport.height;
    this.rectCount = 0;
    this.bandCount = 0;
    this.labelQueue = [];
    for (const row of layout.rows) {
      const y = viewport.screenY(row.y);
      if (y + row.height < top || y > bottom) continue;
      if (row.kind === 'process') {
        if (!viewport.covered(row.y)) this.bands[this.bandCount++] = y;
        continue;
      }
      for (const lane of row.lanes) {
        const ly = viewport.screenY(layout.laneY[lane.index]);
        if (ly + ROW_HEIGHT < top || ly > bottom || viewport.covered(layout.laneY[lane.index])) continue;
        const level = levelOfDetail ? lane.lod.levelFor(viewport.nsPerPx) : lane.lod.finest;
        this.collectLane(frame, level, Math.round(ly));
      }
    }
    return this.rectCount;
  }

  private collectLane(frame: Frame, level: LodLevel, y: number): void {
    const { viewStart, viewEnd, nsPerPx, width: right } = frame.viewport;
    const name = this.model.columns.name;
    const colourOfName = this.colourOfName;
    const matches = frame.nameMatches;
    const labelQueue = this.labelQueue;
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
      const dimmed = matches !== undefined && !matches[name[sl]];
      this.pushRect(x0, y, x1 - x0, colourOfName[name[sl]] | (dimmed ? DIMMED : 0));
      if (count[k] === 1 && x1 - x0 >= MIN_LABEL_PX) labelQueue.push(sl, x0, y, x1 - x0);
    }
  }

  private pushRect(x: number, y: number, w: number, colour: number): void {
    if (this.rectCount === this.rectX.length) {
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

  /**
   * Paints the slice area: background, process header bands, grid lines, the collected blocks. The cost is
   * bounded by the area's pixels (the rows of one lane never overlap), however many blocks a dense view holds,
   * where a canvas fillRect per block costs tens of ms for tens of thousands of blocks in a software rasteriser.
   */
  paint(frame: Frame): void {
    const dpr = frame.viewport.dpr;
    const left = Math.round(LABEL_WIDTH * dpr);
    const top = Math.round(RULER_HEIGHT * dpr);
    const w = Math.max(1, frame.canvas.width - left);
    const h = Math.max(1, frame.canvas.height - top);
    if (!this.image || this.image.width !== w || this.image.height !== h) {
      this.image = frame.ctx.createImageData(w, h);
      this.pixels = new Uint32Array(this.image.data.buffer);
    }
    const pixels = this.pixels!;
    const colours = themePixels(frame.theme);
    pixels.fill(colours.background);
    this.fillBands(pixels, w, h, dpr, colours.header);
    this.fillGrid(frame, pixels, w, h, colours.grid);
    this.fillBlocks(pixels, w, h, dpr, withDimmed(colours.palette, colours.background));
    frame.ctx.putImageData(this.image, left, top);
    if (frame.theme.contrastBorder) this.strokeBorders(frame.ctx, frame.theme.contrastBorder);
  }

  private fillBands(pixels: Uint32Array, w: number, h: number, dpr: number, colour: number): void {
    const top = Math.round(RULER_HEIGHT * dpr);
    const bandHeight = Math.round(PROCESS_HEIGHT * dpr);
    for (let b = 0; b < this.bandCount; b++) {
      const y0 = Math.max(0, Math.round(this.bands[b] * dpr) - top);
      const y1 = Math.min(h, Math.round(this.bands[b] * dpr) - top + bandHeight);
      if (y1 > y0) pixels.fill(colour, y0 * w, y1 * w);
    }
  }

  /** Grid lines at the ruler's ticks. */
  private fillGrid(frame: Frame, pixels: Uint32Array, w: number, h: number, colour: number): void {
    const { viewport, ruler } = frame;
    const dpr = viewport.dpr;
    const left = Math.round(LABEL_WIDTH * dpr);
    const origin = frame.model.header.startNs;
    const lineWidth = Math.max(1, Math.round(dpr));
    for (const tick of ruler.ticks) {
      const x = Math.round(viewport.xOf(tick.ns + origin) * dpr) - left;
      if (x < 0 || x + lineWidth > w) continue;
      for (let y = 0; y < h; y++) pixels.fill(colour, y * w + x, y * w + x + lineWidth);
    }
  }

  private fillBlocks(pixels: Uint32Array, w: number, h: number, dpr: number, palette: Uint32Array): void {
    const left = Math.round(LABEL_WIDTH * dpr);
    const top = Math.round(RULER_HEIGHT * dpr);
    const rowHeight = ROW_HEIGHT - 1;
    for (let i = 0; i < this.rectCount; i++) {
      const x0 = Math.max(0, Math.round(this.rectX[i] * dpr) - left);
      const x1 = Math.min(w, Math.round((this.rectX[i] + this.rectW[i]) * dpr) - left);
      const y0 = Math.max(0, Math.round(this.rectY[i] * dpr) - top);
      const y1 = Math.min(h, Math.round((this.rectY[i] + rowHeight) * dpr) - top);
      if (x1 <= x0 || y1 <= y0) continue;
      const c = this.rectC[i];
      const colour = c & DIMMED ? palette[(c & ~DIMMED) + DIMMED] : palette[c];
      for (let y = y0; y < y1; y++) pixels.fill(colour, y * w + x0, y * w + x1);
    }
  }

  /** High contrast themes outline every block at least 3 px wide. */
  private strokeBorders(ctx: CanvasRenderingContext2D, border: string): void {
    const rowHeight = ROW_HEIGHT - 1;
    ctx.strokeStyle = border;
    ctx.lineWidth = 1;
    for (let i = 0; i < this.rectCount; i++) {
      if (this.rectW[i] >= 3)
        ctx.strokeRect(this.rectX[i] + 0.5, this.rectY[i] + 0.5, this.rectW[i] - 1, rowHeight - 1);
    }
  }

  /** Writes the names of the collected blocks that have room for three characters; answers how many. */
  drawLabels(frame: Frame): number {
    const { ctx, theme, charWidth } = frame;
    const queue = this.labelQueue;
    let drawn = 0;
    for (let q = 0; q < queue.length; q += 4) {
      const slice = queue[q];
      const x = queue[q + 1];
      const y = queue[q + 2];
      const w = queue[q + 3];
      const room = Math.floor((w - 6) / charWidth);
      if (room < 3) continue;
      const dimmed = frame.nameMatches !== undefined && !frame.nameMatches[this.model.columns.name[slice]];
      ctx.fillStyle = dimmed
        ? theme.muted
        : theme.paletteText[this.colourOfName[this.model.columns.name[slice]]];
      ctx.fillText(
        clipText(this.model.nameOf(slice), room),
        Math.max(x, LABEL_WIDTH) + 3,
        y + ROW_HEIGHT / 2,
      );
      drawn++;
    }
    return drawn;
  }
}
