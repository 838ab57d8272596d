/**
 * The toolbar above the timeline: the profile's title, Fit, Fit selection, search by name (text or regex; what
 * does not match is dimmed), All flows, the profiler's own frames shown or hidden, and a summary.
 */
import { formatCount, formatDuration } from '../extension/shared/format';
import { visibleText } from '../extension/shared/text';
import { el } from './dom';
import type { TimelineModel } from './model';

/** What the search drives in the timeline. */
export interface SearchTarget {
  setSearchMatches(nameMatches: Uint8Array | undefined): void;
  select(slice: number): void;
}

/** Typing waits this long for the next keystroke before searching. */
const SEARCH_DELAY_MS = 150;

function vscodeElement<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  id: string,
  attributes: Record<string, string> = {},
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.id = id;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

/** The search box, its regex switch, previous / next and the match count. */
export class SearchBar {
  readonly elements: HTMLElement[];
  private readonly box = vscodeElement('vscode-textfield', 'search', {
    placeholder: 'Search slices by name',
    'aria-label': 'Search slices by name',
  });
  private readonly regex = vscodeElement('vscode-checkbox', 'search-regex', { label: 'Regex' });
  private readonly count = el('span', { className: 'search-count' });
  private found: { matches: Int32Array; index: number } | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Keystrokes typed that no search has run for yet. */
  private pending = false;

  constructor(
    private readonly model: TimelineModel,
    private readonly target: () => SearchTarget | undefined,
  ) {
    this.count.id = 'search-count';
    this.count.setAttribute('aria-live', 'polite');
    const previous = this.stepButton('search-previous', '‹', 'Previous match (Shift+Enter)', -1);
    const next = this.stepButton('search-next', '›', 'Next match (Enter)', 1);
    this.box.addEventListener('input', () => this.typed());
    this.box.addEventListener('keydown', (event) => this.onKeyDown(event));
    this.regex.addEventListener('change', () => this.run());
    this.elements = [this.box, this.regex, previous, next, this.count];
  }

  /** Searches for `text` as if typed (automation); answers the number of matches. */
  search(text: string, regex: boolean): number {
    this.box.value = text;
    this.regex.checked = regex;
    this.run();
    return this.found?.matches.length ?? 0;
  }

  private stepButton(id: string, label: string, title: string, delta: number): HTMLElement {
    const button = vscodeElement('vscode-button', id, { secondary: '' });
    button.textContent = label;
    button.title = title;
    button.addEventListener('click', () => this.step(delta));
    return button;
  }

  private typed(): void {
    clearTimeout(this.timer);
    this.pending = true;
    this.timer = setTimeout(() => {
      this.pending = false;
      this.run();
    }, SEARCH_DELAY_MS);
  }

  private onKeyDown(event: KeyboardEvent): void {
    if (event.key !== 'Enter') return;
    clearTimeout(this.timer);
    const stale = this.pending;
    this.pending = false;
    // A search still pending for the latest keystrokes must run first, or Enter would step through stale matches.
    if (!this.found || this.found.matches.length === 0 || stale) this.run();
    this.step(event.shiftKey ? -1 : 1);
    event.preventDefault();
  }

  private run(): void {
    const text = this.box.value;
    if (!text) {
      this.clear('');
      return;
    }
    const result = this.model.search(text, this.regex.checked);
    if ('error' in result) {
      this.clear(`invalid regex: ${result.error}`);
      return;
    }
    this.found = { matches: result.matches, index: -1 };
    this.target()?.setSearchMatches(result.nameMatches);
    this.count.textContent = `${formatCount(result.matches.length)} matches`;
  }

  /** No matches to step through or outline; `count` says why. */
  private clear(count: string): void {
    this.found = undefined;
    this.target()?.setSearchMatches(undefined);
    this.count.textContent = count;
  }

  private step(delta: number): void {
    if (!this.found) this.run();
    const found = this.found;
    if (!found || found.matches.length === 0) return;
    found.index = (found.index + delta + found.matches.length) % found.matches.length;
    this.target()?.select(found.matches[found.index]);
    this.count.textContent = `${formatCount(found.index + 1)} of ${formatCount(found.matches.length)}`;
  }
}

/** "Show profiler frames", and how many are hidden; only for a profile that has some. */
export class ProfilerFramesToggle {
  readonly elements: HTMLElement[];
  private readonly box = vscodeElement('vscode-checkbox', 'profiler-frames', {
    label: 'Show profiler frames',
  });
  private readonly count = el('span', { className: 'profiler-frames-count' });

  constructor(
    private readonly model: TimelineModel,
    onChange: (show: boolean) => void,
  ) {
    this.count.id = 'profiler-frames-count';
    this.count.setAttribute('aria-live', 'polite');
    this.box.title =
      "The profiler's own Python frames (the capture agent, runpy, torch.profiler) and Kineto's marker rows: hidden, what the frames enclose drawn a level up for each";
    this.box.addEventListener('change', () => onChange(this.box.checked));
    this.elements = [this.box, this.count];
    this.update();
  }

  /** Whether the profile has anything of the profiler's to hide. */
  static wanted(model: TimelineModel): boolean {
    return (
      model.profilerFrameCount > 0 || model.header.profilerLines.length > 0 || model.profilerTracks.size > 0
    );
  }

  /**
   * Shows what the model shows now: how many frames (or, in a profile without any, lines in its files, or else
   * tracks of nothing but Kineto's markers).
   */
  update(): void {
    const frames = this.model.profilerFrameCount;
    const lines = this.model.header.profilerLines.length;
    const n = frames > 0 ? frames : lines > 0 ? lines : this.model.profilerTracks.size;
    const what = frames > 0 ? 'frame' : lines > 0 ? 'line' : 'track';
    const shown = this.model.profilerFramesShown;
    this.box.checked = shown;
    this.count.textContent = `${formatCount(n)} profiler ${what}${n === 1 ? '' : 's'} ${shown ? 'shown' : 'hidden'}`;
  }
}

/** What the toolbar's buttons and switches drive. */
export interface ToolbarActions {
  fit(): void;
  fitSelection(): void;
  allFlows(all: boolean): void;
}

/** "All flows": every launch -> device arrow in view, not only the selection's. */
export class AllFlowsToggle {
  readonly element = vscodeElement('vscode-checkbox', 'all-flows', { label: 'All flows' });

  constructor(onChange: (all: boolean) => void) {
    this.element.title = 'Draw every launch → device arrow in view, not only those of the selection';
    this.element.addEventListener('change', () => onChange(this.element.checked));
  }

  set(all: boolean): void {
    this.element.checked = all;
  }
}

/**
 * The toolbar: title (the source on hover), Fit, Fit selection, the search bar, All flows, and the profile's size
 * and warnings.
 */
export function toolbar(
  model: TimelineModel,
  search: SearchBar,
  actions: ToolbarActions & { flows: AllFlowsToggle },
  profilerFrames?: ProfilerFramesToggle,
): HTMLElement {
  const { header } = model;
  const bar = el('div', { className: 'toolbar' });
  bar.setAttribute('role', 'toolbar');
  bar.setAttribute('aria-label', 'Timeline');
  const title = el('span', { className: 'title', text: visibleText(header.title, Infinity) });
  title.title = visibleText(header.source, Infinity);
  const fitButton = vscodeElement('vscode-button', 'fit', { secondary: '' });
  fitButton.textContent = 'Fit';
  fitButton.title = 'Show the whole profile (0)';
  fitButton.addEventListener('click', () => actions.fit());
  const fitSelection = vscodeElement('vscode-button', 'fit-selection', { secondary: '' });
  fitSelection.textContent = 'Fit selection';
  fitSelection.title = 'Show the selection and every device slice it launched on one screen (F)';
  fitSelection.addEventListener('click', () => actions.fitSelection());
  const span = formatDuration(header.endNs - header.startNs);
  const summary = el('span', {
    className: 'summary',
    text: `${formatCount(model.sliceCount)} slices · ${formatCount(header.tracks.length)} tracks · ${span}`,
  });
  if (header.warnings.length > 0) {
    summary.textContent += ` · ${header.warnings.length} import warnings`;
    summary.title = header.warnings.slice(0, 20).join('\n');
  }
  bar.append(
    title,
    fitButton,
    fitSelection,
    ...search.elements,
    actions.flows.element,
    ...(profilerFrames?.elements ?? []),
    summary,
  );
  return bar;
}
