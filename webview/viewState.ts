/**
 * What a timeline webview keeps in VS Code's webview state (getState / setState, kept across hides and window
 * reloads), and what of a saved state applies to the profile it shows now. Plain data, no DOM.
 */
import type { TimelineViewState } from '../extension/protocol';

/** What the page shows, to be saved. */
export interface ViewSnapshot {
  source: string;
  viewStartNs: number;
  viewEndNs: number;
  scrollTop: number;
  selected: number;
  tab: number;
  profilerFramesShown: boolean;
  pinned: number[];
  allFlows: boolean;
}

export function viewState(view: ViewSnapshot): TimelineViewState {
  const state: TimelineViewState = {
    source: view.source,
    viewStartNs: view.viewStartNs,
    viewEndNs: view.viewEndNs,
    scrollTop: view.scrollTop,
    selected: view.selected,
    tab: view.tab,
  };
  if (view.profilerFramesShown) state.profilerFrames = true;
  if (view.pinned.length > 0) state.pinned = [...view.pinned].sort((a, b) => a - b);
  if (view.allFlows) state.allFlows = true;
  return state;
}

/** What a saved state gives back: the toggles always (ways of looking), the rest only for the same profile. */
export interface RestoredView {
  profilerFramesShown: boolean;
  allFlows: boolean;
  /** Track ids pinned to the top (the caller keeps those the profile has). */
  pinned: number[];
  view?: { startNs: number; endNs: number; scrollTop: number };
  selected?: number;
  tab?: number;
}

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * The saved state as it applies to the profile from `source` with `sliceCount` slices. The state is whatever
 * the webview stored, possibly by another version of it: fields of the wrong type are ignored.
 */
export function restoredView(state: unknown, source: string, sliceCount: number): RestoredView {
  if (!state || typeof state !== 'object') return { profilerFramesShown: false, allFlows: false, pinned: [] };
  const saved = state as Partial<Record<keyof TimelineViewState, unknown>>;
  const restored: RestoredView = {
    profilerFramesShown: saved.profilerFrames === true,
    allFlows: saved.allFlows === true,
    pinned: [],
  };
  if (saved.source !== source) return restored;
  if (Array.isArray(saved.pinned)) {
    restored.pinned = saved.pinned.filter((id): id is number => Number.isInteger(id) && id >= 0);
  }
  if (isNumber(saved.viewStartNs) && isNumber(saved.viewEndNs) && saved.viewEndNs > saved.viewStartNs) {
    const scrollTop = isNumber(saved.scrollTop) ? saved.scrollTop : 0;
    restored.view = { startNs: saved.viewStartNs, endNs: saved.viewEndNs, scrollTop };
  }
  if (Number.isInteger(saved.selected) && (saved.selected as number) >= 0) {
    if ((saved.selected as number) < sliceCount) restored.selected = saved.selected as number;
  }
  if (Number.isInteger(saved.tab) && (saved.tab as number) >= 0) restored.tab = saved.tab as number;
  return restored;
}
