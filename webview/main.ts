/**
 * The timeline webview: toolbar (fit, search), the canvas timeline, the details panel, and the ops / kernels /
 * lines tables. The same bundle runs in a VS Code webview (data arrives in an `init` message) and in the
 * standalone report (data embedded in the page, gzip-compressed, decompressed with DecompressionStream).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-tabs/index.js';
import '@vscode-elements/elements/dist/vscode-tab-header/index.js';
import '@vscode-elements/elements/dist/vscode-tab-panel/index.js';
import './timeline.css';
import { visibleText } from '../extension/shared/text';
import {
  unpackAnalysis,
  unpackTimeline,
  withAnalysis,
  type HostToWebview,
  type TimelineAnalysis,
  type TimelinePayload,
  type TimelineSite,
  type TimelineViewState,
} from '../extension/protocol';
import { firstFrameAccount, linkedAccount, wholeAfterPartAccount, type Arrival } from './firstFrame';
import { renderDetails, renderRange, type DetailsActions } from './details';
import { el } from './dom';
import { formatDuration } from '../extension/shared/format';
import { connectHost, type HostBridge } from './host';
import { TimelineModel } from './model';
import { siteText } from './sourceSite';
import { statTables } from './statTables';
import { rangeTotals } from './timeline/rangeTotals';
import { TimelineView, type TimeRange } from './timeline/view';
import { AllFlowsToggle, ProfilerFramesToggle, SearchBar, toolbar } from './toolbar';
import { restoredView, viewState, type RestoredView } from './viewState';

/** Automation hook: benchmarks and browser tests drive and observe the page through it. */
export interface TimelineAutomation {
  view: TimelineView;
  model: TimelineModel;
  /** ms from the data arriving in the page to the end of the first frame. */
  firstFrameMs: number;
  /** ms from the user's action (the command, the click, opening the page) to the end of the first frame. */
  sinceOpenedMs?: number;
  /** Resolves once every level of detail is built (in idle time after the first frame). */
  levelsReady: Promise<number>;
  select(slice: number): void;
  search(text: string, regex?: boolean): number;
  /** Shows or hides the profiler's own frames, as the toolbar's toggle does. */
  showProfilerFrames(show: boolean): void;
  /** Draws every flow in view, or only the selection's, as the toolbar's toggle does. */
  showAllFlows(all: boolean): void;
}

declare global {
  interface Window {
    flagprofTimeline?: TimelineAutomation;
    flagprofTimelineError?: string;
    flagprofStatusLog?: string[];
    /** When each line of flagprofStatusLog was shown (epoch ms): what a measurement from outside reads. */
    flagprofStatusTimes?: number[];
  }
}

/** The page's parts that the timeline, the details and the tables are put into. */
interface Panes {
  timeline: HTMLElement;
  details: HTMLElement;
  tabs: HTMLElement;
}

class TimelineApp {
  private readonly root: HTMLElement;
  private readonly status: HTMLElement;
  private readonly live: HTMLElement;
  private view: TimelineView | undefined;
  private model: TimelineModel | undefined;
  /** Counts init messages, so that only the latest one is shown once inflated. */
  private inits = 0;
  /** The latest init shown (or failed): an analysis that follows it waits for this. */
  private initShown: Promise<void> = Promise.resolve();
  /** The payload of the model shown, for the analysis that completes it (header.linkingPending). */
  private payload: TimelinePayload | undefined;
  /** The status line of a profile drawn before its analysis, which the analysis's line extends. */
  private pendingStatus = '';
  /** The details panel of the profile shown. */
  private detailsPane: HTMLElement | undefined;
  private requestId = 0;
  private readonly pending = new Map<number, string>();
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private source = '';
  private tab = 0;
  private readonly flows = new AllFlowsToggle((all) => this.showAllFlows(all));
  /** When this open's first partial profile was drawn, for the whole's account (the first frame was that one). */
  private partShown: { atMs: number; sinceOpenedMs: number } | undefined;
  /** The first frame of the profile shown, from the user's action (kept when its analysis comes). */
  private firstSinceOpenedMs: number | undefined;
  /** The tables and the toolbar follow the profiler frames' toggle. */
  private profilerFramesChanged: () => void = () => {};

  constructor(private readonly host: HostBridge) {
    this.root = el('div', { className: 'app' });
    this.root.id = 'app';
    this.status = el('div', { className: 'status' });
    this.status.setAttribute('role', 'status');
    this.live = el('div', { className: 'visually-hidden' });
    this.live.setAttribute('aria-live', 'polite');
    document.body.append(this.root, this.live);
    this.showMessage('Loading profile…', '');
  }

  showMessage(title: string, message: string, error = false): void {
    const box = el('div', { className: `message${error ? ' error' : ''}` });
    box.setAttribute('role', error ? 'alert' : 'status');
    box.append(el('h1', { text: title }));
    if (message) box.append(el('p', { className: 'message-text', text: message }));
    this.root.replaceChildren(box);
    if (error) window.flagprofTimelineError = message;
  }

  handle(message: HostToWebview): void {
    switch (message.type) {
      case 'init': {
        // The editor sends the payload gzip-compressed (compressTimelineBuffer): inflated natively, the latest
        // init winning over one still being inflated.
        const init = ++this.inits;
        const arrival = { atMs: Date.now(), sentAtMs: message.sentAtMs };
        this.initShown = inflated(message.payload).then(
          (buffer) => {
            if (init === this.inits) this.load(buffer, message.select, arrival);
          },
          (error: unknown) =>
            this.showMessage('The profile could not be read', (error as Error).message, true),
        );
        break;
      }
      case 'analysis': {
        // For the init before it, inflated meanwhile; dropped when a newer init came.
        const init = this.inits;
        void Promise.all([inflated(message.payload), this.initShown]).then(
          ([buffer]) => {
            if (init === this.inits) this.linked(buffer, message.select);
          },
          (error: unknown) =>
            this.showMessage('The analysis could not be read', (error as Error).message, true),
        );
        break;
      }
      case 'progress':
        if (!this.model) this.showMessage(message.title, message.message);
        break;
      case 'error':
        this.showMessage(message.title, message.message, true);
        break;
      case 'select':
        this.showSelected(message.slice);
        break;
      case 'args':
        this.argsArrived(message.slice, message.args);
        break;
      case 'reply': {
        const what = this.pending.get(message.inReplyTo);
        this.pending.delete(message.inReplyTo);
        if (!message.ok)
          this.setStatus(`Could not open ${what ?? 'the source'}: ${message.error ?? 'unknown error'}`);
        break;
      }
    }
  }

  private setStatus(text: string): void {
    this.status.textContent = text;
    // Every status line shown, for automation (a partial profile's line is replaced within seconds).
    (window.flagprofStatusLog ??= []).push(text);
    (window.flagprofStatusTimes ??= []).push(Date.now());
  }

  /** Shows a profile: the page's parts, the timeline's first frame, then the rest of the work in idle time. */
  load(buffer: ArrayBuffer, select?: number, arrival?: Arrival): void {
    const arrived = performance.now();
    const payload = this.unpack(buffer);
    if (!payload) return;
    this.show(new TimelineModel(payload), payload, arrived, select, arrival);
  }

  /**
   * The analysis of the profile drawn before it (header.linkingPending): the profile shown again whole, where the
   * user has got to (view, selection, tab), its lanes reused; the status line says when it was linked.
   */
  private linked(buffer: ArrayBuffer, select?: number): void {
    const arrived = performance.now();
    const shown = this.model;
    const payload = this.payload;
    if (!shown || !payload || shown.header.linkingPending === undefined) return;
    let analysis: TimelineAnalysis;
    try {
      analysis = unpackAnalysis(buffer);
    } catch (error) {
      this.showMessage('The analysis could not be shown', (error as Error).message, true);
      return;
    }
    const whole = withAnalysis(payload, analysis);
    const model = new TimelineModel(whole, shown);
    this.show(model, whole, arrived, select, undefined, {
      state: this.snapshot(),
      analysisMs: analysis.header.analysisMs,
    });
  }

  private show(
    model: TimelineModel,
    payload: TimelinePayload,
    arrived: number,
    select?: number,
    arrival?: Arrival,
    linked?: { state: TimelineViewState | undefined; analysisMs?: number },
  ): void {
    // After a run's first part, the whole run starts afresh: its clock's zero and its slices are the whole run's.
    const afterPart = this.model?.header.partial !== undefined;
    this.model = model;
    this.payload = payload;
    this.source = model.header.source;
    document.title = `${visibleText(model.header.title)} — FlagOS Profiler`;
    const state = linked ? linked.state : afterPart ? undefined : this.host.getState();
    const saved = restoredView(state, this.source, model.sliceCount);
    // Before the rows are laid out: the lanes differ with the profiler's frames shown.
    model.showProfilerFrames(saved.profilerFramesShown);
    const search = new SearchBar(model, () => this.view);
    const frames = ProfilerFramesToggle.wanted(model)
      ? new ProfilerFramesToggle(model, (show) => this.showProfilerFrames(show))
      : undefined;
    const panes = this.layOut(model, search, frames);
    const view = this.showTimeline(model, panes);
    for (const id of saved.pinned) view.togglePin(id);
    this.flows.set(saved.allFlows);
    view.setAllFlows(saved.allFlows);
    const tables = statTables(model, (slice) => view.select(slice));
    for (const { name, element } of tables.tabs) addTab(panes.tabs, name, element);
    this.profilerFramesChanged = () => {
      tables.profilerFramesChanged();
      frames?.update();
    };
    this.restore(saved, select);
    view.render();
    const firstFrameMs = performance.now() - arrived;
    window.flagprofTimeline = {
      view,
      model,
      firstFrameMs,
      levelsReady: prebuildLevels(model),
      select: (slice) => view.select(slice),
      search: (text, regex = false) => search.search(text, regex),
      showProfilerFrames: (show) => this.showProfilerFrames(show),
      showAllFlows: (all) => {
        this.flows.set(all);
        this.showAllFlows(all);
      },
    };
    if (linked) {
      // The first frame was the one before the analysis: its account stays, and says when the links came.
      const openedAt = model.header.opened?.atMs;
      const since = openedAt !== undefined && Date.now() >= openedAt ? Date.now() - openedAt : undefined;
      window.flagprofTimeline.sinceOpenedMs = this.firstSinceOpenedMs;
      this.setStatus(linkedAccount(this.pendingStatus, since, linked.analysisMs));
    } else {
      this.setStatus(this.frameStatus(model, arrival, firstFrameMs));
      if (!this.host.standalone) this.host.post({ type: 'drawn' });
    }
    this.saveState();
    new MutationObserver(() => view.refreshTheme()).observe(document.body, {
      attributes: true,
      attributeFilter: ['class'],
    });
  }

  /** The status line of a profile's first frame: where the time went, and what is still to come. */
  private frameStatus(model: TimelineModel, arrival: Arrival | undefined, firstFrameMs: number): string {
    const timeline = window.flagprofTimeline!;
    const account = firstFrameAccount(model.header.opened, arrival, firstFrameMs, Date.now());
    timeline.sinceOpenedMs = account.sinceOpenedMs;
    let status = model.header.partial ? visibleText(model.header.partial) : account.text;
    const openedAt = model.header.opened?.atMs;
    const part = this.partShown;
    if (model.header.partial) {
      // The first frame of this open, unless an earlier part of it already came.
      if (openedAt !== undefined && account.sinceOpenedMs !== undefined && part?.atMs !== openedAt)
        this.partShown = { atMs: openedAt, sinceOpenedMs: account.sinceOpenedMs };
    } else {
      this.partShown = undefined;
      if (part && part.atMs === openedAt) {
        status = wholeAfterPartAccount(account.text, part.sinceOpenedMs);
        timeline.sinceOpenedMs = part.sinceOpenedMs;
      }
    }
    if (model.header.linkingPending !== undefined) {
      this.pendingStatus = status;
      status = `${status} · ${visibleText(model.header.linkingPending)}`;
    }
    this.firstSinceOpenedMs = timeline.sinceOpenedMs;
    return status;
  }

  private unpack(buffer: ArrayBuffer): TimelinePayload | undefined {
    try {
      return unpackTimeline(buffer);
    } catch (error) {
      this.showMessage('The profile could not be shown', (error as Error).message, true);
      return undefined;
    }
  }

  /** The page: toolbar, the timeline beside its details panel, the tables' tabs, the status line. */
  private layOut(model: TimelineModel, search: SearchBar, frames?: ProfilerFramesToggle): Panes {
    this.root.replaceChildren();
    const actions = {
      fit: () => this.view?.fit(),
      fitSelection: () => this.view?.fitSelection(),
      allFlows: (all: boolean) => this.showAllFlows(all),
      flows: this.flows,
    };
    const bar = toolbar(model, search, actions, frames);
    const main = el('div', { className: 'main' });
    const timeline = el('div', { className: 'timeline' });
    timeline.id = 'timeline';
    const details = el('aside', { className: 'details' });
    details.id = 'details';
    details.setAttribute('aria-label', 'Slice details');
    main.append(timeline, details);
    const tables = el('div', { className: 'tables' });
    const tabs = document.createElement('vscode-tabs');
    tabs.setAttribute('panel', '');
    tabs.addEventListener('vsc-tabs-select', (event) => {
      this.tab = (event as CustomEvent<{ selectedIndex: number }>).detail.selectedIndex;
      this.saveState();
    });
    this.root.append(bar, main, tables, this.status);
    tables.append(tabs);
    return { timeline, details, tabs };
  }

  /** The canvas timeline, its selection shown in the details panel and announced to screen readers. */
  private showTimeline(model: TimelineModel, panes: Panes): TimelineView {
    const actions = this.detailsActions();
    this.detailsPane = panes.details;
    const view = new TimelineView(panes.timeline, model, {
      onSelect: (slice) => {
        if (this.view?.range) this.view.setRange(undefined);
        renderDetails(panes.details, model, slice, actions);
        if (slice >= 0) {
          this.live.textContent = `${visibleText(model.nameOf(slice))}, ${model.kindOf(slice)}, ${formatDuration(model.columns.dur[slice])}`;
        }
        this.saveState();
      },
      onViewChange: () => this.saveState(),
      onRange: (range) => this.showRange(panes, model, range),
      onActivate: (slice) => {
        const site = model.siteOf(slice);
        if (site) this.openSource(site);
      },
    });
    this.view = view;
    renderDetails(panes.details, model, -1, actions);
    return view;
  }

  /** What the panel showed before it was hidden or reloaded (same profile only), then the host's selection. */
  private restore(saved: RestoredView, select: number | undefined): void {
    const view = this.view!;
    if (saved.view) view.setView(saved.view.startNs, saved.view.endNs, saved.view.scrollTop);
    if (saved.selected !== undefined) view.select(saved.selected, false);
    if (saved.tab !== undefined) {
      const tabs = this.root.querySelector('vscode-tabs');
      if (tabs) (tabs as HTMLElement & { selectedIndex: number }).selectedIndex = saved.tab;
    }
    if (select !== undefined) this.showSelected(select);
  }

  /** The host's selection ("Show in timeline"): selected, and fitted with what it launched on one screen. */
  private showSelected(slice: number): void {
    const view = this.view;
    if (!view || slice < 0 || slice >= view.model.sliceCount) return;
    view.select(slice, false);
    view.fitSelection();
  }

  /** A dragged-out range's totals in the details panel; cleared, the selection's details again. */
  private showRange(panes: Panes, model: TimelineModel, range: TimeRange | undefined): void {
    const actions = this.detailsActions();
    if (!range) renderDetails(panes.details, model, this.view?.selected ?? -1, actions);
    else renderRange(panes.details, model, range, rangeTotals(model, range.start, range.end));
  }

  private showAllFlows(all: boolean): void {
    this.view?.setAllFlows(all);
    this.saveState();
  }

  private showProfilerFrames(show: boolean): void {
    if (!this.view) return;
    this.view.setProfilerFrames(show);
    this.profilerFramesChanged();
    this.saveState();
  }

  private saveState(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      const state = this.snapshot();
      if (state) this.host.setState(state);
    }, 200);
  }

  /** Where the user is in the profile shown: its view, selection, tab and toggles. */
  private snapshot(): TimelineViewState | undefined {
    const view = this.view;
    if (!view) return undefined;
    return viewState({
      source: this.source,
      viewStartNs: view.viewStart,
      viewEndNs: view.viewEnd,
      scrollTop: view.scrollTop,
      selected: view.selected,
      tab: this.tab,
      profilerFramesShown: view.model.profilerFramesShown,
      pinned: view.pinned,
      allFlows: view.allFlows,
    });
  }

  /** What the details panel's links and its args request do. */
  private detailsActions(): DetailsActions {
    return {
      select: (slice: number) => this.view?.select(slice),
      openSource: (site: TimelineSite) => this.openSource(site),
      requestArgs: (slice: number) => {
        if (this.argsAsked.has(slice)) return;
        this.argsAsked.add(slice);
        this.host.post({ type: 'args', slice });
      },
    };
  }

  /** Slices whose args were asked of the host (asked once: the answer is kept in the model). */
  private readonly argsAsked = new Set<number>();

  /** The host's answer: kept, and the details panel drawn again if it still shows that slice. */
  private argsArrived(slice: number, text: string): void {
    const model = this.model;
    if (!model) return;
    model.setArgs(slice, text);
    const view = this.view;
    if (view && !view.range && view.selected === slice && this.detailsPane)
      renderDetails(this.detailsPane, model, slice, this.detailsActions());
  }

  private openSource(site: TimelineSite): void {
    const requestId = ++this.requestId;
    const where = siteText(site);
    this.pending.set(requestId, where);
    const { file, line, column } = site;
    this.host.post(
      column !== undefined
        ? { type: 'openSource', requestId, file, line, column }
        : { type: 'openSource', requestId, file, line },
    );
    if (this.host.standalone) this.setStatus(`${where} (${site.function})`);
  }
}

function addTab(tabs: HTMLElement, name: string, content: HTMLElement): void {
  const header = document.createElement('vscode-tab-header');
  header.setAttribute('slot', 'header');
  header.textContent = name;
  const panel = document.createElement('vscode-tab-panel');
  panel.append(content);
  tabs.append(header, panel);
}

/** Builds the remaining levels of detail in idle slices, so later zooms never wait for one; resolves with the ms. */
function prebuildLevels(model: TimelineModel): Promise<number> {
  return new Promise<number>((resolve) => {
    const began = performance.now();
    const work = (): void => {
      if (model.prebuildLevels(8)) setTimeout(work, 0);
      else resolve(performance.now() - began);
    };
    setTimeout(work, 0);
  });
}

/** gzip-compressed bytes inflated (DecompressionStream); a payload that is not gzip (its magic) as it is. */
async function inflated(payload: ArrayBuffer | Uint8Array): Promise<ArrayBuffer> {
  const bytes = payload instanceof Uint8Array ? payload : new Uint8Array(payload);
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b)
    return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
      ? (bytes.buffer as ArrayBuffer)
      : (bytes.slice().buffer as ArrayBuffer);
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Response(stream).arrayBuffer();
}

async function embeddedPayload(): Promise<ArrayBuffer | undefined> {
  const node = document.getElementById('flagprof-data');
  if (!node?.textContent) return undefined;
  const binary = atob(node.textContent.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return inflated(bytes);
}

function start(): void {
  const host = connectHost();
  const app = new TimelineApp(host);
  window.addEventListener('message', (event: MessageEvent<HostToWebview>) => {
    if (event.data && typeof event.data === 'object' && 'type' in event.data) app.handle(event.data);
  });
  if (host.standalone) {
    embeddedPayload().then(
      (buffer) => {
        if (buffer) app.handle({ type: 'init', payload: buffer });
        else app.showMessage('No profile in this page', 'The report holds no embedded profile data.', true);
      },
      (error: unknown) => app.showMessage('The report could not be read', (error as Error).message, true),
    );
  } else {
    host.post({ type: 'ready' });
  }
}

start();
