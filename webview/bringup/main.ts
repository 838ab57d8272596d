/**
 * The bring-up view: session header, structural checks with evidence, FLAGOS_TRACE diagnostics grouped by
 * component with filters, and the raw log with search. Everything is built with DOM calls and textContent (the
 * log is untrusted text); colours come from --vscode-* variables in bringup.css.
 */
import './bringup.css';
import type { BringupHostToWebview, BringupView, BringupWebviewToHost } from '../../extension/protocol';
import type { CheckReport, CheckResult, EvidenceEvent } from '../../extension/shared/checks';
import { SEVERITIES, type Diagnostic, type Severity } from '../../extension/shared/diagnostics';
import { visibleText } from '../../extension/shared/text';
import { formatDuration } from '../../extension/shared/format';
import { button, el } from '../dom';

interface VsCodeApi {
  postMessage(message: BringupWebviewToHost): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

interface ViewState {
  showPassed: boolean;
  severities: Severity[];
  component: string;
  text: string;
  logQuery: string;
}

const vscode = acquireVsCodeApi();
const saved = (vscode.getState() ?? {}) as Partial<ViewState>;
const state: ViewState = {
  showPassed: saved.showPassed ?? true,
  severities: saved.severities ?? ['error', 'warning', 'info'],
  component: saved.component ?? '',
  text: saved.text ?? '',
  logQuery: saved.logQuery ?? '',
};
let view: BringupView | undefined;
let logMatch = 0;

function save(): void {
  vscode.setState(state);
}

/** Each change of a filter control updates the state, which is kept and shown. */
function onFilterChange(control: HTMLElement, update: () => void): void {
  control.addEventListener('change', () => {
    update();
    save();
    render();
  });
}

function checkbox(checked: boolean, update: (checked: boolean) => void): HTMLInputElement {
  const box = el('input');
  box.type = 'checkbox';
  box.checked = checked;
  onFilterChange(box, () => update(box.checked));
  return box;
}

const root = document.getElementById('root')!;

function toolbar(): HTMLElement {
  return el(
    'div',
    { className: 'toolbar' },
    button('Open Trace or Session…', () => vscode.postMessage({ type: 'bringup.open' })),
    button('Run Parity Workload', () => vscode.postMessage({ type: 'bringup.runParity' })),
    button(
      'Re-run Checks',
      () => vscode.postMessage({ type: 'bringup.rerun' }),
      'Load the trace again and re-run every check',
    ),
    button(
      'Copy Report',
      () => vscode.postMessage({ type: 'bringup.copyReport' }),
      'Copy a markdown bring-up report to the clipboard',
    ),
  );
}

function row(label: string, value: string | undefined, title?: string): HTMLElement | undefined {
  if (!value) return undefined;
  return el(
    'div',
    { className: 'kv' },
    el('span', { className: 'k', text: label }),
    el('span', { className: 'v', text: value, title: title ?? value }),
  );
}

function headerSection(v: BringupView): HTMLElement {
  const h = v.header;
  const c = v.checks;
  return el(
    'section',
    { className: 'header' },
    el('h2', { text: 'Session' }),
    row('Opened', v.target),
    row(
      'Mode',
      h.mode ? `${h.mode}${h.modeReason ? ` — ${h.modeReason}` : ''}` : 'not recorded (a trace file)',
    ),
    row(
      'Vendor tracer',
      h.tracer ? `${h.tracer}${h.tracerReason ? ` — ${h.tracerReason}` : ''}` : 'no tracer lines',
    ),
    row('Library bound', h.library),
    row('API version', h.apiVersion),
    row('Device', h.device),
    row('torch', h.torch),
    row('Platform', c ? `${c.platform} (${c.platformReason})` : undefined),
    row(
      'Capture window',
      c?.window
        ? `${c.window.source}, ${formatDuration(c.window.endNs - c.window.startNs)}`
        : c
          ? 'none'
          : undefined,
    ),
    row('Baseline', c ? c.baseline.source : undefined),
  );
}

const ICON: Record<CheckResult['status'], string> = { pass: '✓', fail: '✗', skip: '–', info: 'i' };
const STATUS_TITLE: Record<CheckResult['status'], string> = {
  pass: 'passed',
  fail: 'failed',
  skip: 'skipped',
  info: 'differs from torch-cuda by design: not a failure',
};

function evidenceTable(examples: EvidenceEvent[]): HTMLElement | undefined {
  if (examples.length === 0) return undefined;
  const head = el(
    'tr',
    {},
    ...['cat', 'name', 'ts µs', 'dur µs', 'corr', 'ext id', 'note'].map((t) => el('th', { text: t })),
  );
  const body = examples.map((e) =>
    el(
      'tr',
      {},
      el('td', { text: e.cat }),
      el('td', { className: 'name', text: e.name, title: e.name }),
      el('td', { className: 'num', text: String(e.tsUs) }),
      el('td', { className: 'num', text: String(e.durUs) }),
      el('td', { className: 'num', text: e.correlation === undefined ? '' : String(e.correlation) }),
      el('td', { className: 'num', text: e.externalId === undefined ? '' : String(e.externalId) }),
      el('td', { text: e.note ?? '' }),
    ),
  );
  return el('table', { className: 'evidence' }, el('thead', {}, head), el('tbody', {}, ...body));
}

/** One check; a skip whose reason several checks share names the group instead of repeating it. */
function checkItem(r: CheckResult, sharedSkip?: number): HTMLElement {
  const cls = `check ${r.status}${r.status === 'fail' && !r.required ? ' optional' : ''}`;
  const result =
    sharedSkip !== undefined
      ? `skipped: reason (${sharedSkip}) below`
      : r.status === 'info'
        ? `${r.summary} — by design`
        : r.summary;
  const summary = el(
    'summary',
    {},
    el('span', { className: `icon ${r.status}`, text: ICON[r.status], title: STATUS_TITLE[r.status] }),
    el('span', { className: 'id', text: r.id }),
    el('span', { className: 'title', text: r.title }),
    el('span', { className: 'result', text: result }),
  );
  const counts = Object.entries(r.counts);
  const body = el(
    'div',
    { className: 'body' },
    el('div', { className: 'meta', text: `${r.name} · ${r.suite}${r.required ? '' : ' · not required'}` }),
    r.byDesign
      ? el(
          'div',
          { className: 'by-design' },
          el('strong', { text: 'Differs from torch-cuda by design: ' }),
          r.byDesign,
        )
      : undefined,
    r.location
      ? el('div', {
          className: 'meta',
          text: `at ${r.location.file}:${r.location.line}${r.location.op ? ` (${r.location.op})` : ''}`,
        })
      : undefined,
    r.hint ? el('div', { className: 'hint' }, el('strong', { text: 'Fix: ' }), r.hint) : undefined,
    counts.length
      ? el(
          'div',
          { className: 'chips' },
          ...counts.map(([k, v]) => el('span', { className: 'chip', text: `${k} ${v}` })),
        )
      : undefined,
    r.details.length
      ? el('ul', { className: 'details' }, ...r.details.map((d) => el('li', { text: d })))
      : undefined,
    evidenceTable(r.examples),
  );
  const d = el('details', { className: cls }, summary, body);
  if (r.status === 'fail' && r.required) d.open = true;
  return d;
}

function checksSection(v: BringupView): HTMLElement {
  const section = el('section', { className: 'checks' });
  const c = v.checks;
  if (!c) {
    section.append(
      el('h2', { text: 'Checks' }),
      el('p', { className: 'muted', text: 'No trace in this session: only its diagnostics are shown.' }),
    );
    return section;
  }
  const t = c.totals;
  const toggle = checkbox(state.showPassed, (checked) => (state.showPassed = checked));
  section.append(
    el(
      'h2',
      {},
      'Checks ',
      el('span', {
        className: 'totals',
        text: `${t.pass} passed · ${t.fail} failed (${t.requiredFailed} required) · ${t.info ?? 0} by design · ${t.skip} skipped`,
      }),
    ),
    el('label', { className: 'filter' }, toggle, ' show passed, by-design and skipped'),
  );
  const shared = sharedSkips(c);
  const groupOf = new Map<string, number>();
  shared.forEach((g) => g.ids.forEach((id) => groupOf.set(id, g.n)));
  const shown = c.results.filter((r) => state.showPassed || r.status === 'fail');
  for (const suite of ['product', 'parity', 'contract'] as const) {
    const list = shown.filter((r) => r.suite === suite);
    if (!list.length) continue;
    const label =
      suite === 'parity'
        ? 'Parity with torch-cuda (torch_fl profiler.md §5)'
        : suite === 'contract'
          ? 'Cross-backend contract'
          : 'Trace health';
    section.append(el('h3', { text: label }), ...list.map((r) => checkItem(r, groupOf.get(r.id))));
  }
  if (state.showPassed && shared.length)
    section.append(
      el('h3', { text: 'Skipped' }),
      ...shared.map((g) =>
        el(
          'p',
          { className: 'skip-group' },
          el('span', { className: 'id', text: `(${g.n}) ${g.ids.join(', ')}: ` }),
          g.reason,
        ),
      ),
    );
  return section;
}

/** Skip reasons shared by more than one check, numbered for the rows that point at them. */
function sharedSkips(c: CheckReport): { reason: string; ids: string[]; n: number }[] {
  return (c.skipGroups ?? []).filter((g) => g.ids.length > 1).map((g, n) => ({ ...g, n: n + 1 }));
}

function diagnosticsSection(v: BringupView): HTMLElement {
  const section = el('section', { className: 'diagnostics' });
  const s = v.summary;
  section.append(
    el(
      'h2',
      {},
      'FLAGOS_TRACE diagnostics ',
      el('span', {
        className: 'totals',
        text: `${s.bySeverity.error} errors · ${s.bySeverity.warning} warnings · ${s.total} in all`,
      }),
    ),
  );
  if (v.diagnostics.length === 0) {
    section.append(
      el('p', {
        className: 'muted',
        text: v.logPath
          ? 'The log holds no lines.'
          : 'No FLAGOS_TRACE log with this target (a session folder carries diagnostics.jsonl).',
      }),
    );
    return section;
  }
  const lifted = liftedCounts(v);
  if (lifted.length)
    section.append(
      el('div', { className: 'chips' }, ...lifted.map((t) => el('span', { className: 'chip', text: t }))),
    );
  section.append(diagnosticFilters(v));
  for (const [component, list] of shownByComponent(v.diagnostics))
    section.append(diagnosticGroup(component, list));
  if (v.diagnosticsOmitted)
    section.append(
      el('p', {
        className: 'muted',
        text: `${v.diagnosticsOmitted} debug lines not sent to the view (the raw log below has them).`,
      }),
    );
  return section;
}

/** The numbers the log's summary lifted out (events drained, links, window, buffers, drops, enable results). */
function liftedCounts(v: BringupView): string[] {
  const s = v.summary;
  return [
    s.eventsDrained !== undefined ? `events drained ${s.eventsDrained}` : '',
    s.candidates !== undefined
      ? `linked ${s.linked}/${s.candidates}${s.resolver ? ` (resolver ${s.resolver})` : ''}`
      : '',
    s.totalDevice !== undefined ? `in window ${s.inWindow}/${s.totalDevice}` : '',
    s.buffersRequested || s.buffersCompleted
      ? `buffers ${s.buffersRequested} requested / ${s.buffersCompleted} completed`
      : '',
    ...Object.entries(s.recordsDropped).map(([k, n]) => `dropped (${k}) ${n}`),
    ...Object.entries(s.enableResults).map(([k, n]) => `${k}=${n}`),
  ].filter(Boolean);
}

/** Which diagnostics show: by severity, by component, by text. */
function diagnosticFilters(v: BringupView): HTMLElement {
  const s = v.summary;
  const filters = el('div', { className: 'filters' });
  for (const sev of SEVERITIES) {
    const box = checkbox(state.severities.includes(sev), (checked) => {
      state.severities = checked ? [...state.severities, sev] : state.severities.filter((x) => x !== sev);
    });
    filters.append(el('label', { className: `filter sev-${sev}` }, box, ` ${sev} (${s.bySeverity[sev]})`));
  }
  const select = el('select', { title: 'Component' });
  select.append(el('option', { text: 'all components' }));
  select.options[0].value = '';
  for (const [component, n] of Object.entries(s.byComponent)) {
    const o = el('option', { text: `${component} (${n})` });
    o.value = component;
    select.append(o);
  }
  select.value = state.component;
  onFilterChange(select, () => (state.component = select.value));
  const text = el('input', { title: 'Filter by text' });
  text.type = 'search';
  text.placeholder = 'filter';
  text.value = state.text;
  onFilterChange(text, () => (state.text = text.value));
  filters.append(select, text);
  return filters;
}

/** The diagnostics the filters let through, grouped by component in the order they first appear. */
function shownByComponent(diagnostics: Diagnostic[]): Map<string, Diagnostic[]> {
  const needle = state.text.toLowerCase();
  const shown = diagnostics.filter(
    (d) =>
      state.severities.includes(d.severity) &&
      (!state.component || d.component === state.component) &&
      (!needle || d.raw.toLowerCase().includes(needle) || d.message.toLowerCase().includes(needle)),
  );
  const groups = new Map<string, Diagnostic[]>();
  for (const d of shown) groups.set(d.component, [...(groups.get(d.component) ?? []), d]);
  return groups;
}

/** Diagnostics shown per component; the filter narrows a longer list. */
const MAX_GROUP_LINES = 500;

function diagnosticGroup(component: string, list: Diagnostic[]): HTMLElement {
  const group = el(
    'details',
    { className: 'group' },
    el('summary', { text: `${component} (${list.length})` }),
  );
  group.open = true;
  for (const d of list.slice(0, MAX_GROUP_LINES)) group.append(diagnosticLine(d));
  if (list.length > MAX_GROUP_LINES)
    group.append(
      el('p', { className: 'muted', text: `… ${list.length - MAX_GROUP_LINES} more (narrow the filter)` }),
    );
  return group;
}

function diagnosticLine(d: Diagnostic): HTMLElement {
  const line = button(
    `${d.line}`,
    () => vscode.postMessage({ type: 'bringup.openLog', line: d.line }),
    'Open the log at this line',
  );
  line.className = 'line';
  return el(
    'div',
    { className: `diag ${d.severity}` },
    el('span', { className: `sev ${d.severity}`, text: d.severity }),
    el('span', { className: 'code', text: d.code || '·' }),
    line,
    el('span', { className: 'msg', text: d.message }),
    el('pre', { className: 'raw', text: d.raw }),
  );
}

/** Log lines rendered at most; the status says when there are more. */
const MAX_LOG_LINES = 20_000;

function logSection(v: BringupView): HTMLElement {
  const section = el('section', { className: 'log' });
  section.append(el('h2', { text: 'Raw FLAGOS_TRACE log' }));
  if (!v.log) {
    section.append(el('p', { className: 'muted', text: 'No log.' }));
    return section;
  }
  const lines = v.log.split('\n');
  const search = el('input', { title: 'Search the log (regular expression)' });
  search.type = 'search';
  search.placeholder = 'search (regex)';
  search.value = state.logQuery;
  const status = el('span', { className: 'muted' });
  const pre = el('pre', { className: 'logtext' });
  const fill = (): void => {
    pre.replaceChildren();
    const re = logPattern(search);
    const marks: HTMLElement[] = [];
    lines.slice(0, MAX_LOG_LINES).forEach((text, i) => pre.append(logLine(text, i, re, marks)));
    status.textContent = re
      ? `${marks.length} matches`
      : `${lines.length} lines${lines.length > MAX_LOG_LINES ? ` (first ${MAX_LOG_LINES} shown)` : ''}${v.logTruncated ? ', truncated' : ''}`;
    logMatch = Math.min(logMatch, Math.max(0, marks.length - 1));
    marks[logMatch]?.classList.add('current');
    marks[logMatch]?.scrollIntoView({ block: 'nearest' });
    section.dataset.matches = String(marks.length);
  };
  search.addEventListener('input', () => {
    state.logQuery = search.value;
    logMatch = 0;
    save();
    fill();
  });
  const step = (delta: number): void => {
    const n = Number(section.dataset.matches ?? 0);
    if (!n) return;
    logMatch = (logMatch + delta + n) % n;
    fill();
  };
  section.append(
    el(
      'div',
      { className: 'filters' },
      search,
      button('↑', () => step(-1), 'Previous match'),
      button('↓', () => step(1), 'Next match'),
      status,
    ),
    pre,
  );
  fill();
  return section;
}

/** The log search as a pattern, undefined when empty or not a valid regular expression (the box says so). */
function logPattern(search: HTMLInputElement): RegExp | undefined {
  try {
    const re = state.logQuery ? new RegExp(state.logQuery, 'gi') : undefined;
    search.classList.remove('invalid');
    return re;
  } catch {
    search.classList.add('invalid');
    return undefined;
  }
}

/** One log line with its number, the matches of `re` marked (and added to `marks`). */
function logLine(text: string, index: number, re: RegExp | undefined, marks: HTMLElement[]): HTMLElement {
  const line = el('div', { className: 'logline' }, el('span', { className: 'ln', text: String(index + 1) }));
  if (!re) {
    line.append(visibleText(text, Infinity));
    return line;
  }
  let last = 0;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0] === '') {
      re.lastIndex++;
      continue;
    }
    line.append(visibleText(text.slice(last, m.index), Infinity));
    const mark = el('mark', { text: m[0] });
    marks.push(mark);
    line.append(mark);
    last = m.index + m[0].length;
  }
  line.append(visibleText(text.slice(last), Infinity));
  return line;
}

function render(): void {
  root.replaceChildren(toolbar());
  if (!view) {
    root.append(
      el(
        'p',
        { className: 'muted' },
        'Open a trace or a capture session to run the structural parity checks and read the FLAGOS_TRACE diagnostics, or run the parity workload on your device.',
      ),
    );
    return;
  }
  root.append(headerSection(view), checksSection(view), diagnosticsSection(view), logSection(view));
}

window.addEventListener('message', (event: MessageEvent<BringupHostToWebview>) => {
  const m = event.data;
  if (!m || typeof m !== 'object') return;
  switch (m.type) {
    case 'bringup.show':
      view = m.view;
      render();
      break;
    case 'bringup.busy':
      root.replaceChildren(toolbar(), el('p', { className: 'busy', text: m.text }));
      break;
    case 'bringup.error':
      root.replaceChildren(toolbar(), el('p', { className: 'error', text: m.text }));
      break;
    case 'bringup.empty':
      view = undefined;
      render();
      break;
  }
});

render();
vscode.postMessage({ type: 'bringup.ready' });
