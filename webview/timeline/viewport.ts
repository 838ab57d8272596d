/**
 * What part of the profile is on screen: the time range across the slice area, the vertical scroll over the
 * rows, and the canvas's size, with the conversions between nanoseconds and pixels.
 */

/** Width of the track-name column left of the slices, CSS px. */
export const LABEL_WIDTH = 200;
/** Height of the time ruler above the rows, CSS px. */
export const RULER_HEIGHT = 24;

/** The narrowest view, ns: deeper zooms would only magnify rounding. */
const MIN_SPAN_NS = 10;

export class Viewport {
  viewStart: number;
  viewEnd: number;
  scrollTop = 0;
  /** The canvas in CSS px, and device pixels per CSS px. */
  width = 0;
  height = 0;
  dpr = 1;
  /** Height of all rows as laid out; the scroll stops where the last one is in view. */
  contentHeight = 0;
  /**
   * Height of the pinned rows at the top of the content: they stay under the ruler while the rest scrolls
   * beneath them.
   */
  fixedHeight = 0;

  constructor(
    private readonly startNs: number,
    private readonly endNs: number,
  ) {
    [this.viewStart, this.viewEnd] = this.whole();
  }

  /** The whole profile, with a margin of 1% each side. */
  whole(): [number, number] {
    const margin = (this.endNs - this.startNs) * 0.01;
    return [this.startNs - margin, this.endNs + margin];
  }

  get nsPerPx(): number {
    return (this.viewEnd - this.viewStart) / Math.max(1, this.width - LABEL_WIDTH);
  }

  xOf(ns: number): number {
    return LABEL_WIDTH + (ns - this.viewStart) / this.nsPerPx;
  }

  nsAt(x: number): number {
    return this.viewStart + (x - LABEL_WIDTH) * this.nsPerPx;
  }

  /** Screen y of a content y (rows are laid out from 0 at the top of the first; pinned rows do not scroll). */
  screenY(contentY: number): number {
    return contentY < this.fixedHeight ? contentY + RULER_HEIGHT : contentY - this.scrollTop + RULER_HEIGHT;
  }

  contentY(screenY: number): number {
    const y = screenY - RULER_HEIGHT;
    return y < this.fixedHeight ? y : y + this.scrollTop;
  }

  /** Whether a row at a content y is scrolled in under the pinned rows (so not drawn). */
  covered(contentY: number): boolean {
    if (this.fixedHeight <= 0 || contentY < this.fixedHeight) return false;
    return this.screenY(contentY) < RULER_HEIGHT + this.fixedHeight;
  }

  /** Height of the rows' area below the ruler. */
  get rowsHeight(): number {
    return this.height - RULER_HEIGHT;
  }

  /** The middle of the slice area: where zooms without a pointer anchor. */
  get centreX(): number {
    return LABEL_WIDTH + (this.width - LABEL_WIDTH) / 2;
  }

  /** Moves the view (kept within reach of the profile). */
  set(start: number, end: number, scrollTop: number): void {
    this.viewStart = start;
    this.viewEnd = end;
    this.scrollTop = scrollTop;
    this.clampView();
    this.clampScroll();
  }

  /** The canvas's new size, from its container's (CSS px, at least room for a few slices below the ruler). */
  resize(width: number, height: number, dpr: number): void {
    this.dpr = dpr;
    this.width = Math.max(LABEL_WIDTH + 50, Math.floor(width));
    this.height = Math.max(RULER_HEIGHT + 20, Math.floor(height));
    this.clampScroll();
  }

  clampScroll(): void {
    const max = Math.max(0, this.contentHeight - (this.height - RULER_HEIGHT));
    this.scrollTop = Math.min(Math.max(0, this.scrollTop), max);
  }

  private clampView(): void {
    const full = this.endNs - this.startNs;
    let span = this.viewEnd - this.viewStart;
    const maxSpan = Math.max(full * 4, 1000);
    if (span < MIN_SPAN_NS) span = this.centre(MIN_SPAN_NS);
    if (span > maxSpan) span = this.centre(maxSpan);
    // Keep at least part of the profile on screen.
    const lo = this.startNs - span * 0.9;
    const hi = this.endNs + span * 0.9 - span;
    if (this.viewStart < lo) {
      this.viewStart = lo;
      this.viewEnd = lo + span;
    } else if (this.viewStart > hi) {
      this.viewStart = hi;
      this.viewEnd = hi + span;
    }
  }

  /** Sets the span about the view's middle; answers it. */
  private centre(span: number): number {
    const mid = (this.viewStart + this.viewEnd) / 2;
    this.viewStart = mid - span / 2;
    this.viewEnd = mid + span / 2;
    return span;
  }
}
