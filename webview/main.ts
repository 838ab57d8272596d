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
import type { KernelStat, LineStat, OpStat } from '../extension/analysis/types';
import { visibleLines, visibleText } from '../extension/shared/text';
import {
  unpackTimeline,
  type HostToWebview,
  type TimelineSite,
  type TimelineViewState,
} from '../extension/protocol';
import { renderDetails } from './details';
import { formatCount, formatDuration } from '../extension/shared/format';
import { connectHost, type HostBridge } from './host';
import { isDevice, KIND_CPU_OP, KIND_USER_ANNOTATION, TimelineModel } from './model';
import { VirtualTable } from './tables';
import { TimelineView } from './timeline';

interface SearchState {
  matches: Int32Array;
  index: number;
}

/** Automation hook: benchmarks and browser tests drive and observe the page through it. */
export interface TimelineAutomation {
  view: TimelineView;
  model: TimelineModel;
  /** ms from the data arriving in the page to the end of the first frame. */
  firstFrameMs: number;
  /** Resolves once every level of detail is built (in idle time after the first frame). */
  levelsReady: Promise<number>;
  select(slice: number): void;
  search(text: string, regex?: boolean): number;
}

declare global {
  interface Window {
    flagprofTimeline?: TimelineAutomation;
    flagprofTimelineError?: string;
  }
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  // DOM text only; a name from the trace shows its invisible characters (messages keep their lines).
  if (text !== undefined) node.textContent = visibleLines(text);
  return node;
}

class TimelineApp {
  private readonly root: HTMLElement;
  private readonly status: HTMLElement;
  private readonly live: HTMLElement;
  private view: TimelineView | undefined;
  private model: TimelineModel | undefined;
  private search: SearchState | undefined;
  private requestId = 0;
  private readonly pending = new Map<number, string>();
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private source = '';
  private tab = 0;

  constructor(private readonly host: HostBridge) {
    this.root = el('div', 'app');
    this.root.id = 'app';
    this.status = el('div', 'status');
    this.status.setAttribute('role', 'status');
    this.live = el('div', 'visually-hidden');
    this.live.setAttribute('aria-live', 'polite');
    document.body.append(this.root, this.live);
    this.showMessage('Loading profile…', '');
  }

  showMessage(title: string, message: string, error = false): void {
    const box = el('div', `message${error ? ' error' : ''}`);
    box.setAttribute('role', error ? 'alert' : 'status');
    box.append(el('h1', undefined, title));
    if (message) box.append(el('p', 'message-text', message));
    this.root.replaceChildren(box);
    if (error) window.flagprofTimelineError = message;
  }

  handle(message: HostToWebview): void {
    switch (message.type) {
      case 'init':
        this.load(message.payload, message.select);
        break;
      case 'progress':
        if (!this.model) this.showMessage(message.title, message.message);
        break;
      case 'error':
        this.showMessage(message.title, message.message, true);
        break;
      case 'select':
        this.view?.select(message.slice);
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
  }

  load(buffer: ArrayBuffer, select?: number): void {
    const arrived = performance.now();
    let model: TimelineModel;
    try {
      model = new TimelineModel(unpackTimeline(buffer));
    } catch (error) {
      this.showMessage('The profile could not be shown', (error as Error).message, true);
      return;
    }
    this.model = model;
    this.source = model.header.source;
    document.title = `${visibleText(model.header.title)} — FlagOS Profiler`;
    this.root.replaceChildren();

    const toolbar = el('div', 'toolbar');
    toolbar.setAttribute('role', 'toolbar');
    toolbar.setAttribute('aria-label', 'Timeline');
    const title = el('span', 'title', visibleText(model.header.title, Infinity));
    title.title = visibleText(model.header.source, Infinity);
    const fit = document.createElement('vscode-button');
    fit.textContent = 'Fit';
    fit.id = 'fit';
    fit.setAttribute('secondary', '');
    fit.title = 'Show the whole profile (0)';
    fit.addEventListener('click', () => this.view?.fit());
    const searchBox = document.createElement('vscode-textfield');
    searchBox.id = 'search';
    searchBox.setAttribute('placeholder', 'Search slices by name');
    searchBox.setAttribute('aria-label', 'Search slices by name');
    const regex = document.createElement('vscode-checkbox');
    regex.id = 'search-regex';
    regex.setAttribute('label', 'Regex');
    const previous = document.createElement('vscode-button');
    previous.id = 'search-previous';
    previous.textContent = '‹';
    previous.title = 'Previous match (Shift+Enter)';
    previous.setAttribute('secondary', '');
    const next = document.createElement('vscode-button');
    next.id = 'search-next';
    next.textContent = '›';
    next.title = 'Next match (Enter)';
    next.setAttribute('secondary', '');
    const count = el('span', 'search-count');
    count.id = 'search-count';
    count.setAttribute('aria-live', 'polite');
    const runSearch = (): void => {
      const text = searchBox.value;
      if (!text) {
        this.search = undefined;
        this.view?.setSearchMatches(undefined);
        count.textContent = '';
        return;
      }
      const result = model.search(text, regex.checked);
      if ('error' in result) {
        count.textContent = `invalid regex: ${result.error}`;
        this.search = undefined;
        this.view?.setSearchMatches(undefined);
        return;
      }
      this.search = { matches: result.matches, index: -1 };
      this.view?.setSearchMatches(result.nameMatches);
      count.textContent = `${formatCount(result.matches.length)} matches`;
    };
    const step = (delta: number): void => {
      if (!this.search) runSearch();
      const s = this.search;
      if (!s || s.matches.length === 0) return;
      s.index = (s.index + delta + s.matches.length) % s.matches.length;
      this.view?.select(s.matches[s.index]);
      count.textContent = `${formatCount(s.index + 1)} of ${formatCount(s.matches.length)}`;
    };
    let searchTimer: ReturnType<typeof setTimeout> | undefined;
    let pending = false;
    searchBox.addEventListener('input', () => {
      clearTimeout(searchTimer);
      pending = true;
      searchTimer = setTimeout(() => {
        pending = false;
        runSearch();
      }, 150);
    });
    searchBox.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter') return;
      clearTimeout(searchTimer);
      const stale = pending;
      pending = false;
      // A search still pending for the latest keystrokes must run first, or Enter would step through stale matches.
      if (!this.search || this.search.matches.length === 0 || stale) runSearch();
      step(event.shiftKey ? -1 : 1);
      event.preventDefault();
    });
    regex.addEventListener('change', runSearch);
    previous.addEventListener('click', () => step(-1));
    next.addEventListener('click', () => step(1));
    const summary = el(
      'span',
      'summary',
      `${formatCount(model.sliceCount)} slices · ${formatCount(model.header.tracks.length)} tracks · ${formatDuration(model.header.endNs - model.header.startNs)}`,
    );
    if (model.header.warnings.length > 0) {
      summary.textContent += ` · ${model.header.warnings.length} import warnings`;
      summary.title = model.header.warnings.slice(0, 20).join('\n');
    }
    toolbar.append(title, fit, searchBox, regex, previous, next, count, summary);

    const main = el('div', 'main');
    const timelineHost = el('div', 'timeline');
    timelineHost.id = 'timeline';
    const details = el('aside', 'details');
    details.id = 'details';
    details.setAttribute('aria-label', 'Slice details');
    main.append(timelineHost, details);

    const tables = el('div', 'tables');
    const tabs = document.createElement('vscode-tabs');
    tabs.setAttribute('panel', '');
    const addTab = (name: string, table: { element: HTMLElement }): void => {
      const header = document.createElement('vscode-tab-header');
      header.setAttribute('slot', 'header');
      header.textContent = name;
      const panel = document.createElement('vscode-tab-panel');
      panel.append(table.element);
      tabs.append(header, panel);
    };
    tabs.addEventListener('vsc-tabs-select', (event) => {
      this.tab = (event as CustomEvent<{ selectedIndex: number }>).detail.selectedIndex;
      this.saveState();
    });
    this.root.append(toolbar, main, tables, this.status);
    tables.append(tabs);

    const actions = {
      select: (slice: number) => this.view?.select(slice),
      openSource: (site: TimelineSite) => this.openSource(site),
    };
    const view = new TimelineView(timelineHost, model, {
      onSelect: (slice) => {
        renderDetails(details, model, slice, actions);
        if (slice >= 0) {
          this.live.textContent = `${visibleText(model.nameOf(slice))}, ${model.kindOf(slice)}, ${formatDuration(model.columns.dur[slice])}`;
        }
        this.saveState();
      },
      onViewChange: () => this.saveState(),
      onActivate: (slice) => {
        const site = model.siteOf(slice);
        if (site) this.openSource(site);
      },
    });
    this.view = view;
    renderDetails(details, model, -1, actions);

    const selectByName = (name: string, accept: (slice: number) => boolean): void => {
      const id = model.strings.indexOf(name);
      if (id < 0) return;
      const names = model.columns.name;
      const slice = model.longest((i) => names[i] === id && accept(i));
      if (slice >= 0) view.select(slice);
    };
    const kinds = model.columns.kind;
    addTab(
      'Ops',
      new VirtualTable<OpStat>(
        'Ops',
        [
          { title: 'Op', value: (r) => r.name },
          { title: 'Calls', value: (r) => r.calls, format: (r) => formatCount(r.calls), numeric: true },
          {
            title: 'Device self',
            value: (r) => r.deviceSelfNs,
            format: (r) => formatDuration(r.deviceSelfNs),
            numeric: true,
          },
          {
            title: 'Device total',
            value: (r) => r.deviceTotalNs,
            format: (r) => formatDuration(r.deviceTotalNs),
            numeric: true,
          },
          {
            title: 'CPU self',
            value: (r) => r.cpuSelfNs,
            format: (r) => formatDuration(r.cpuSelfNs),
            numeric: true,
          },
          {
            title: 'CPU total',
            value: (r) => r.cpuTotalNs,
            format: (r) => formatDuration(r.cpuTotalNs),
            numeric: true,
          },
        ],
        model.header.tables.ops,
        (row) => selectByName(row.name, (i) => kinds[i] === KIND_CPU_OP || kinds[i] === KIND_USER_ANNOTATION),
      ),
    );
    addTab(
      'Kernels',
      new VirtualTable<KernelStat>(
        'Kernels',
        [
          { title: 'Kernel', value: (r) => r.name },
          { title: 'Kind', value: (r) => r.kind },
          { title: 'Count', value: (r) => r.count, format: (r) => formatCount(r.count), numeric: true },
          {
            title: 'Total',
            value: (r) => r.totalNs,
            format: (r) => formatDuration(r.totalNs),
            numeric: true,
          },
          {
            title: 'Average',
            value: (r) => r.totalNs / Math.max(1, r.count),
            format: (r) => formatDuration(r.totalNs / Math.max(1, r.count)),
            numeric: true,
          },
          { title: 'Top op', value: (r) => r.topOp },
        ],
        model.header.tables.kernels,
        (row) => selectByName(row.name, (i) => isDevice(kinds[i])),
      ),
    );
    const lineIndex = new Map(model.header.tables.lines.map((line, index) => [line, index]));
    addTab(
      'Lines',
      new VirtualTable<LineStat>(
        'Lines',
        [
          {
            title: 'Source',
            value: (r) => `${r.file}:${String(r.line).padStart(7, '0')}`,
            format: (r) => `${r.file.split(/[\\/]/).pop()}:${r.line}`,
          },
          { title: 'Function', value: (r) => r.function },
          {
            title: 'Device',
            value: (r) => r.deviceNs,
            format: (r) => formatDuration(r.deviceNs),
            numeric: true,
          },
          { title: 'CPU', value: (r) => r.cpuNs, format: (r) => formatDuration(r.cpuNs), numeric: true },
          { title: 'Ops', value: (r) => r.ops, format: (r) => formatCount(r.ops), numeric: true },
          { title: 'Site', value: (r) => (r.exact ? 'call site' : 'function') },
        ],
        model.header.tables.lines,
        (row) => {
          const index = lineIndex.get(row) ?? -1;
          const site = model.columns.site;
          const slice = model.longest((i) => site[i] === index && !isDevice(kinds[i]));
          if (slice >= 0) view.select(slice);
        },
      ),
    );

    const state = this.host.getState();
    if (state && state.source === this.source) this.restore(state);
    if (select !== undefined && select >= 0 && select < model.sliceCount) view.select(select);
    view.render();
    const firstFrameMs = performance.now() - arrived;
    // The remaining levels of detail are built in idle slices, so later zooms never wait for one.
    const levelsReady = new Promise<number>((resolve) => {
      const began = performance.now();
      const work = (): void => {
        if (model.prebuildLevels(8)) setTimeout(work, 0);
        else resolve(performance.now() - began);
      };
      setTimeout(work, 0);
    });
    window.flagprofTimeline = {
      view,
      model,
      firstFrameMs,
      levelsReady,
      select: (slice) => view.select(slice),
      search: (text, useRegex = false) => {
        searchBox.value = text;
        regex.checked = useRegex;
        runSearch();
        return this.search?.matches.length ?? 0;
      },
    };
    this.setStatus(`First frame in ${firstFrameMs.toFixed(0)} ms`);
    this.saveState();
    new MutationObserver(() => view.refreshTheme()).observe(document.body, {
      attributes: true,
      attributeFilter: ['class'],
    });
  }

  private restore(state: TimelineViewState): void {
    const view = this.view!;
    if (state.viewStartNs !== undefined && state.viewEndNs !== undefined) {
      view.setView(state.viewStartNs, state.viewEndNs, state.scrollTop ?? 0);
    }
    if (state.selected !== undefined && state.selected >= 0 && state.selected < this.model!.sliceCount) {
      view.select(state.selected, false);
    }
    if (state.tab !== undefined) {
      const tabs = this.root.querySelector('vscode-tabs');
      if (tabs) (tabs as HTMLElement & { selectedIndex: number }).selectedIndex = state.tab;
    }
  }

  private saveState(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      const view = this.view;
      if (!view) return;
      this.host.setState({
        source: this.source,
        viewStartNs: view.viewStart,
        viewEndNs: view.viewEnd,
        scrollTop: view.scrollTop,
        selected: view.selected,
        tab: this.tab,
      });
    }, 200);
  }

  private openSource(site: TimelineSite): void {
    const requestId = ++this.requestId;
    this.pending.set(requestId, `${site.file}:${site.line}`);
    this.host.post({ type: 'openSource', requestId, file: site.file, line: site.line });
    if (this.host.standalone) this.setStatus(`${site.file}:${site.line} (${site.function})`);
  }
}

async function embeddedPayload(): Promise<ArrayBuffer | undefined> {
  const node = document.getElementById('flagprof-data');
  if (!node?.textContent) return undefined;
  const binary = atob(node.textContent.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Response(stream).arrayBuffer();
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
