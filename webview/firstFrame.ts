/** The timeline's first frame, counted from the user's action: the status line's account of where the time went. */
import type { TimelineOpened } from '../extension/protocol';

/** When the payload reached the page, and when the host posted it (both epoch ms, each on its own clock). */
export interface Arrival {
  atMs: number;
  sentAtMs?: number;
}

const seconds = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);

/**
 * The first frame counted from the user's action, with where the time went: the host's reading and analysis, its
 * payload and the webview's start-up, the transfer, the drawing. The host's clock and the page's are the same
 * machine's in a local or code-server window; where they disagree (a remote host whose clock is off), the transfer
 * is left out rather than made up. A standalone report counts from the page's own opening (its navigation start).
 */
export function firstFrameAccount(
  opened: TimelineOpened | undefined,
  arrival: Arrival | undefined,
  drawMs: number,
  nowMs: number,
  pageOpenedMs = performance.now(),
): { text: string; sinceOpenedMs: number | undefined } {
  if (!opened || !arrival) {
    // A report's page: performance.now() counts from its navigation start.
    const sinceOpenedMs = arrival ? undefined : pageOpenedMs;
    return {
      text:
        sinceOpenedMs === undefined
          ? `First frame in ${drawMs.toFixed(0)} ms`
          : `First frame in ${seconds(sinceOpenedMs)} from opening the page (drawing ${seconds(drawMs)})`,
      sinceOpenedMs,
    };
  }
  const host = (opened.readMs ?? 0) + (opened.analysisMs ?? 0);
  // In the page: inflating the payload, building the rows, drawing.
  const pageMs = Math.max(drawMs, nowMs - arrival.atMs);
  const sent = arrival.sentAtMs;
  const clocksAgree = sent !== undefined && sent >= opened.atMs && arrival.atMs >= sent - 5;
  const steps: string[] = [];
  if (opened.readMs !== undefined)
    steps.push(
      opened.parseMs === undefined
        ? `read ${seconds(opened.readMs)}`
        : `read ${seconds(opened.readMs)}, ${seconds(opened.parseMs)} of it native parsing`,
    );
  if (opened.analysisMs !== undefined) steps.push(`analysis ${seconds(opened.analysisMs)}`);
  let sinceOpenedMs: number;
  if (clocksAgree) {
    steps.push(`payload and page ${seconds(Math.max(0, sent - opened.atMs - host))}`);
    steps.push(`transfer ${seconds(Math.max(0, arrival.atMs - sent))}`);
    sinceOpenedMs = nowMs - opened.atMs;
  } else {
    sinceOpenedMs = host + pageMs;
  }
  steps.push(`drawing ${seconds(pageMs)}`);
  const at = clocksAgree ? '' : 'at least ';
  return {
    text: `First frame in ${at}${seconds(sinceOpenedMs)} from opening (${steps.join(' · ')})`,
    sinceOpenedMs,
  };
}

/**
 * The account of a whole profile that replaced a partial one of the same open (a run's first part, the events read
 * so far): the first frame was the partial's, so the line says when the whole came and when the first frame did.
 */
export function wholeAfterPartAccount(wholeText: string, firstSinceOpenedMs: number): string {
  return `${wholeText.replace(/^First frame in /, 'Whole trace in ')} · first frame at ${seconds(firstSinceOpenedMs)}`;
}

/**
 * The account of a profile drawn before its analysis, once the analysis came: the first frame's line, then when
 * the links were in place, counted from the same action.
 */
export function linkedAccount(
  firstText: string,
  sinceOpenedMs: number | undefined,
  analysisMs?: number,
): string {
  const analysis = analysisMs !== undefined ? ` (analysis ${seconds(analysisMs)})` : '';
  return sinceOpenedMs !== undefined
    ? `${firstText} · linked at ${seconds(sinceOpenedMs)}${analysis}`
    : `${firstText} · linked${analysis}`;
}
